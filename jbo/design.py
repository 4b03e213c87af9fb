"""Point sets drawn inside compiled programs: Sobol anchors, local anchors and the initial design.

JAX has no Sobol generator, so the Sobol points are made once on the host (SciPy) and every draw is a
pure function of a key, so it runs inside ``jit``, ``lax.scan`` and ``vmap``:

* anchors: a scrambled table (:func:`sobol_table`) shifted modulo 1 by a random vector per suggestion
  (a Cranley–Patterson rotation, Cranley & Patterson 1976), which keeps the table's low discrepancy.
  BOCK (Oh et al. 2018, §4) asks for a different Sobol set per suggestion rather than one static grid;
  a rotation per suggestion is that.
* the initial design: the unscrambled Sobol integers (:func:`sobol_integers`) scrambled afresh per run
  (:func:`scrambled`: a random linear matrix scramble and a digital shift, as SciPy's ``scramble=True``).
  A rotation of one shared table would give every run the same few design points up to a translation
  on the torus, so that the runs of a study would start from one pattern rather than independent ones.
"""

from __future__ import annotations

import functools
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np


@functools.lru_cache(maxsize=32)
def _table(n: int, dim: int, seed: int) -> np.ndarray:
    from scipy.stats import qmc

    m = max(0, math.ceil(math.log2(max(n, 1))))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*balance properties.*")
        points = qmc.Sobol(d=dim, scramble=True, rng=seed).random_base2(m)
    points = np.asarray(points[:n], np.float64)
    points.setflags(write=False)
    return points


#: Binary digits of the Sobol integers (:func:`sobol_integers`; SciPy's default precision).
SOBOL_BITS = 30


@functools.lru_cache(maxsize=32)
def _integers(n: int, dim: int) -> np.ndarray:
    from scipy.stats import qmc

    m = max(0, math.ceil(math.log2(max(n, 1))))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*balance properties.*")
        points = qmc.Sobol(d=dim, scramble=False, bits=SOBOL_BITS).random_base2(m)
    integers = np.asarray(np.round(points[:n] * 2.0**SOBOL_BITS), np.uint32)
    integers.setflags(write=False)
    return integers


def sobol_integers(n: int, dim: int) -> np.ndarray:
    """The first ``n`` points ``(n, dim)`` of the unscrambled Sobol sequence as :data:`SOBOL_BITS`-bit integers
    (``uint32``, read-only, cached): point ``i`` coordinate ``j`` is ``integers[i, j] / 2**SOBOL_BITS``."""
    if n < 0 or dim < 1:
        raise ValueError(f"sobol_integers needs n >= 0 and dim >= 1, got n={n}, dim={dim}")
    return _integers(int(n), int(dim))


def scrambled(key, integers, dtype=jnp.float64):
    r"""A randomly scrambled copy of Sobol points (traceable): Matoušek's (1998) random linear matrix scramble
    followed by a random digital shift, the scrambling of SciPy's ``qmc.Sobol(scramble=True)``.

    Coordinate :math:`j` of a point, with binary digits :math:`b = (b_1, b_2, \dots)` (most significant first),
    becomes :math:`M_j b \oplus e_j` (mod 2), :math:`M_j` a random lower-triangular binary matrix with a unit
    diagonal and :math:`e_j` random digits, both drawn from ``key``. Each digit of the result depends on the digits
    at or above it only, so every dyadic box keeps its count of points: the set stays a digital net, as
    well spread as the unscrambled one, while its geometry is new for every key.

    Args:
      key: PRNG key.
      integers: ``(n, D)`` Sobol integers (:func:`sobol_integers`).
      dtype: the result's floating dtype.
    Returns:
      ``(n, D)`` points in ``[0, 1)``.
    """
    integers = jnp.asarray(integers, jnp.uint32)
    dim, bits = integers.shape[-1], SOBOL_BITS
    k_matrix, k_shift = jax.random.split(key)
    full = jnp.uint32((1 << bits) - 1)
    digit = jnp.uint32(1) << jnp.arange(bits - 1, -1, -1, dtype=jnp.uint32)  # digit i's bit, i = 1, 2, ...
    above = full & ~((digit << 1) - 1)  # the digits more significant than digit i
    rows = (jax.random.bits(k_matrix, (dim, bits), jnp.uint32) & above) | digit  # row i of each M_j, as a mask
    parity = jax.lax.population_count(integers[..., :, None] & rows) & 1  # (n, D, bits): digit i of M_j b
    linear = jnp.sum(parity * digit, axis=-1, dtype=jnp.uint32)
    shift = jax.random.bits(k_shift, (dim,), jnp.uint32) & full
    return (linear ^ shift).astype(dtype) * (2.0**-bits)


