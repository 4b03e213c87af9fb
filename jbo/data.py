"""Observation buffers with static, bucketed shapes.

Every jitted function in jbo takes a :class:`Data` whose leading size ``N_pad`` is drawn from a
small set of buckets, so a BO run of hundreds of iterations compiles a handful of programs rather
than one per observation. Padded rows carry ``mask = False``; models must make them inert (the exact
GP gives them unit prior variance and zero residual, which adds nothing to its likelihood).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jbo.types import Data


class Standardizer(NamedTuple):
    """Affine map between user-scale and standardised targets: ``y_std = (y - shift) / scale``."""

    shift: float
    scale: float

    @classmethod
    def fit(cls, y: np.ndarray) -> "Standardizer":
        y = np.asarray(y, dtype=np.float64)
        if y.size == 0:
            return cls(0.0, 1.0)
        scale = float(np.std(y))
        # A constant objective has zero spread: keep the unit scale rather than divide by zero.
        return cls(float(np.mean(y)), scale if scale > 1e-12 * max(1.0, abs(float(np.mean(y)))) else 1.0)

    def forward(self, y):
        return (y - self.shift) / self.scale

    def inverse(self, y_std):
        return y_std * self.scale + self.shift


def bucket_size(n: int, minimum: int = 16, steps_per_octave: int = 2, fine_above: int = 256) -> int:
    """Smallest bucket ``>= n``: the padded size observation buffers are compiled for.

    Up to ``fine_above`` the sizes are ``minimum * 2**(k / steps_per_octave)`` rounded up to a multiple
    of 8: with the defaults 16, 24, 32, 48, 64, 96, 128, 184, 256, so a run to 200 observations
    compiles 9 shapes. Above, where a GP's ``O(N^3)`` work dwarfs compilation, buckets are eight per
    octave (multiples of ``2**floor(log2 n) / 8``: ..., 768, 896, 1024, 1280, ...), wasting at most
    12.5 % of the rows instead of 50 %.

    Args:
      n: number of real observations.
      minimum: smallest bucket.
      steps_per_octave: buckets per doubling up to ``fine_above``.
      fine_above: size above which eight buckets per octave are used.
    """
    if n <= minimum:
        return minimum
    if n > fine_above:
        step = 2 ** (int(math.floor(math.log2(n))) - 3)
        return int(math.ceil(n / step) * step)
    k = math.ceil(steps_per_octave * math.log2(n / minimum) - 1e-9)
    while True:
        size = int(math.ceil(minimum * 2 ** (k / steps_per_octave) / 8.0) * 8)
        if size >= n:
            return size
        k += 1


def multiple_of_8(n: int) -> int:
    """``n`` rounded up to a multiple of 8 (at least 8)."""
    return max(8, -(-int(n) // 8) * 8)


def run_sizes(budget: int, single_up_to: int = 32, two_up_to: int = 256):
    """The padded sizes of a run whose budget is known: ``n -> size`` (``None``: :func:`bucket_size`).

    Every padded size is one more program to compile (seconds each on a CPU) and a larger size makes
    each suggestion dearer (a GP's work grows as ``N^3``). A run of at most ``single_up_to``
    evaluations pads once to its budget; up to ``two_up_to``, to half the budget and then to the
    whole (two programs, against six to nine buckets); beyond, where the model's work dominates,
    the fine buckets of :func:`bucket_size`.

    Args:
      budget: evaluations of the run.
    Returns:
      ``size(n)``: the padded size for ``n`` observations.
    """
    full = multiple_of_8(budget)
    if budget > two_up_to:
        return lambda n: None
    if budget <= single_up_to:
        return lambda n: full
    half = multiple_of_8(-(-budget // 2))
    return lambda n: half if n <= half else full


def pad_data(x: np.ndarray, y: np.ndarray, size: int | None = None, dtype=jnp.float64, **bucket_kw) -> Data:
    """Pad ``(x, y)`` to a bucketed size with a mask.

    Args:
      x: ``(N, D)`` unit-cube inputs.
      y: ``(N,)`` standardised targets.
      size: explicit padded size (default: :func:`bucket_size`).
      dtype: floating dtype of ``x`` and ``y``.
    Returns:
      A :class:`Data` of leading size ``size``. Padded inputs are placed at 0.5 (inside the cube, so
      no kernel sees an out-of-domain value), with zero targets and ``mask = False``.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    n, d = x.shape
    size = bucket_size(n, **bucket_kw) if size is None else size
    if size < n:
        raise ValueError(f"size ({size}) must be >= number of observations ({n})")
    xp = np.full((size, d), 0.5)
    xp[:n] = x
    yp = np.zeros(size)
    yp[:n] = y
    mask = np.zeros(size, dtype=bool)
    mask[:n] = True
    return Data(jnp.asarray(xp, dtype), jnp.asarray(yp, dtype), jnp.asarray(mask))
