r"""Random instances of a box problem with the same known optimum: :func:`shifted_rotated`.

Most test functions have their minimiser at the centre of the box, on its diagonal or at a point
with equal coordinates, and are separable or axis-aligned; a method that samples the centre first
or searches along the axes gains from that. ``shifted_rotated(problem, key)`` moves the minimiser
to a random place in the box and turns the function by a random orthogonal matrix, keeping the
box, the optimum value and the knowledge of where the optimum is:

.. math::  g(x) = f\bigl(c + R\,(x - s)\bigr)

with ``c`` the problem's first (canonical) minimiser, ``R`` a Haar-random orthogonal matrix and
``s`` a uniformly random point of the box. The image of ``s`` is exactly ``c``, so
``g(s) = f(c) = f*`` and the new minimiser ``s`` lies in the box; the image of the box, a rotated
copy of it placed so that ``s`` falls on ``c``, generally reaches outside the original domain. What happens there (``outside``):

* ``"extend"``: evaluate ``f``'s formula there as it stands. That keeps ``f*`` the minimum only
  where ``f*`` is the minimum of ``f`` over all of R^d; :data:`GLOBAL_ON_RD` lists the registry's
  problems for which that holds (with the reason), and only those accept ``"extend"``.
* ``"clip"``: clip the image into the original box coordinate by coordinate,
  ``g(x) = f(clip(c + R (x - s), low, high))``. The minimum is then ``f*`` for every problem, at
  the price of flat stretches (in the clipped coordinates) where the image leaves the box. It is
  what the functions that go lower outside their box need (Schwefel, Michalewicz, Eggholder,
  Hölder table, cross-in-tray, McCormick, Forrester, Gramacy & Lee, SinOne) and the default for
  any problem not in :data:`GLOBAL_ON_RD`.

Every random choice comes from the ``jax.random`` key (drawn by NumPy from the key's bits, see
:func:`random_shift_rotation`): the same key gives the same instance, with or without
``jax_enable_x64``.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jbo.benchmarks.functions import _float
from jbo.benchmarks.problem import Problem

__all__ = ["GLOBAL_ON_RD", "haar_orthogonal", "random_shift_rotation", "shifted_rotated"]

#: Registry problems whose known optimum is their minimum over all of R^d, so that evaluating
#: them outside their box (``outside="extend"``) cannot go below it. Why, by group:
#: sums of non-negative terms with f* = 0 (Rastrigin, Levy, Zakharov, ...: each term >= 0;
#: Matyas, Colville: positive semi-definite quadratic parts; three-hump camel: its minimum over x2
#: is t (1.75 - 1.05 t + t^2 / 6) >= 0 in t = x1^2); Griewank (prod cos <= 1), Ackley (each
#: exponential term is below its value at the origin); bounded below by f* by construction
#: (Branin >= 10 t, Easom and drop-wave >= -1, LennardJones6 >= -1, Goldstein-Price: a product
#: of factors >= 1 and >= 3); Hartmann and Shekel: moving a point into the box, coordinate by
#: coordinate, moves it nearer to every centre (all inside the box), so it lowers the value;
#: convex (Trid), separable with a global one-dimensional minimum (Styblinski-Tang), coercive with
#: all stationary points in the box (six-hump camel), periodic (Shubert); block means of these
#: (the repeated problems); the BBOB/CEC classics (bent cigar, discus, elliptic, Schaffer F7,
#: Salomon, Qing: sums of non-negative terms; Weierstrass: each term at its least at the
#: integers; HappyCat: see its docstring).
GLOBAL_ON_RD = frozenset(
    {
        "ackley", "alpine01", "beale", "bent_cigar", "booth", "branin", "bukin6", "colville",
        "corana", "discus", "dixon_price", "dolan", "drop_wave", "easom", "elliptic",
        "goldstein_price", "griewank", "happy_cat", "hartmann3", "hartmann6", "lennard_jones6",
        "levy", "levy13", "matyas", "powell", "qing", "rastrigin", "repeated_branin",
        "repeated_hartmann6", "rosenbrock", "rotated_hyper_ellipsoid", "salomon", "schaffer_f7",
        "shekel5", "shekel7", "shekel10", "shubert", "six_hump_camel", "sphere", "styblinski_tang",
        "sum_of_different_powers", "sum_squares", "three_hump_camel", "trid", "weierstrass",
        "zakharov",
    }
)  # fmt: skip


_STREAM = 0x6A626F  # the instances' own NumPy stream (see _generator)


def _generator(key) -> np.random.Generator:
    """A NumPy generator seeded with the bits of one ``jax.random`` key (typed or raw uint32).

    The instance's parameters are host-side NumPy arrays, so they are drawn by NumPy from the
    key's data: the same key gives the same draws, in float64 whatever ``jax_enable_x64`` says,
    and no JAX sampler has to be compiled for each new dimension.
    """
    data = np.asarray(jax.random.key_data(key), dtype=np.uint32)
    if data.ndim != 1:
        raise ValueError(f"expected a single jax.random key, got key data of shape {data.shape}")
    # Tagged: the key of seed s holds the words [0, s], and NumPy seeded with [0, s] draws what NumPy seeded
    # with s draws; untagged, a random search seeded with s started at the instance's minimiser.
    return np.random.default_rng(np.random.SeedSequence(data, spawn_key=(_STREAM,)))


def _haar(rng: np.random.Generator, dim: int) -> np.ndarray:
    a = rng.standard_normal((dim, dim))
    q, r = np.linalg.qr(a)
    return q * np.where(np.diag(r) < 0.0, -1.0, 1.0)


def haar_orthogonal(key, dim: int) -> np.ndarray:
    """A ``(dim, dim)`` orthogonal matrix drawn from the Haar (uniform) measure on O(dim).

    The Q factor of the QR decomposition of a standard normal matrix, its columns' signs fixed so
    that R has a positive diagonal (Mezzadri 2007, "How to generate random matrices from the
    classical compact groups"); without that fix Q is not Haar-distributed. Its determinant is +1
    or -1 with probability 1/2 each. Drawn by NumPy from the key's data (the same key gives the
    same matrix).
    """
    return _haar(_generator(key), dim)


def random_shift_rotation(bounds, key, *, margin: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The random choices of :func:`shifted_rotated`: ``(s, R)`` for a box ``bounds`` ``(d, 2)``.

    From one NumPy generator seeded with the key's data: first ``u`` uniform on [0, 1)^d and
    ``s = low + width (margin + (1 - 2 margin) u)``, then ``R`` as in :func:`haar_orthogonal`
    (a different matrix from ``haar_orthogonal(key, d)``, which starts the stream afresh).
    Both float64 NumPy arrays.
    """
    bounds = np.asarray(bounds, dtype=np.float64)
    low, high = bounds[:, 0], bounds[:, 1]
    d = bounds.shape[0]
    rng = _generator(key)
    u = rng.random(d)
    shift = np.clip(low + (high - low) * (margin + (1.0 - 2.0 * margin) * u), low, high)
    return shift, _haar(rng, d)


