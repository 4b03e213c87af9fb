"""Figures of optimisation runs: convergence curves with error bands, time per suggestion.

Figures are drawn on a bare :class:`matplotlib.figure.Figure` with the Agg canvas and written to a
file; pyplot is never imported, so nothing here changes matplotlib's global backend, opens a window
or leaks figures. Every function returns the path it wrote.
"""

from __future__ import annotations

import os
from typing import Mapping, Sequence

import numpy as np

from jbo import metrics

__all__ = ["plot_convergence", "plot_times"]

_FLOOR = 1e-12  # smallest regret drawn on a log axis


def _figure(figsize=(6.4, 4.4)):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path) -> str:
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fig.savefig(path, dpi=120)
    return path


def _stack(runs) -> np.ndarray:
    """``(n_seeds, T)`` from an array or from a list of runs of possibly different lengths.

    Runs of different lengths are cut to the shortest, so every point averages the same seeds.
    """
    if isinstance(runs, np.ndarray):
        arr = np.asarray(runs, dtype=np.float64)
        return arr[None] if arr.ndim == 1 else arr
    rows = [np.asarray(r, dtype=np.float64).ravel() for r in runs]
    if not rows:
        raise ValueError("a curve needs at least one run")
    length = min(len(r) for r in rows)
    return np.stack([r[:length] for r in rows])


def plot_convergence(curves: Mapping[str, np.ndarray | Sequence], optimum: float | None = None,
                     log: bool = True, path: str | os.PathLike = "convergence.png",
                     title: str | None = None) -> str:
    """Mean ± one standard error over seeds of the simple regret (or best value) vs evaluations.

    Args:
      curves: ``label -> (n_seeds, n_evals)`` objective values in evaluation order (``nan`` for
        failures; already-accumulated best-so-far curves work too), or a list of 1-D runs, cut to the
        shortest one.
      optimum: known optimum ``f*``. Given: the simple regret ``b_t - f*`` is drawn; otherwise the
        best value so far ``b_t``.
      log: logarithmic y axis (the regret is floored at 1e-12; best values fall back to a linear
        axis when some are not positive).
      path: PNG (or any format matplotlib knows from the extension) to write.
      title: figure title.
    Returns:
      ``path``.
    """
    if not curves:
        raise ValueError("no curves to plot")
    fig = _figure()
    ax = fig.add_subplot()
    all_finite = []
    for label, runs in curves.items():
        values = _stack(runs)
        best = metrics.best_so_far(values)
        y = best - float(optimum) if optimum is not None else best
        if optimum is not None and log:
            y = np.where(np.isfinite(y), np.maximum(y, _FLOOR), y)
        mean, se = metrics.mean_and_stderr(y)
        shown = np.isfinite(mean)  # before every seed has a success the mean is +inf: not drawn
        se = np.where(np.isfinite(se), se, 0.0)
        mean = np.where(shown, mean, np.nan)
        x = np.arange(1, values.shape[-1] + 1)
        n = values.shape[0]
        (line,) = ax.plot(x, mean, label=f"{label} (n={n})", lw=1.8)
        if n > 1:
            low, high = mean - se, mean + se
            if optimum is not None and log:
                low = np.maximum(low, _FLOOR)
            ax.fill_between(x, low, high, where=shown, color=line.get_color(), alpha=0.2, lw=0)
        all_finite.append(mean[shown])
    finite = np.concatenate(all_finite) if all_finite else np.zeros(0)
    if log and (optimum is not None or (finite.size and np.all(finite > 0))):
        ax.set_yscale("log")
    ax.set_xlabel("evaluations")
    ax.set_ylabel("simple regret" if optimum is not None else "best value so far")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    if title:
        ax.set_title(title)
    return _save(fig, path)


def plot_times(times: Mapping[str, tuple], path: str | os.PathLike = "times.png",
               title: str | None = None, ylabel: str = "seconds per suggestion") -> str:
    """Time per suggestion against the number of observations, on log-log axes.

    Args:
      times: ``label -> (n, seconds)``: ``n`` ``(K,)`` numbers of observations; ``seconds`` ``(K,)``
        or ``(repeats, K)`` (drawn as mean ± one standard error over the repeats). Non-finite or
        non-positive entries are skipped.
      path: file to write.
      title: figure title; ylabel: y-axis label.
    Returns:
      ``path``.
    """
    if not times:
        raise ValueError("no timings to plot")
    fig = _figure()
    ax = fig.add_subplot()
    for label, (n, seconds) in times.items():
        n = np.asarray(n, dtype=np.float64).ravel()
        s = np.asarray(seconds, dtype=np.float64)
        s = s[None] if s.ndim == 1 else s
        if s.shape[-1] != n.size:
            raise ValueError(f"{label}: {n.size} sizes but {s.shape[-1]} timings per repeat")
        s = np.where(np.isfinite(s) & (s > 0), s, np.nan)
        with np.errstate(invalid="ignore"):
            mean = np.nanmean(s, axis=0) if s.shape[0] > 1 else s[0]
        ok = np.isfinite(mean) & (n > 0)
        (line,) = ax.plot(n[ok], mean[ok], marker="o", ms=3, lw=1.5, label=label)
        if s.shape[0] > 1:
            _, se = metrics.mean_and_stderr(s)
            se = np.where(np.isfinite(se), se, 0.0)
            low = np.maximum(mean - se, mean * 1e-3)
            ax.fill_between(n[ok], low[ok], (mean + se)[ok], color=line.get_color(), alpha=0.2, lw=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("observations N")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    if title:
        ax.set_title(title)
    return _save(fig, path)
