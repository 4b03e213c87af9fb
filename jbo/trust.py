r"""A trust region for the acquisition search (TuRBO-1: Eriksson, Pearce, Gardner, Turner & Poloczek, 2019,
"Scalable global optimization via local Bayesian optimization", §2).

The search is restricted to a box of side :math:`L` (unit-cube units) centred at the incumbent. After
:math:`\tau_{succ}` consecutive evaluations that improve on the incumbent the side doubles (up to
:math:`L_{max}`); after :math:`\tau_{fail}` consecutive ones that do not, it halves; once it falls below
:math:`L_{min}` the region starts again at :math:`L_{init}`. The paper's constants for one point at a time:
:math:`L_{init} = 0.8`, :math:`L_{min} = 2^{-7}`, :math:`L_{max} = 1.6`, :math:`\tau_{succ} = 3`,
:math:`\tau_{fail} = \max(4, D)`.

:math:`L` is a function of the observations in their order (:func:`side_length` replays the rule), so a run
carries no state for it and a resumed run finds the same region. Where jbo differs from TuRBO-1: the box is a
cube (TuRBO stretches it by the GP's lengthscales, which the loop does not see); "improves" means by more
than ``1e-3`` standard deviations of the values observed, or of their normal scores
(``TrustRegion.improvement``; TuRBO: ``1e-3·|f*|``, which depends on the objective's offset); a restart keeps
every observation (TuRBO starts a new design).

On normal scores (:func:`jbo.warping.normal_scores`) the rule is that of the values' ranks: any strictly lower
value improves, a tie does not (a plateau), and a monotone transform of the objective leaves the region as
it is. On the values themselves, an objective whose worst values are orders of magnitude above its best
(Zakharov, Rosenbrock) has a standard deviation set by its worst values, and the improvements near its best
fall below the threshold: the region then halves every ``failure_tolerance`` evaluations while the run
improves, and restarts.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jbo import checks
from jbo.warping import normal_scores

#: What the improvement threshold is measured in (:attr:`TrustRegion.improvement`).
IMPROVEMENTS = ("value", "rank")


class TrustRegion(NamedTuple):
    """TuRBO-1's constants (Eriksson et al. 2019, §2 and their supplement).

    Attributes:
      length_init, length_min, length_max: the side's start, floor (below it the region starts again) and cap.
      success_tolerance: consecutive improvements that double the side.
      failure_tolerance: consecutive non-improvements that halve it; ``None``: ``max(4, D)``.
      threshold: an improvement beats the incumbent by more than this many standard deviations of the values
        (``improvement="value"``) or of their normal scores (``"rank"``).
      improvement: ``"value"`` (TuRBO-1's rule on the objective's scale) or ``"rank"`` (on the values' normal
        scores: every strict improvement counts, ties do not).
    """

    length_init: float = 0.8
    length_min: float = 0.5**7
    length_max: float = 1.6
    success_tolerance: int = 3
    failure_tolerance: int | None = None
    threshold: float = 1e-3
    improvement: str = "value"

    @classmethod
    def create(cls, **fields) -> "TrustRegion":
        """Validated construction; errors name the field (``trust_region.<field>``)."""
        checks.known_options("trust_region", fields, cls._fields)
        config = cls(**fields)
        if config.improvement not in IMPROVEMENTS:
            raise ValueError(f"trust_region.improvement must be one of {IMPROVEMENTS}, got {config.improvement!r}")
        for name in ("length_init", "length_min", "length_max", "threshold"):
            checks.positive(f"trust_region.{name}", getattr(config, name))
        if not config.length_min < config.length_init <= config.length_max:
            raise ValueError("trust_region needs length_min < length_init <= length_max, got "
                             f"{config.length_min}, {config.length_init}, {config.length_max}")
        tolerance = config.failure_tolerance
        return config._replace(
            length_init=float(config.length_init), length_min=float(config.length_min),
            length_max=float(config.length_max), threshold=float(config.threshold),
            success_tolerance=checks.integer("trust_region.success_tolerance", config.success_tolerance, 1),
            failure_tolerance=None if tolerance is None else checks.integer("trust_region.failure_tolerance",
                                                                            tolerance, 1))

    @classmethod
    def from_option(cls, option) -> "TrustRegion | bool":
        """The ``trust_region`` setting: ``True`` (the default constants) or ``False`` as given, a dict of
        fields or a :class:`TrustRegion` as a validated config."""
        if isinstance(option, cls):
            return cls.create(**option._asdict())
        if isinstance(option, dict):
            return cls.create(**option)
        return checks.boolean("trust_region", option)


def side_length(values, ok, real, num_initial: int, dim: int, config: TrustRegion = TrustRegion()):
    """The side of the trust region after the observations ``values`` (traceable).

    Args:
      values: ``(C,)`` objective values in the order of observation (any value on rows that are not ``ok``).
      ok: ``(C,)`` bool: a successful, feasible evaluation.
      real: ``(C,)`` bool: an evaluation (``ok`` or failed; padded rows are ``False``). A failure counts as an
        evaluation that did not improve.
      num_initial: rows of the initial design, which set the incumbent without counting (static).
      dim: the dimension (static; the default failure tolerance).
      config: the constants.
    Returns:
      The side :math:`L`, a scalar.
    """
    values = jnp.asarray(values)
    if config.improvement == "rank":
        values = normal_scores(jnp.where(ok, values, 0.0), jnp.asarray(ok))
    tolerance = max(4, dim) if config.failure_tolerance is None else config.failure_tolerance
    spread = jnp.sqrt(jnp.var(jnp.where(ok, values, 0.0), where=ok)) if values.shape[0] else 1.0
    margin = config.threshold * jnp.where(jnp.isfinite(spread) & (spread > 0), spread, 1.0)

    def replay(carry, row):
        length, best, successes, failures = carry
        value, good, counted = row
        improved = good & (value < best - margin)
        successes = jnp.where(counted, jnp.where(improved, successes + 1, 0), successes)
        failures = jnp.where(counted, jnp.where(improved, 0, failures + 1), failures)
        grow, shrink = successes >= config.success_tolerance, failures >= tolerance
        length = jnp.where(grow, jnp.minimum(2.0 * length, config.length_max), length)
        length = jnp.where(shrink, length / 2.0, length)
        restart = length < config.length_min
        length = jnp.where(restart, config.length_init, length)
        successes = jnp.where(grow | restart, 0, successes)
        failures = jnp.where(shrink | restart, 0, failures)
        best = jnp.where(good, jnp.minimum(best, value), best)
        return (length, best, successes, failures), None

    counted = jnp.asarray(real) & (jnp.arange(values.shape[0]) >= num_initial)
    start = (jnp.asarray(config.length_init, values.dtype), jnp.asarray(jnp.inf, values.dtype),
             jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32))
    (length, _, _, _), _ = jax.lax.scan(replay, start, (jnp.where(ok, values, jnp.inf), jnp.asarray(ok), counted))
    return length


def box(x, values, ok, length):
    """``(lower, upper)``: the cube of side ``length`` centred at the incumbent, cut to the unit cube.

    Args:
      x: ``(C, D)`` points in the unit cube; values, ok: as in :func:`side_length`; length: the side.
    """
    centre = x[jnp.argmin(jnp.where(ok, values, jnp.inf))]
    return jnp.clip(centre - length / 2.0, 0.0, 1.0), jnp.clip(centre + length / 2.0, 0.0, 1.0)
