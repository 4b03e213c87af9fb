"""Point sets drawn inside compiled programs: Sobol anchors, local anchors and the initial design.

JAX has no Sobol generator, so a scrambled Sobol table is made once on the host
(:func:`sobol_table`, SciPy) and every suggestion draws a fresh point set from it by a random shift
modulo 1 (a Cranley–Patterson rotation, Cranley & Patterson 1976), taken from the suggestion's key:
each shifted set keeps the table's low discrepancy, and the draw is a pure function of the key, so it
runs inside ``jit``, ``lax.scan`` and ``vmap``. BOCK (Oh et al. 2018, §4) asks for a different Sobol
set per suggestion rather than one static grid; a rotation per suggestion is that.
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


def initial_points(key, space, n: int, table, centre: bool = False):
    """The points ``(n, D)`` of a run's initial design, drawn from ``key`` (traceable; a run's design, from
    its settings, is :func:`jbo.loop.initial_design`).

    With ``centre`` the first point is the centre of the unit cube (BOCK's reference code starts
    there, the point its prior assumption favours: Oh et al. 2018, §3) and the rest follow below.
    Unconditional space: the first ``n`` points of the randomly shifted Sobol ``table``.
    Conditional space: first one uniform point per leaf, leaves in a random order (Jenatton et al.
    2017, §4: "one random candidate drawn per conditional path"; a random order so that a design
    shorter than the number of leaves is not biased towards the first ones), then the shifted Sobol
    points. Inactive columns hold the uniform or Sobol values.

    Args:
      key: PRNG key.
      space: a :class:`jbo.spaces.Space` (static).
      n: design size (``<= len(table) + number of leaves``).
      table: ``(T, D)`` Sobol table (:func:`sobol_table`).
      centre: start the design at the centre.
    """
    table = jnp.asarray(table)
    if centre:
        middle = jnp.full((1, table.shape[-1]), 0.5, table.dtype)
        return jnp.concatenate([middle, initial_points(key, space, n, table)])[:n]
    k_shift, k_order, k_leaf = jax.random.split(key, 3)
    sobol = shifted(k_shift, table)
    if not space.is_conditional:
        return sobol[:n]
    template, columns = leaf_templates(space)
    order = jax.random.permutation(k_order, template.shape[0])
    uniform = jax.random.uniform(k_leaf, template.shape, table.dtype)
    leaf_points = jnp.where(jnp.asarray(columns)[order], jnp.asarray(template, table.dtype)[order], uniform)
    return jnp.concatenate([leaf_points, sobol])[:n]
