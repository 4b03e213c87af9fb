"""Numerically guarded dense linear algebra shared by the GP-type models."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular  # noqa: F401  (re-exported)


def full_precision(fn):
    """``fn`` traced with every matrix product in full precision (``jax.default_matmul_precision``).

    GPUs run float32 products in TF32 by default (TPUs in bfloat16 passes): a float32 Gram matrix
    came out 5e-4 away from its float64 value on an H200, three digits lost before any solve. jbo's
    compiled entry points (the suggestion, whole runs, the GP's functions) trace under this, so
    the float32 path keeps float32 accuracy; on CPUs and in float64 nothing changes. The jitted
    function itself is ``wrapped.jitted``.
    """

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with jax.default_matmul_precision("highest"):
            return fn(*args, **kwargs)

    wrapped.jitted = getattr(fn, "jitted", fn)  # the jax.jit function, also under a jbo.cache.Program
    return wrapped


def default_jitter(dtype) -> float:
    """Initial diagonal jitter: ``1e-8`` in float64, ``1e-5`` in float32 (relative to unit-scale data)."""
    return 1e-8 if jnp.dtype(dtype) == jnp.float64 else 1e-5


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def cholesky(matrix, jitter: float = 1e-8, max_tries: int = 6):
    """Lower Cholesky factor of a symmetric PSD matrix, adding diagonal jitter until it succeeds.

    Starts with ``jitter`` and multiplies it by 10 after each failed factorisation (one that
    produced a NaN), at most ``max_tries`` times; if all fail the factor is NaN and callers turn their
    log-likelihood into ``-inf``. The jitter escalation is invisible to differentiation: the JVP is the
    standard one of the factor actually returned, ``dL = L Φ(L⁻¹ dK L⁻ᵀ)`` (Murray, 2016), so this
    works under ``grad`` and ``vmap`` despite its ``while_loop``.

    Args:
      matrix: ``(n, n)`` symmetric matrix.
      jitter: first diagonal jitter (must be > 0 for escalation to help: 0 * 10 = 0).
      max_tries: number of escalations after the first attempt (0: plain Cholesky, no loop).
    Returns:
      ``(n, n)`` lower-triangular factor.
    """
    eye = jnp.eye(matrix.shape[-1], dtype=matrix.dtype)
    if max_tries == 0:
        return jnp.linalg.cholesky(matrix + jitter * eye)

    # A failed factorisation comes back all NaN (JAX fills the whole factor), so one entry tells.
    def failed(state):
        factor, tries, _ = state
        return jnp.isnan(factor[0, 0]) & (tries <= max_tries)

    def attempt(state):
        _, tries, current = state
        return jnp.linalg.cholesky(matrix + current * eye), tries + 1, current * 10.0

    # Every attempt, the first included, is the loop's one body: one factorisation in the program.
    start = jnp.full_like(matrix, jnp.nan)
    factor, _, _ = jax.lax.while_loop(failed, attempt, (start, 0, jnp.asarray(jitter, matrix.dtype)))
    return factor


@cholesky.defjvp
def _cholesky_jvp(jitter, max_tries, primals, tangents):
    (matrix,), (dmatrix,) = primals, tangents
    factor = cholesky(matrix, jitter, max_tries)
    inner = solve_triangular(factor, dmatrix, lower=True)
    inner = solve_triangular(factor, inner.T, lower=True).T
    phi = jnp.tril(inner) - 0.5 * jnp.diag(jnp.diag(inner))
    return factor, factor @ phi


def cho_solve(factor, rhs):
    """Solve ``(L Lᵀ) x = rhs`` given the lower factor ``L``."""
    return solve_triangular(factor, solve_triangular(factor, rhs, lower=True), lower=True, trans=1)
