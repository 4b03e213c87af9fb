r"""Escaping a converged basin: search elsewhere once EI only refines the incumbent.

Expected improvement with a stationary GP commits to the first good basin it finds. Once the
incumbent has converged, its suggestions cluster around it and improve nothing; and where the model
has fitted long lengthscales around that basin it is confidently wrong about the rest of the space,
so no acquisition of the same model, EI, UCB or Thompson sampling, goes there (BENCHMARKS.md, the
core_quality notes: on Hartmann6, a quarter of the runs spend their last 60 evaluations at the local
minimum −3.2031).

The rule here spends those evaluations on a second search. Distances are measured in the model's
lengthscales :math:`\ell` (geometric mean over the hyperparameter samples), so "near" means
"strongly correlated under the model": the neighbourhood of the incumbent :math:`x^*` is

.. math:: B = \{x : \lVert (x - x^*) / \ell \rVert_2 \le r\}.

* **Stall**: since the last improvement of the best value by more than ``tolerance`` (standardised
  units), at least ``patience`` suggestions fell within ``near`` lengthscales (default one) of
  :math:`x^*`.
* **Escape**: the next ``steps`` suggestions (per ``patience`` such suggestions, so that the
  incumbent is refined again in between) maximise the acquisition over the complement of :math:`B`,
  with the incumbent replaced by the best observation outside :math:`B`: a local search of the
  second-best region (a basin the model does not believe in is only found by descending into it).
  The escape ends as soon as the best value improves.

A new incumbent found in another basin then takes over through the ordinary acquisition.

Off by default (``Settings.escape``): on Hartmann6 it lowers the rate of runs trapped at −3.2031, but
on Levy, Alpine01 and Hartmann3 the evaluations it moves away from the incumbent cost more than the
basins it finds (BENCHMARKS.md, sections core_quality and escape_ablation).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbo.optimize import local_anchors


class EscapeConfig(NamedTuple):
    """When and how a stalled search escapes the incumbent's basin.

    Attributes:
      patience: suggestions within one lengthscale of the incumbent, since the last improvement, that
        mark the search as stalled.
      steps: escape suggestions allowed per ``patience`` stalled suggestions.
      radius: radius of the excluded neighbourhood of the incumbent, in lengthscales.
      tolerance: the smallest improvement of the best value (standardised units) that ends a stall.
      near: distance to the incumbent, in lengthscales, within which a suggestion counts as re-sampling it.
    """

    patience: int = 5
    steps: int = 20
    radius: float = 2.0
    tolerance: float = 1e-3
    near: float = 1.0

    @classmethod
    def create(cls, **fields) -> "EscapeConfig":
        """Validated construction; errors name the field."""
        unknown = sorted(set(fields) - set(cls._fields))
        if unknown:
            raise ValueError(f"unknown escape option(s) {unknown}; valid: {list(cls._fields)}")
        config = cls(**fields)
        for field in ("patience", "steps"):
            value = getattr(config, field)
            if isinstance(value, bool) or int(value) != value or value < 1:
                raise ValueError(f"escape.{field} must be a positive integer, got {value!r}")
        for field in ("radius", "tolerance", "near"):
            value = getattr(config, field)
            if isinstance(value, bool) or not np.isfinite(value) or value <= 0:
                raise ValueError(f"escape.{field} must be a positive number, got {value!r}")
        return config._replace(patience=int(config.patience), steps=int(config.steps),
                               radius=float(config.radius), tolerance=float(config.tolerance),
                               near=float(config.near))


def lengthscales(params: Any) -> np.ndarray | None:
    """Geometric mean over the samples of the ``lengthscale`` leaf of stacked hyperparameters.

    Returns:
      ``(D,)`` (a shared lengthscale is broadcast by the caller), or ``None`` if the model has none.
    """
    leaves = [leaf for path, leaf in jax.tree_util.tree_leaves_with_path(params)
              if "lengthscale" in jax.tree_util.keystr(path)]
    if not leaves:
        return None
    return np.exp(np.mean(np.log(np.asarray(leaves[0], dtype=np.float64)), axis=0))


def is_stalled(x: np.ndarray, y_std: np.ndarray, scale: np.ndarray, config: EscapeConfig) -> bool:
    """Whether the run is stalled at its incumbent (see the module docstring).

    Args:
      x: ``(n, D)`` observed points in the order of observation; y_std: ``(n,)`` standardised values.
      scale: lengthscales ``(D,)`` or ``()``.
      config: the rule's settings.
    """
    if len(y_std) <= config.patience:
        return False
    best_so_far = np.minimum.accumulate(y_std)
    last_improvement = int(np.argmax(best_so_far <= best_so_far[-1] + config.tolerance))
    incumbent = x[np.argmin(y_std)]
    distance = np.sqrt(np.sum(((x[last_improvement + 1:] - incumbent) / scale) ** 2, axis=-1))
    near, far = int(np.sum(distance <= config.near)), int(np.sum(distance > config.near))
    return near >= config.patience and far < config.steps * (near // config.patience)


class Escape(NamedTuple):
    """The acquisition search of one escape suggestion.

    Attributes:
      anchors: ``(A, D)`` starting candidates outside the neighbourhood (as many as the usual anchors,
        so the jitted search is not recompiled).
      best: the best standardised value outside the neighbourhood (the acquisition's incumbent).
      exclusion: ``(centre (D,), inverse_scale (D,), radius²)``: the masked neighbourhood, for
        :func:`exclude`.
    """

    anchors: jnp.ndarray
    best: jnp.ndarray
    exclusion: tuple


def plan(x: np.ndarray, y_std: np.ndarray, scale: np.ndarray, anchors: np.ndarray, config: EscapeConfig,
         rng: np.random.Generator, num_local: int, local_scale: float) -> Escape | None:
    """The escape search for this suggestion, or ``None`` if the run is not stalled.

    Args:
      x, y_std, scale, config: as in :func:`is_stalled`.
      anchors: the usual ``(A, D)`` anchors (Sobol and local).
      rng: generator for the local anchors around the best observations outside the neighbourhood.
      num_local, local_scale: how many local anchors and their spread (the acquisition search's own).
    Returns:
      An :class:`Escape`, or ``None`` (not stalled, or nothing observed outside the neighbourhood).
    """
    if not is_stalled(x, y_std, scale, config):
        return None
    centre = x[np.argmin(y_std)]
    inverse_scale = np.broadcast_to(1.0 / np.asarray(scale, np.float64), centre.shape)

    def outside(points):
        return np.sum(((points - centre) * inverse_scale) ** 2, axis=-1) > config.radius**2

    far = outside(x)
    if not far.any():
        return None
    seeds = np.flatnonzero(far)[np.argsort(y_std[far])[:5]]
    candidates = np.concatenate([anchors, local_anchors(rng, x[seeds], num_local, local_scale)])
    candidates = candidates[outside(candidates)]
    if len(candidates) == 0:
        candidates = x[seeds]
    candidates = np.resize(candidates, anchors.shape)  # repeat to the usual count
    dtype = anchors.dtype
    exclusion = (jnp.asarray(centre, dtype), jnp.asarray(inverse_scale, dtype), jnp.asarray(config.radius**2, dtype))
    return Escape(jnp.asarray(candidates, dtype), jnp.asarray(np.min(y_std[far]), dtype), exclusion)


def no_exclusion(dim: int, dtype) -> tuple:
    """An exclusion that masks nothing (a negative squared radius), so that the jitted search has one
    signature whether or not a suggestion escapes."""
    return jnp.zeros(dim, dtype), jnp.zeros(dim, dtype), jnp.asarray(-1.0, dtype)


def exclude(score_fn, centre, inverse_scale, radius_squared):
    """``score_fn`` with the neighbourhood ``‖(x − centre)·inverse_scale‖² ≤ radius_squared`` set to ``−inf``."""

    def masked(x):
        inside = jnp.sum(((x - centre) * inverse_scale) ** 2, axis=-1) <= radius_squared
        return jnp.where(inside, -jnp.inf, score_fn(x))

    return masked
