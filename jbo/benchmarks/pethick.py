r"""The benchmarks of Pethick (2018, "Bayesian optimisation using an ensemble of neural networks")
that the core registry lacks: SinOne and its embeddings, Corana, Dolan and LennardJones6.

Pethick takes his functions from Eggensperger et al. (2013, HPOlib) and from Dewancker et al.
(2016, the SigOpt "evalset", itself drawn from Gavana's global-optimisation benchmarks and Jamil &
Yang 2013). The definitions, domains and optima below are those of the collection he took each
function from; where the collections disagree the choice is stated in the function's docstring.

* **SinOne** (HPOlib, after Kawaguchi et al. 2015): ``0.5 sin(13 x) sin(27 x) + 0.5`` on [0, 1].
* **Embeddings** (Pethick §4.3): the 1-d SinOne embedded into ``d`` dimensions, "the additional
  dimensions have no effect on the function value". His reference implementation (``embed`` in
  ``src/tests.py`` of ensembled-dngo) adds ``A · x_extra`` with one coefficient per extra
  dimension on [0, 1] and shifts the optimum by ``sum(A)`` (he maximises); ``A = 0`` is the
  paper's "no effect" and jbo's default, a nonzero ``weights`` gives his linear variant.
* **Corana** 4-d, **Dolan** 5-d and **LennardJones6** 6-d as in the evalset (Pethick's nonsmooth,
  oscillatory and "mostly boring" examples, §4.4).

Like :mod:`jbo.benchmarks.functions`, every function maps ``(..., dim)`` to ``(...)`` in the dtype
of its input and composes with ``jit``, ``vmap`` and ``grad``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jbo.benchmarks.functions import _float
from jbo.benchmarks.problem import Problem, _box, _fixed_dim, _var_dim

__all__ = [
    "sinone",
    "embed",
    "corana",
    "dolan",
    "lennard_jones6",
    "SINONE_ARGMIN",
    "SINONE_OPTIMUM",
    "LENNARD_JONES6_DISTANCE",
    "PROBLEMS",
]

# --------------------------------------------------------------------------------------------
# SinOne and embeddings
# --------------------------------------------------------------------------------------------
#: Minimiser of SinOne on [0, 1], a root of its derivative solved to machine precision (HPOlib
#: quotes the grid value 0.6330131633013163). It is the only global minimiser: the next-lowest
#: local minimum is 0.0937 at x = 0.1637.
SINONE_ARGMIN = 0.6330131650828729
SINONE_OPTIMUM = 0.042926342433643294


def sinone(x):
    """SinOne (HPOlib; Kawaguchi et al. 2015): ``0.5 sin(13 x) sin(27 x) + 0.5`` of ``x[..., 0]``.

    Args:
      x: ``(..., 1)`` points in [0, 1]; further coordinates are ignored (see :func:`embed`).
    Returns:
      ``(...)`` values; minimum 0.0429263424 at x = 0.6330131651.
    """
    x = _float(x)[..., 0]
    return 0.5 * jnp.sin(13.0 * x) * jnp.sin(27.0 * x) + 0.5


def embed(fn: Callable, native_dim: int, weights=None) -> Callable:
    """Embed ``fn`` of ``native_dim`` coordinates into more dimensions (Pethick 2018, §4.3).

    ``g(x) = fn(x[..., :native_dim]) + x[..., native_dim:] @ weights``: the extra coordinates, each
    on [0, 1], have no effect with the default ``weights = 0`` (the paper's definition) and a
    linear one otherwise (the coefficients ``A`` of his reference implementation).

    Args:
      fn: vectorised function ``(..., native_dim) -> (...)``.
      native_dim: number of leading coordinates ``fn`` reads.
      weights: ``(extra,)`` linear coefficients of the extra coordinates, or ``None`` (zeros, any
        number of extra coordinates).
    Returns:
      The vectorised embedded function.
    """
    w = None if weights is None else np.asarray(weights, dtype=np.float64)

    def g(x):
        x = _float(x)
        value = fn(x[..., :native_dim])
        if w is None:
            return value
        extra = x[..., native_dim:]
        if extra.shape[-1] != w.shape[0]:
            raise ValueError(f"weights has {w.shape[0]} entries for {extra.shape[-1]} extra dimensions")
        return value + extra @ jnp.asarray(w, x.dtype)

    g.__name__ = f"embedded_{getattr(fn, '__name__', 'fn')}"
    return g


# --------------------------------------------------------------------------------------------
# Corana, Dolan, Lennard-Jones
# --------------------------------------------------------------------------------------------
_CORANA_D = np.array([1.0, 1000.0, 10.0, 100.0])


def corana(x):
    r"""Corana's parabola (Storn & Price 1997, eq. 22; evalset / Gavana), 4-d.

    With ``z_i = 0.2 floor(|x_i| / 0.2 + 0.49999) sgn(x_i)`` (the nearest point of a 0.2 grid) and
    ``d = (1, 1000, 10, 100)``, each coordinate contributes ``0.15 d_i (z_i - 0.05 sgn z_i)^2`` when
    ``|x_i - z_i| < 0.05`` (a flat, lowered plateau around each grid point) and ``d_i x_i^2``
    otherwise. The minimum 0 is attained on the whole plateau ``|x_i| < 0.05`` around the origin.

    Args:
      x: ``(..., 4)`` points (domain [-5, 5]^4).
    Returns:
      ``(...)`` values.
    """
    x = _float(x)
    d = jnp.asarray(_CORANA_D, x.dtype)
    z = 0.2 * jnp.floor(jnp.abs(x) / 0.2 + 0.49999) * jnp.sign(x)
    plateau = 0.15 * d * (z - 0.05 * jnp.sign(z)) ** 2
    return jnp.sum(jnp.where(jnp.abs(x - z) < 0.05, plateau, d * x**2), axis=-1)


def dolan(x):
    r"""Dolan (Gavana; evalset), 5-d:
    ``|(x_1 + 1.7 x_2) sin x_1 - 1.5 x_3 - 0.1 x_4 cos(x_4 + x_5 - x_1) + 0.2 x_5^2 - x_2 - 1|``.

    The cosine's argument is ``x_4 + x_5 - x_1`` as in both collections' code (Gavana's formula
    prints ``x_5 + x_5``; Jamil & Yang drop the absolute value). The minimum 0 is attained on the
    4-d zero set of the inner expression, e.g. at (0, -1, 0, 0, 0).

    Args:
      x: ``(..., 5)`` points.
    Returns:
      ``(...)`` values.
    """
    x = _float(x)
    x1, x2, x3, x4, x5 = (x[..., i] for i in range(5))
    inner = (x1 + 1.7 * x2) * jnp.sin(x1) - 1.5 * x3 - 0.1 * x4 * jnp.cos(x4 + x5 - x1) + 0.2 * x5**2 - x2 - 1.0
    return jnp.abs(inner)


#: Lennard-Jones pair distance of the minimum: ``r^6 + 1e-8 = 1``.
LENNARD_JONES6_DISTANCE = (1.0 - 1e-8) ** (1.0 / 6.0)


def lennard_jones6(x):
    r"""Lennard-Jones potential of two atoms in 3-d (evalset's ``LennardJones6``), 6-d.

    With ``u = r^6 + 10^{-8}`` for the squared-distance ``r^2 = |x_{1:3} - x_{4:6}|^2``, the energy
    is ``min(0, (1/u - 2) / u)``, and 0 when the atoms coincide. The ``10^{-8}`` and the clip at 0
    are the evalset's (Gavana's ``LennardJones`` has neither): the clip flattens the repulsive core,
    which is what makes the function "mostly boring". Since ``(1/u - 2)/u + 1 = (1 - u)^2 / u^2``,
    the minimum is -1, at every pair of points at distance ``(1 - 10^{-8})^{1/6}``.

    Args:
      x: ``(..., 6)`` points (domain [-3, 3]^6).
    Returns:
      ``(...)`` values in [-1, 0].
    """
    x = _float(x)
    r2 = jnp.sum((x[..., :3] - x[..., 3:6]) ** 2, axis=-1)
    u = r2**3 + 1e-8
    energy = (1.0 / u - 2.0) / u
    return jnp.where(r2 > 0.0, jnp.minimum(energy, 0.0), jnp.zeros_like(r2))


# --------------------------------------------------------------------------------------------
# problems
# --------------------------------------------------------------------------------------------
_sinone = jax.jit(sinone)
_corana = jax.jit(corana)
_dolan = jax.jit(dolan)
_lennard_jones6 = jax.jit(lennard_jones6)

#: Dolan's two published domains: the evalset's (Dewancker et al. 2016, what Pethick ran) and
#: Gavana's / Jamil & Yang's.
DOLAN_DOMAINS = {"evalset": (-100.0, 20.0), "gavana": (-100.0, 100.0)}


def sinone_problem(dim: int | None = None, *, weights=None) -> Problem:
    """SinOne on [0, 1] (default d = 1); ``dim`` = 2, 3, 4 are Pethick's embeddings (any d >= 1).

    The extra coordinates live on [0, 1] and have no effect unless ``weights`` (``d - 1`` linear
    coefficients, Pethick's reference implementation) are given; the optimum is then shifted by
    ``sum(min(w_i, 0))``, attained with ``x_i = 0`` where ``w_i > 0`` and ``x_i = 1`` where
    ``w_i < 0``. With no effect every value of an extra coordinate is optimal: ``argmins`` lists
    the minimiser with each free extra coordinate in {0.5, 0, 1} (3^(free) rows, centre first).
    """
    d = _var_dim("sinone", dim, 1)
    extra = d - 1
    w = np.zeros(extra) if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.shape[0] != extra:
        raise ValueError(f"sinone: weights must have dim - 1 = {extra} entries, got {w.shape[0]}")
    if not np.all(np.isfinite(w)):
        raise ValueError("sinone: weights must be finite")
    if weights is None or not np.any(w):
        fn = _sinone
    else:
        fn = jax.jit(embed(sinone, 1, w))
    choices = [(0.0,) if wi > 0 else (1.0,) if wi < 0 else (0.5, 0.0, 1.0) for wi in w]
    rows = [(SINONE_ARGMIN,) + combo for combo in itertools.product(*choices)]
    optimum = SINONE_OPTIMUM + float(np.minimum(w, 0.0).sum())
    return Problem("sinone", fn, _box(0.0, 1.0, d), optimum, np.array(rows, dtype=np.float64))


def corana_problem(dim: int | None = None) -> Problem:
    """Corana on [-5, 5]^4: 0 on the plateau |x_i| < 0.05 around the origin.

    ``argmins``: the origin, then the 16 corners of the box |x_i| <= 0.04 inside that plateau.
    """
    _fixed_dim("corana", 4, dim)
    corners = np.array(list(itertools.product((-0.04, 0.04), repeat=4)))
    return Problem("corana", _corana, _box(-5.0, 5.0, 4), 0.0, np.vstack([np.zeros((1, 4)), corners]))


def _dolan_zero(x1, x2, x4, x5):
    """The x_3 at which Dolan's inner expression vanishes, given the other coordinates."""
    return ((x1 + 1.7 * x2) * np.sin(x1) - 0.1 * x4 * np.cos(x4 + x5 - x1) + 0.2 * x5**2 - x2 - 1.0) / 1.5


def dolan_problem(dim: int | None = None, *, domain: str = "evalset") -> Problem:
    """Dolan, 5-d, on the evalset's [-100, 20]^5 (default; Pethick's source) or Gavana's
    [-100, 100]^5 (``domain="gavana"``): minimum 0 on a 4-d manifold.

    ``argmins``: (0, -1, 0, 0, 0), where the inner expression is exactly 0 in floating point,
    then points of the zero set found by solving for x_3 (it enters linearly) at a few settings
    of the other coordinates inside the domain.
    """
    _fixed_dim("dolan", 5, dim)
    if domain not in DOLAN_DOMAINS:
        raise ValueError(f"dolan: domain must be one of {sorted(DOLAN_DOMAINS)}, got {domain!r}")
    lo, hi = DOLAN_DOMAINS[domain]
    rows = [[0.0, -1.0, 0.0, 0.0, 0.0]]
    for x1, x2, x4, x5 in [(1.0, 2.0, -3.0, 4.0), (-10.0, 5.0, 10.0, -5.0), (-50.0, -20.0, 15.0, 0.5)]:
        rows.append([x1, x2, _dolan_zero(x1, x2, x4, x5), x4, x5])
    argmins = np.array(rows)
    assert np.all((argmins >= lo) & (argmins <= hi)), "Dolan minimisers must lie in the domain"
    return Problem("dolan", _dolan, _box(lo, hi, 5), 0.0, argmins)


def lennard_jones6_problem(dim: int | None = None) -> Problem:
    """LennardJones6 on [-3, 3]^6: -1 at every pair of atoms at distance (1 - 1e-8)^(1/6).

    ``argmins``: the first atom at the origin and the second on each of the six axis directions,
    then the evalset's published minimiser moved onto the exact distance.
    """
    _fixed_dim("lennard_jones6", 6, dim)
    r = LENNARD_JONES6_DISTANCE
    rows = [np.concatenate([np.zeros(3), s * r * np.eye(3)[i]]) for s in (1.0, -1.0) for i in range(3)]
    a = np.array([-2.66666470373, 2.73904387714, 1.42304625988])
    b = np.array([-1.95553276732, 2.81714839844, 2.12175295546])
    rows.append(np.concatenate([a, a + r * (b - a) / np.linalg.norm(b - a)]))
    return Problem("lennard_jones6", _lennard_jones6, _box(-3.0, 3.0, 6), -1.0, np.array(rows))


PROBLEMS: dict[str, Callable[..., Problem]] = {
    "sinone": sinone_problem,
    "corana": corana_problem,
    "dolan": dolan_problem,
    "lennard_jones6": lennard_jones6_problem,
}
