"""Workarounds for two XLA:CPU runtime deadlocks (jaxlib 0.10), applied where that JAX needs them.

Both stalls leave every runtime thread idle and the caller waiting forever in ``block_until_ready``:

1. XLA:CPU's concurrency-optimised scheduler deadlocked compiled suggestions (BOCK's program on a few
   points at the cube's corners, long ``minimize_many`` runs). The sequential scheduler runs the same
   programs to completion: jbo compiles its own programs with it (:func:`compiler_options`, per program,
   so the user's programs keep XLA's default). An explicit setting in ``XLA_FLAGS`` wins.

2. jaxlib's batched LAPACK kernels (``lapack_*_ffi``: the triangular solve, Cholesky, ...) split a
   batch into chunks, schedule them on XLA's intra-op thread pool and block that thread until they are
   done (``ParallelBatchMap``). When as many such calls run at once as the pool has threads, say two
   independent batched solves of a ``vmap`` over hyperparameter samples on a 2-core machine, every
   thread blocks and no thread is left to run the chunks: gdb showed both ``tf_XLAEigen`` threads in
   ``lapack_dtrsm_ffi`` → ``ParallelBatchMap`` → ``BlockingCounter::Wait``. Seen with the ``matern``
   model in float64 on 20-d Rosenbrock: the ask/tell loop stopped at 110 evaluations and
   ``minimize_many`` within seconds at 200. :func:`serialize_batched_lapack` lowers a batched call of
   these primitives on CPU to a loop over the batch of unbatched calls, which LAPACK runs inline, so no
   thread ever waits on the pool. Each matrix is factorised or solved by the same LAPACK routine as
   before, so the values are unchanged; the batch only loses the parallelism across its matrices.
   ``JBO_SERIAL_LAPACK=0`` in the environment leaves JAX's lowering alone.
"""

from __future__ import annotations

import math
import os

_SCHEDULER_FLAG = "xla_cpu_enable_concurrency_optimized_scheduler"
AFFECTED = (0, 11)  # jaxlib releases before this one have both deadlocks (seen on 0.10.2)


def affected() -> bool:
    """Whether the installed jaxlib is one whose XLA:CPU deadlocks (releases before :data:`AFFECTED`)."""
    import importlib.metadata

    try:
        version = tuple(int(part) for part in importlib.metadata.version("jaxlib").split(".")[:2])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False
    return version < AFFECTED


def compiler_options(backend: str) -> dict:
    """XLA options jbo compiles its own programs with: the sequential scheduler on an affected CPU backend,
    unless ``XLA_FLAGS`` sets the scheduler."""
    if backend != "cpu" or not affected() or _SCHEDULER_FLAG in os.environ.get("XLA_FLAGS", ""):
        return {}
    return {_SCHEDULER_FLAG: False}


def _batched_as_loop(primitive, original):
    """A CPU lowering of ``primitive`` that runs a batched call as ``lax.map`` over unbatched ones.

    Every operand and result of these primitives carries the batch in its leading dimensions, those of
    the first operand before its last two (matrix) dimensions.
    """
    import jax
    from jax.interpreters import mlir

    def rule(ctx, *operands, **params):
        batch = ctx.avals_in[0].shape[:-2]
        size = math.prod(batch)
        if size <= 1:
            return original(ctx, *operands, **params)

        def looped(*arrays):
            flat = tuple(a.reshape((size,) + a.shape[len(batch):]) for a in arrays)
            out = jax.lax.map(lambda args: primitive.bind(*args, **params), flat)
            outs = out if primitive.multiple_results else [out]
            outs = [o.reshape(batch + o.shape[1:]) for o in outs]
            return outs if primitive.multiple_results else outs[0]

        return mlir.lower_fun(looped, multiple_results=primitive.multiple_results)(ctx, *operands)

    return rule


def serialize_batched_lapack() -> bool:
    """Install the looped CPU lowering for JAX's batched LAPACK primitives (see the module docstring).

    Returns:
      Whether it was installed (``False`` when ``JBO_SERIAL_LAPACK=0``, by default on a jaxlib not
      :func:`affected`, or when this JAX keeps its lowerings elsewhere: the workaround then stays off).
    """
    if os.environ.get("JBO_SERIAL_LAPACK", "1" if affected() else "0") == "0":
        return False
    try:
        from jax._src.interpreters import mlir as mlir_internal
        from jax._src.lax import linalg

        table = mlir_internal._platform_specific_lowerings["cpu"]
        primitives = [getattr(linalg, name) for name in
                      ("triangular_solve_p", "cholesky_p", "lu_p", "eigh_p", "geqrf_p", "householder_product_p",
                       "svd_p") if hasattr(linalg, name)]
    except (ImportError, AttributeError, KeyError):
        return False
    from jax.interpreters import mlir

    for primitive in primitives:
        entry = table.get(primitive)
        if entry is None or getattr(entry.rule, "_jbo_serialized", False):
            continue
        rule = _batched_as_loop(primitive, entry.rule)
        rule._jbo_serialized = True
        mlir.register_lowering(primitive, rule, platform="cpu")
    return True