def sobol_table(n: int, dim: int, seed: int = 0) -> np.ndarray:
    """The first ``n`` points ``(n, dim)`` of a scrambled Sobol sequence (read-only, cached).

    Args:
      n: number of points (a power of two keeps the set balanced; other ``n`` take a prefix).
      dim: dimension.
      seed: scrambling seed.
    """
    if n < 0 or dim < 1:
        raise ValueError(f"sobol_table needs n >= 0 and dim >= 1, got n={n}, dim={dim}")
    return _table(int(n), int(dim), int(seed))


def shifted(key, table):
    """``(table + u) mod 1`` for one uniform shift ``u ~ U[0, 1)^D`` drawn from ``key`` (traceable)."""
    table = jnp.asarray(table)
    shift = jax.random.uniform(key, table.shape[-1:], table.dtype)
    return jnp.mod(table + shift, 1.0)


def local_points(key, centres, valid, num: int, scale: float):
    """``num`` Gaussian perturbations (sd ``scale``) of rows of ``centres`` picked uniformly among the
    ``valid`` ones, clipped to the unit cube (traceable).

    Args:
      key: PRNG key.
      centres: ``(k, D)`` candidate centres; valid: ``(k,)`` bool (at least one should be true; if none
        is, all are used).
      num: number of points; scale: standard deviation in unit-cube units.
    Returns:
      ``(num, D)``.
    """
    centres = jnp.asarray(centres)
    if num == 0:
        return jnp.zeros((0, centres.shape[-1]), centres.dtype)
    valid = jnp.asarray(valid) | ~jnp.any(jnp.asarray(valid))
    k_pick, k_noise = jax.random.split(key)
    logits = jnp.where(valid, 0.0, -jnp.inf)
    picks = jax.random.categorical(k_pick, logits, shape=(num,))
    noise = scale * jax.random.normal(k_noise, (num, centres.shape[-1]), centres.dtype)
    return jnp.clip(centres[picks] + noise, 0.0, 1.0)


def best_rows(x, y, mask, k: int = 5):
    """The ``min(k, N)`` rows of ``x`` with the smallest ``y`` among the ``mask``-ed ones, and which of them are real."""
    values = jnp.where(mask, y, jnp.inf)
    _, index = jax.lax.top_k(-values, min(k, values.shape[0]))
    return x[index], jnp.isfinite(values[index])


def leaf_templates(space) -> tuple[np.ndarray, np.ndarray]:
    """Each leaf's decision columns: ``(L, D)`` encoded decision values and ``(L, D)`` bool columns.

    A unit-cube point with leaf ``p``'s template written into its decision columns belongs to leaf
    ``p``. An unconditional space has one leaf and no decision columns.
    """
    leaves = space.leaves()
    template = np.zeros((len(leaves), space.dim))
    columns = np.zeros((len(leaves), space.dim), bool)
    for p, leaf in enumerate(leaves):
        for name, value in leaf:
            sl = space.columns[name]
            template[p, sl] = space.params[name].encode(value)
            columns[p, sl] = True
    return template, columns


def initial_points(key, space, n: int, integers, centre: bool = False, dtype=jnp.float64):
    """The points ``(n, D)`` of a run's initial design, drawn from ``key`` (traceable; a run's design, from
    its settings, is :func:`jbo.loop.initial_design`).

    With ``centre`` the first point is the centre of the unit cube (BOCK's reference code starts
    there, the point its prior assumption favours: Oh et al. 2018, §3) and the rest follow below.
    Unconditional space: the first ``n`` points of the Sobol set scrambled by ``key`` (:func:`scrambled`).
    Conditional space: first one uniform point per leaf, leaves in a random order (Jenatton et al.
    2017, §4: "one random candidate drawn per conditional path"; a random order so that a design
    shorter than the number of leaves is not biased towards the first ones), then the scrambled Sobol
    points. Inactive columns hold the uniform or Sobol values.

    Args:
      key: PRNG key.
      space: a :class:`jbo.spaces.Space` (static).
      n: design size (``<= len(integers) + number of leaves``).
      integers: ``(T, D)`` Sobol integers (:func:`sobol_integers`).
      centre: start the design at the centre.
      dtype: the points' floating dtype.
    """
    if centre:
        middle = jnp.full((1, integers.shape[-1]), 0.5, dtype)
        return jnp.concatenate([middle, initial_points(key, space, n, integers, dtype=dtype)])[:n]
    k_scramble, k_order, k_leaf = jax.random.split(key, 3)
    sobol = scrambled(k_scramble, integers, dtype)
    if not space.is_conditional:
        return sobol[:n]
    template, columns = leaf_templates(space)
    order = jax.random.permutation(k_order, template.shape[0])
    uniform = jax.random.uniform(k_leaf, template.shape, dtype)
    leaf_points = jnp.where(jnp.asarray(columns)[order], jnp.asarray(template, dtype)[order], uniform)
    return jnp.concatenate([leaf_points, sobol])[:n]
