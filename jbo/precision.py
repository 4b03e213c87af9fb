"""jbo's float64, scoped to jbo's own work.

jbo's GPs factorise ill-conditioned Gram matrices, so its runs compute in float64 by default (``dtype=
"float64"``; ``"float32"`` is a run's choice). ``import jbo`` leaves JAX's ``jax_enable_x64`` as the user set
it: jbo enters float64 around its own traced and host work (:func:`scope`, a thread-local
``jax.enable_x64``), so a user's float32 program around jbo stays float32, objectives evaluated by
:func:`jbo.minimize` included. The building blocks (kernels, surrogates, :mod:`jbo.inference`, ...) compute in
the precision they are called in: a loop of one's own enters float64 itself (``jax.enable_x64(True)``, or
``jax.config.update("jax_enable_x64", True)``).
"""

from __future__ import annotations

import contextlib
import functools

import jax


def scope(dtype: str = "float64"):
    """A context in which JAX computes in float64 (for ``dtype="float64"``; for ``"float32"``, as it was)."""
    if dtype == "float64":
        return jax.enable_x64(True)
    return contextlib.nullcontext()


def float64(fn):
    """``fn`` called in :func:`scope` (jbo's entry points into JAX)."""

    @functools.wraps(fn)
    def scoped(*args, **kwargs):
        with jax.enable_x64(True):
            return fn(*args, **kwargs)

    return scoped
