"""Metrics of optimisation runs and of regression fits (plain NumPy, no JAX).

Conventions shared by every function here:

* Problems are **minimised**. ``values`` is a sequence of objective values in evaluation order,
  ``nan`` marking a failed evaluation (what :attr:`jbo.Result.values` returns). ``inf``/``-inf`` are
  treated as failures too.
* Curve functions accept a 1-D array ``(T,)`` or a stack of runs ``(..., T)``; they work along the
  last axis, so ``(n_seeds, T)`` gives one curve per seed.

Notation: ``y_t`` is the value of evaluation ``t = 1..T``, ``f*`` the known optimum,
``S_t = {s <= t : y_s successful}``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "best_so_far",
    "simple_regret",
    "cumulative_regret",
    "log10_distance",
    "nmse",
    "ranks",
    "ranks_over_time",
    "mean_and_stderr",
]


def _values(values) -> np.ndarray:
    y = np.asarray(values, dtype=np.float64)
    if y.ndim == 0:
        raise ValueError("values must have at least one axis (evaluations along the last one)")
    return np.where(np.isfinite(y), y, np.nan)


def best_so_far(values) -> np.ndarray:
    """Running minimum of the successful values.

    ``b_t = min_{s in S_t} y_s``, and ``b_t = +inf`` while no evaluation has succeeded yet.

    Args:
      values: ``(..., T)`` objective values, ``nan`` (or ``inf``) for failures.
    Returns:
      ``(..., T)`` array.
    """
    y = _values(values)
    return np.minimum.accumulate(np.where(np.isnan(y), np.inf, y), axis=-1)


def simple_regret(values, optimum: float) -> np.ndarray:
    """Simple regret ``r_t = b_t - f*`` (``b_t`` from :func:`best_so_far`; ``+inf`` before any success).

    Args:
      values: ``(..., T)`` objective values, ``nan`` for failures.
      optimum: the known global minimum ``f*``.
    """
    return best_so_far(values) - float(optimum)


def cumulative_regret(values, optimum: float) -> np.ndarray:
    """Cumulative regret ``R_t = sum_{s <= t} (y'_s - f*)``.

    ``y'_s = y_s`` for a successful evaluation. A failure counts as the worst successful value seen
    so far, ``y'_s = max_{u in S_{s-1}} y_u``: a crash is charged as much as the worst point tried.
    A failure before the first success has no such value; it is charged the worst successful value of
    the whole run, and if the run has no success at all every ``R_t`` is ``nan``.

    Args:
      values: ``(..., T)`` objective values, ``nan`` for failures.
      optimum: the known global minimum ``f*``.
    Returns:
      ``(..., T)`` array.
    """
    y = _values(values)
    worst_so_far = np.fmax.accumulate(y, axis=-1)  # fmax ignores nan: running max of the successes
    worst_before = np.concatenate([np.full(y.shape[:-1] + (1,), np.nan), worst_so_far[..., :-1]], axis=-1)
    with np.errstate(all="ignore"):
        worst_overall = np.nanmax(np.where(np.isnan(y), -np.inf, y), axis=-1, keepdims=True)
    worst_overall = np.where(np.isneginf(worst_overall), np.nan, worst_overall)
    filled = np.where(np.isnan(y), worst_before, y)
    filled = np.where(np.isnan(filled), worst_overall, filled)
    return np.cumsum(filled - float(optimum), axis=-1)


def log10_distance(values, optimum: float, floor: float = 1e-12) -> np.ndarray:
    """``log10(max(|b_t - f*|, floor))``: the distance of the best value so far to the optimum.

    The ``floor`` keeps a run that hit the optimum exactly finite; before the first success the
    result is ``+inf``.

    Args:
      values: ``(..., T)`` objective values, ``nan`` for failures.
      optimum: the known global minimum ``f*``.
      floor: smallest distance reported (must be > 0).
    """
    if not floor > 0:
        raise ValueError(f"floor must be > 0, got {floor!r}")
    distance = np.abs(simple_regret(values, optimum))
    return np.log10(np.maximum(distance, floor))


def nmse(y_true, y_pred) -> float:
    """Normalised mean squared error ``mean((y - y_hat)^2) / var(y)`` (population variance).

    0 is a perfect fit, 1 is as good as predicting the mean of ``y_true`` (the NMSE of Swersky et
    al. 2014's regression study).

    Raises:
      ValueError: mismatched shapes, fewer than two points, or constant ``y_true``.
    """
    y = np.asarray(y_true, dtype=np.float64).ravel()
    p = np.asarray(y_pred, dtype=np.float64).ravel()
    if y.shape != p.shape:
        raise ValueError(f"y_true and y_pred differ in size: {y.size} vs {p.size}")
    if y.size < 2:
        raise ValueError("nmse needs at least two points")
    variance = np.var(y)
    if variance == 0:
        raise ValueError("nmse is undefined for a constant y_true (zero variance)")
    return float(np.mean((y - p) ** 2) / variance)


def ranks(matrix, average: bool = True) -> np.ndarray:
    """Ranks of methods (columns) within each row (a problem, or a problem and seed); 1 = best = lowest.

    Within a row, ties share the mean of the ranks they span (``scipy.stats.rankdata``,
    ``method="average"``); a ``nan`` (a method with no result) ranks as worse than every number,
    ties among ``nan`` included.

    Args:
      matrix: ``(n_rows, n_methods)`` scores to minimise (e.g. final simple regret).
      average: return the mean rank of each method over the rows (``(n_methods,)``); ``False``
        returns the per-row ranks ``(n_rows, n_methods)``.
    """
    from scipy.stats import rankdata

    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim == 1:
        m = m[None]
    if m.ndim != 2:
        raise ValueError(f"matrix must be (n_rows, n_methods), got shape {m.shape}")
    m = np.where(np.isnan(m), np.inf, m)
    r = rankdata(m, method="average", axis=1)
    return r.mean(axis=0) if average else r


def ranks_over_time(curves, average: bool = True) -> np.ndarray:
    """:func:`ranks` at every iteration: ranks of methods within each row, one ranking per step ``t``.

    Args:
      curves: ``(n_rows, n_methods, T)`` scores to minimise (e.g. best value so far of each method on
        each problem; ``nan``: no result, ranked worst).
      average: return the mean rank over rows ``(n_methods, T)`` (the "average rank against
        iterations" of Jenatton et al. 2017, Fig. 4); ``False`` returns ``(n_rows, n_methods, T)``.
    """
    c = np.asarray(curves, dtype=np.float64)
    if c.ndim != 3:
        raise ValueError(f"curves must be (n_rows, n_methods, T), got shape {c.shape}")
    n_rows, n_methods, steps = c.shape
    flat = np.moveaxis(c, 2, 1).reshape(n_rows * steps, n_methods)  # one row per (row, t)
    r = np.moveaxis(ranks(flat, average=False).reshape(n_rows, steps, n_methods), 1, 2)
    return r.mean(axis=0) if average else r


def mean_and_stderr(curves) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over seeds (axis 0).

    ``mean = (1/n) sum_i c_i``, ``stderr = std(c, ddof=1) / sqrt(n)`` (0 when ``n = 1``).

    Args:
      curves: ``(n_seeds, ...)``, e.g. ``(n_seeds, T)`` simple-regret curves.
    Returns:
      ``(mean, stderr)``, each of shape ``curves.shape[1:]``.
    """
    c = np.asarray(curves, dtype=np.float64)
    if c.ndim == 0 or c.shape[0] == 0:
        raise ValueError("curves must have a non-empty leading seed axis")
    n = c.shape[0]
    with np.errstate(invalid="ignore"):
        mean = c.mean(axis=0)
        stderr = c.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.zeros_like(mean)
    return mean, stderr