@functools.partial(jax.jit, static_argnames=("fn", "clip"))
def _evaluate(fn, clip: bool, rotation, shift, centre, low, high, x):
    """``fn(centre + rotation @ (x - shift))``, clipped into [low, high] when ``clip``."""
    x = _float(x)
    dtype = x.dtype
    y = centre.astype(dtype) + jnp.matmul(
        x - shift.astype(dtype), rotation.astype(dtype).T, precision=jax.lax.Precision.HIGHEST
    )
    if clip:
        y = jnp.clip(y, low.astype(dtype), high.astype(dtype))
    return fn(y)


def shifted_rotated(problem: Problem, key, *, outside: str | None = None, margin: float = 0.0) -> Problem:
    """A random shifted and rotated instance of a box problem, with the same optimum value.

    ``g(x) = f(c + R (x - s))`` (``outside="extend"``) or ``f(clip(c + R (x - s), low, high))``
    (``outside="clip"``), where ``c = problem.argmins[0]``, ``R`` is :func:`haar_orthogonal` and
    ``s`` is uniform on the box shrunk by ``margin`` times its width on each side (both drawn by
    :func:`random_shift_rotation`). See the module docstring for the choice of ``outside``. The
    instance's ``fn`` is one jitted program per base function, with ``s``, ``R`` and ``c`` as its
    arguments: instances drawn with different keys share its compilation.

    Args:
      problem: a box :class:`~jbo.benchmarks.problem.Problem` (not a conditional one).
      key: a ``jax.random`` key; the same key gives the same instance (``s`` and ``R``).
      outside: ``"extend"``, ``"clip"`` or ``None``: ``"extend"`` for the problems in
        :data:`GLOBAL_ON_RD`, ``"clip"`` otherwise.
      margin: keep the new minimiser at least this fraction of each side's width from the faces
        of the box, in [0, 0.5); default 0 (anywhere in the box).
    Returns:
      A :class:`~jbo.benchmarks.problem.Problem` named ``"{name}_shifted_rotated"`` on the same
      bounds with the same ``optimum``. Its ``argmins`` are ``s`` (first; its image is exactly
      ``c``), then the images ``s + R^T (a - c)`` of the problem's other ``argmins``
      ``a`` that fall in the box. With ``"extend"``, minimisers of ``f`` outside its box (Branin
      and Alpine N.1 have them, Shubert infinitely many) may have images in the box that are not
      listed; with ``"clip"``, neither are the points whose clipped image is a minimiser on the
      boundary of the box (Eggholder's).
    Raises:
      TypeError: for anything but a :class:`Problem`.
      ValueError: for an unknown ``outside``, ``"extend"`` on a problem outside
        :data:`GLOBAL_ON_RD`, or a ``margin`` outside [0, 0.5).
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"shifted_rotated needs a box Problem, got {type(problem).__name__}")
    if outside is None:
        outside = "extend" if problem.name in GLOBAL_ON_RD else "clip"
    if outside not in ("extend", "clip"):
        raise ValueError(f"outside must be 'extend' or 'clip', got {outside!r}")
    if outside == "extend" and problem.name not in GLOBAL_ON_RD:
        raise ValueError(
            f"{problem.name}: its optimum is not known to be its minimum on all of R^d, so points"
            " outside its box could go below it; use outside='clip'"
        )
    if not 0.0 <= float(margin) < 0.5:
        raise ValueError(f"margin must be in [0, 0.5), got {margin!r}")
    bounds = np.asarray(problem.bounds, dtype=np.float64)
    low, high = bounds[:, 0], bounds[:, 1]
    centre = np.asarray(problem.argmins, dtype=np.float64)[0]
    shift, rotation = random_shift_rotation(bounds, key, margin=margin)

    others = (np.asarray(problem.argmins[1:], dtype=np.float64) - centre) @ rotation + shift
    others = others[np.all((others >= low) & (others <= high), axis=1)]
    argmins = np.vstack([shift[None], others])

    fn = functools.partial(_evaluate, problem.fn, outside == "clip", rotation, shift, centre, low, high)
    return Problem(f"{problem.name}_shifted_rotated", fn, bounds.copy(), problem.optimum, argmins)
