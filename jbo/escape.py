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

Off by default (``jbo.models.GP(escape=...)``, ``model="gp"`` only): on Hartmann6 it lowers the rate of runs trapped at −3.2031, but
on Levy, Alpine01 and Hartmann3 the evaluations it moves away from the incumbent cost more than the
basins it finds (BENCHMARKS.md, sections core_quality and escape_ablation).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jbo import checks
from jbo.design import local_points


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
        checks.known_options("escape", fields, cls._fields)
        config = cls(**fields)
        return config._replace(**{f: checks.integer(f"escape.{f}", getattr(config, f), 1, True) for f in ("patience", "steps")},
                               **{f: checks.positive(f"escape.{f}", getattr(config, f))
                                  for f in ("radius", "tolerance", "near")})

    @classmethod
    def from_option(cls, option) -> "EscapeConfig | bool":
        """A model's ``escape`` option: ``False``/``None`` (off), ``True`` (defaults), a dict of fields or a config."""
        if option is None or option is False:
            return False
        if option is True:
            return cls()
        if isinstance(option, cls):
            return cls.create(**option._asdict())
        if isinstance(option, dict):
            return cls.create(**option)
        raise ValueError(f"escape must be true, false or a dict of EscapeConfig fields, got {option!r}")


def lengthscales(params: Any):
    """Geometric mean over the samples of the ``lengthscale`` leaf of stacked hyperparameters.

    Returns:
      ``(D,)`` or ``()`` (a shared lengthscale), or ``None`` if the model has none.
    """
    leaves = [leaf for path, leaf in jax.tree_util.tree_leaves_with_path(params)
              if "lengthscale" in jax.tree_util.keystr(path)]
    if not leaves:
        return None
    return jnp.exp(jnp.mean(jnp.log(jnp.asarray(leaves[0])), axis=0))


def _real(y_std, mask):
    y_std = jnp.asarray(y_std)
    return jnp.ones(y_std.shape, bool) if mask is None else jnp.asarray(mask)


def is_stalled(x, y_std, scale, config: EscapeConfig, mask=None):
    """Whether the run is stalled at its incumbent (see the module docstring); traceable.

    Args:
      x: ``(n, D)`` observed points in the order of observation; y_std: ``(n,)`` standardised values.
      scale: lengthscales ``(D,)`` or ``()``.
      config: the rule's settings.
      mask: ``(n,)`` real rows (padded buffers); default all.
    Returns:
      A bool scalar.
    """
    x, y_std = jnp.asarray(x), jnp.asarray(y_std)
    real = _real(y_std, mask)
    values = jnp.where(real, y_std, jnp.inf)
    best_so_far = jax.lax.cummin(values)
    best = jnp.min(values)
    last_improvement = jnp.argmax(real & (best_so_far <= best + config.tolerance))
    incumbent = x[jnp.argmin(values)]
    distance = jnp.sqrt(jnp.sum(((x - incumbent) / scale) ** 2, axis=-1))
    recent = real & (jnp.arange(len(values)) > last_improvement)
    near = jnp.sum(recent & (distance <= config.near))
    far = jnp.sum(recent & (distance > config.near))
    return (jnp.sum(real) > config.patience) & (near >= config.patience) & (far < config.steps * (near // config.patience))


class Escape(NamedTuple):
    """The acquisition search of one suggestion, escaping or not.

    Attributes:
      active: whether this suggestion escapes.
      anchors: ``(A, D)`` starting candidates (as many as the usual anchors, so shapes stay static).
      best: the acquisition's incumbent: the best standardised value outside the neighbourhood.
      exclusion: ``(centre (D,), inverse_scale (D,), radius²)``: the masked neighbourhood, for
        :func:`exclude` (a negative radius² masks nothing).
    """

    active: jnp.ndarray
    anchors: jnp.ndarray
    best: jnp.ndarray
    exclusion: tuple


def plan(key, x, y_std, scale, anchors, best, config: EscapeConfig, num_local: int, local_scale: float,
         mask=None) -> Escape:
    """The acquisition search for this suggestion: an escape if the run is stalled (traceable).

    When stalled and some observation lies outside the neighbourhood, the anchors become the Sobol
    anchors plus ``num_local`` points around the five best observations outside it, the incumbent
    the best of those, and the neighbourhood is excluded; otherwise ``anchors`` and ``best`` are
    returned unchanged with an exclusion that masks nothing.

    Args:
      key: PRNG key of the local anchors.
      x, y_std, scale, config, mask: as in :func:`is_stalled`.
      anchors: the usual ``(A, D)`` anchors (``A > num_local``; their last ``num_local`` rows, the local
        ones around the incumbent, are replaced); best: the usual incumbent.
      num_local, local_scale: how many local anchors and their spread.
    Returns:
      An :class:`Escape`.
    """
    x, y_std = jnp.asarray(x), jnp.asarray(y_std)
    real = _real(y_std, mask)
    values = jnp.where(real, y_std, jnp.inf)
    centre = x[jnp.argmin(values)]
    inverse_scale = jnp.broadcast_to(1.0 / jnp.asarray(scale, x.dtype), centre.shape)
    radius_squared = jnp.asarray(config.radius**2, x.dtype)

    def outside(points):
        return jnp.sum(((points - centre) * inverse_scale) ** 2, axis=-1) > radius_squared

    far = real & outside(x)
    far_values = jnp.where(far, values, jnp.inf)
    active = is_stalled(x, y_std, scale, config, real) & jnp.any(far)
    _, seeds = jax.lax.top_k(-far_values, min(5, len(values)))
    seed_ok = jnp.isfinite(far_values[seeds])
    local = local_points(key, x[seeds], seed_ok, num_local, local_scale)
    candidates = jnp.concatenate([anchors[: anchors.shape[0] - num_local], local])
    return Escape(
        active,
        jnp.where(active, candidates, anchors),
        jnp.where(active, jnp.min(far_values), best),
        (centre, inverse_scale, jnp.where(active, radius_squared, -1.0)),
    )


def no_exclusion(dim: int, dtype) -> tuple:
    """An exclusion that masks nothing (a negative squared radius)."""
    return jnp.zeros(dim, dtype), jnp.zeros(dim, dtype), jnp.asarray(-1.0, dtype)


def exclude(score_fn, centre, inverse_scale, radius_squared):
    """``score_fn`` with the neighbourhood ``‖(x − centre)·inverse_scale‖² ≤ radius_squared`` set to ``−inf``."""

    def masked(x):
        inside = jnp.sum(((x - centre) * inverse_scale) ** 2, axis=-1) <= radius_squared
        return jnp.where(inside, -jnp.inf, score_fn(x))

    return masked
