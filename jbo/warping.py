r"""Output warping: a monotone transform of the standardised targets, fitted from the data before the model sees them.

A GP assumes Gaussian targets; objectives whose values span orders of magnitude (Rosenbrock's ``10⁶`` in its
corners against ``< 10`` near the optimum) or are heavy-tailed push its fit towards the few huge values, and
whatever resolution is left near the optimum is lost. A monotone warp keeps the order of the values (so the
incumbent and the meaning of "better" are unchanged) and makes them closer to Gaussian. The acquisition is then
computed on the warped scale, where the model is Gaussian; the run's quality is always measured on the
objective's own values.

Every warp here is fitted on standardised targets (zero mean, unit variance over the model's rows), so it is
invariant to the objective's affine changes of units ``a·f + b``, ``a > 0``; its output is standardised again.

* ``"none"``: the standardised targets as they are.
* ``"rank"``: normal scores (a Gaussian copula): ``z_i = Φ⁻¹((r_i + ½) / n)`` with ``r_i`` the mid-rank of
  ``y_i`` among the ``n`` rows. Invariant to any increasing transform of the objective; forgets how much
  better a value is, only that it is.
* ``"yeo-johnson"``: the power transform of Yeo & Johnson (2000, eq. 2.1),

  .. math::
     ψ(y, λ) = \begin{cases} ((y + 1)^λ - 1) / λ & y ≥ 0,\ λ ≠ 0 \\ \log(y + 1) & y ≥ 0,\ λ = 0 \\
     -((1 - y)^{2 - λ} - 1) / (2 - λ) & y < 0,\ λ ≠ 2 \\ -\log(1 - y) & y < 0,\ λ = 2 \end{cases}

  with ``λ`` maximising the profile log-likelihood of a normal model of ``ψ(y, λ)`` (their eq. 3.1),
  ``-n/2 · log σ̂²(λ) + (λ - 1) Σ sign(y_i) log(|y_i| + 1)``, over a grid of ``λ`` (:func:`yeo_johnson_grid`). The
  fit runs before the model's own (the two-stage recipe of HEBO, Cowen-Rivers et al. 2022), not jointly
  with the GP's hyperparameters.

* ``"shifted-log"``: the logarithm of each value's gap above the best one, ``z_i = log(y_i - y_min + c)``, with
  ``c = q_{0.05} - y_min`` the gap from the best value to the values' 5 % quantile (at least :data:`LOG_FLOOR` of
  their range): the log-scaled cost of SMAC3 (Lindauer et al. 2022, JMLR 23(54)), anchored at the best value
  instead of at zero. Where values span decades, Yeo-Johnson's transform (anchored at the targets' mean)
  compresses the tail but leaves the best values close together; the shifted log spreads them out, ``c``
  shrinking as the best values crowd together. An option, for objectives whose logarithm is their natural
  scale, not a default: BENCHMARKS.md compares it with Yeo-Johnson (suite, ``gp-log``; ``bock_table1``,
  ``bock-log``).

Each warp is a pure function ``warp(y, mask) -> z`` of padded arrays (traceable; padded rows stay 0).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import ndtri


@functools.cache
def yeo_johnson_grid() -> np.ndarray:
    """The grid of Yeo-Johnson exponents the likelihood is maximised over (step 1/16 in ``[-2, 4]``, covering
    sklearn's usual range of fitted values; ``λ = 1`` is the identity), float64 held as NumPy.

    Computed on first use, not at import: a JAX operation at import would start JAX's backends before the
    user's program could configure them (``jax_num_cpu_devices``, platforms).
    """
    with jax.ensure_compile_time_eval(), jax.enable_x64(True):
        return np.asarray(jnp.linspace(-2.0, 4.0, 97))


#: The quantile whose gap above the best value shifts the ``"shifted-log"`` warp.
LOG_QUANTILE = 0.05
#: The smallest shift of the ``"shifted-log"`` warp, relative to the values' range: at most ~14 natural-log units
#: between the best value and the rest (ties at the best value would otherwise shift by zero).
LOG_FLOOR = 1e-6


def standardise(y, mask):
    """``y`` shifted and scaled to zero mean and unit variance over the rows where ``mask`` (0 elsewhere); a
    constant keeps the unit scale."""
    n = jnp.maximum(jnp.sum(mask), 1)
    mean = jnp.sum(jnp.where(mask, y, 0.0)) / n
    return jnp.where(mask, (y - mean) / _masked_std(y, mask), 0.0)


def normal_scores(y, mask):
    """Rank warp: ``Φ⁻¹((r + ½) / n)`` with ``r`` the mid-rank among the real rows (ties share one score)."""
    n = jnp.maximum(jnp.sum(mask), 1)
    other = mask[None, :]
    below = jnp.sum(other & (y[None, :] < y[:, None]), axis=1)
    ties = jnp.sum(other & (y[None, :] == y[:, None]), axis=1)  # includes the row itself
    rank = below + 0.5 * (ties - 1)
    return jnp.where(mask, ndtri((rank + 0.5) / n), 0.0)


def yeo_johnson_transform(y, lam):
    """``ψ(y, λ)`` of Yeo & Johnson (2000, eq. 2.1), elementwise (``λ`` a scalar)."""
    positive = y >= 0
    a = jnp.abs(y)
    log1p = jnp.log1p(a)
    near_zero, near_two = jnp.abs(lam) < 1e-8, jnp.abs(lam - 2.0) < 1e-8
    safe = jnp.where(near_zero, 1.0, lam)
    safe_two = jnp.where(near_two, 1.0, 2.0 - lam)
    upper = jnp.where(near_zero, log1p, jnp.expm1(safe * log1p) / safe)
    lower = -jnp.where(near_two, log1p, jnp.expm1(safe_two * log1p) / safe_two)
    return jnp.where(positive, upper, lower)


def yeo_johnson_log_likelihood(y, mask, lam):
    """Profile log-likelihood of ``λ`` (Yeo & Johnson 2000, eq. 3.1, the mean and variance maximised out)."""
    n = jnp.maximum(jnp.sum(mask), 1)
    z = yeo_johnson_transform(y, lam)
    mean = jnp.sum(jnp.where(mask, z, 0.0)) / n
    var = jnp.sum(jnp.where(mask, (z - mean) ** 2, 0.0)) / n
    jacobian = jnp.sum(jnp.where(mask, jnp.sign(y) * jnp.log1p(jnp.abs(y)), 0.0))
    return -0.5 * n * jnp.log(jnp.maximum(var, 1e-300)) + (lam - 1.0) * jacobian


def yeo_johnson_lambda(y, mask):
    """The grid's ``λ`` of largest profile likelihood (:func:`yeo_johnson_grid`)."""
    grid = jnp.asarray(yeo_johnson_grid(), y.dtype)
    scores = jax.vmap(lambda lam: yeo_johnson_log_likelihood(y, mask, lam))(grid)
    return grid[jnp.argmax(jnp.where(jnp.isfinite(scores), scores, -jnp.inf))]


def yeo_johnson(y, mask):
    """Yeo-Johnson warp with its maximum-likelihood ``λ`` (of the standardised targets), standardised again."""
    y = standardise(y, mask)
    return standardise(yeo_johnson_transform(y, yeo_johnson_lambda(y, mask)), mask)


def yeo_johnson_with_log_jacobian(y, mask):
    r"""The Yeo-Johnson warp of ``y`` (:func:`yeo_johnson`) and the log-Jacobian of the map from ``y`` to it.

    The warp is ``y → u = (y - ȳ)/s_y → t = ψ(u, λ̂) → z = (t - t̄)/s_t``, so

    .. math:: \log \left|\frac{\partial z}{\partial y}\right| = (λ̂ - 1) \sum_i \operatorname{sign}(u_i)
       \log(1 + |u_i|) - n \log s_y - n \log s_t,

    the term that turns a density of the warped targets into one of ``y`` (the warped GP's likelihood,
    Snelson, Rasmussen & Ghahramani 2004): with it, a model's evidence for ``z`` and for ``y`` are
    comparable.

    Args:
      y: ``(N,)`` targets (padded rows ignored); mask: ``(N,)`` the real rows.
    Returns:
      ``(z, log_jacobian, λ̂)``: ``z`` as :func:`yeo_johnson` returns it, the scalar log-Jacobian, the exponent.
    """
    n = jnp.maximum(jnp.sum(mask), 1)
    u = standardise(y, mask)
    lam = yeo_johnson_lambda(u, mask)
    t = yeo_johnson_transform(u, lam)
    z = standardise(t, mask)
    spread_y, spread_t = _masked_std(y, mask), _masked_std(t, mask)
    log_derivative = (lam - 1.0) * jnp.sum(jnp.where(mask, jnp.sign(u) * jnp.log1p(jnp.abs(u)), 0.0))
    return z, log_derivative - n * jnp.log(spread_y) - n * jnp.log(spread_t), lam


def _masked_std(y, mask):
    """The standard deviation :func:`standardise` divides by (1 for a constant)."""
    n = jnp.maximum(jnp.sum(mask), 1)
    mean = jnp.sum(jnp.where(mask, y, 0.0)) / n
    std = jnp.sqrt(jnp.sum(jnp.where(mask, (y - mean) ** 2, 0.0)) / n)
    return jnp.where(std > 1e-12, std, 1.0)


def masked_quantile(y, mask, q: float):
    """The ``q`` quantile of ``y`` over the rows where ``mask`` (linear interpolation between order statistics, as
    NumPy's default; traceable)."""
    n = jnp.maximum(jnp.sum(mask), 1)
    ordered = jnp.sort(jnp.where(mask, y, jnp.inf))
    position = q * (n - 1)
    lower = jnp.floor(position).astype(jnp.int32)
    upper = jnp.minimum(lower + 1, n - 1)
    return ordered[lower] + (position - lower) * (ordered[upper] - ordered[lower])


def shifted_log(y, mask):
    """Shifted-log warp: ``log(y - y_min + c)``, ``c`` the gap from the best value to :data:`LOG_QUANTILE`
    (at least :data:`LOG_FLOOR` of the range), standardised again."""
    y = standardise(y, mask)
    best = jnp.min(jnp.where(mask, y, jnp.inf))
    spread = jnp.max(jnp.where(mask, y, -jnp.inf)) - best
    shift = jnp.maximum(masked_quantile(y, mask, LOG_QUANTILE) - best, LOG_FLOOR * spread)
    gap = jnp.where(mask, y - best + shift, 1.0)
    return standardise(jnp.log(jnp.where(gap > 0, gap, 1.0)), mask)


def warp(name: str, y, mask):
    """The standardised targets ``y`` warped by the named warp (:data:`NAMES`), standardised again.

    Args:
      name: ``"none"``, ``"rank"``, ``"yeo-johnson"`` or ``"shifted-log"`` (static).
      y: ``(N,)`` targets (padded rows ignored); mask: ``(N,)`` the real rows.
    Returns:
      ``(N,)`` warped targets, zero mean and unit variance over the real rows, 0 on padded rows.
    """
    if name not in WARPS:
        raise ValueError(f"output_warping must be one of {', '.join(map(repr, NAMES))}, got {name!r}")
    return WARPS[name](y, mask)


def _unwarped(y, mask):
    return jnp.where(mask, y, 0.0)


def _rank(y, mask):
    return standardise(normal_scores(y, mask), mask)


#: The output warps by name: ``warp(y, mask) -> z`` (:attr:`jbo.loop.Settings.output_warping`).
WARPS = {"none": _unwarped, "rank": _rank, "yeo-johnson": yeo_johnson, "shifted-log": shifted_log}
NAMES = tuple(WARPS)
