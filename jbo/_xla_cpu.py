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
   ``minimize_many`` within seconds at 200. jbo lowers a batched call of
   these primitives on CPU to a loop over the batch of unbatched calls, which LAPACK runs inline, so no
   thread ever waits on the pool. Each matrix is factorised or solved by the same LAPACK routine as
   before, so the values are unchanged; the batch only loses the parallelism across its matrices. jbo
   lowers its own programs so (:func:`serial_lapack`, around :class:`jbo.cache.Program`'s and whole runs'
   lowering); the user's programs keep JAX's lowering. ``JBO_SERIAL_LAPACK=0`` turns it off, ``=1`` on where
   the jaxlib is not :func:`affected`.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading

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


_PRIMITIVES = ("triangular_solve_p", "cholesky_p", "lu_p", "eigh_p", "geqrf_p", "householder_product_p", "svd_p")
_LOCK = threading.RLock()
_DEPTH = [0]
_SAVED: dict = {}


def _cpu_lowerings():
    """JAX's table of CPU lowering rules and jbo's looped rule for each LAPACK primitive in it, or ``None``.

    The table is an attribute of the public module ``jax.interpreters.mlir`` (``_platform_specific_lowerings``);
    where this JAX has no such table, or the primitives are elsewhere, the workaround is unavailable and
    :func:`serial_lapack` does nothing (feature-detected; the fallback tested by ``tests/test_good_citizen.py``).
    """
    import jax.lax.linalg as linalg
    from jax.interpreters import mlir

    table = getattr(mlir, "_platform_specific_lowerings", {}).get("cpu")
    if table is None:
        return None
    rules = {}
    for name in _PRIMITIVES:
        primitive = getattr(linalg, name, None)
        entry = None if primitive is None else table.get(primitive)
        if entry is not None and hasattr(entry, "rule"):
            rules[primitive] = (entry, _batched_as_loop(primitive, entry.rule))
    return table, rules


def enabled() -> bool:
    """Whether jbo lowers batched LAPACK calls as loops: on an :func:`affected` jaxlib unless
    ``JBO_SERIAL_LAPACK=0``, or wherever ``JBO_SERIAL_LAPACK=1``."""
    return os.environ.get("JBO_SERIAL_LAPACK", "1" if affected() else "0") != "0"


@contextlib.contextmanager
def serial_lapack():
    """Within this context (jbo lowering its own programs) batched LAPACK calls lower on CPU to loops of unbatched
    ones (see the module docstring); outside it, JAX's own lowering, for the user's programs too. Re-entrant and
    thread-safe; a no-op where not :func:`enabled` or where this JAX keeps its lowerings elsewhere."""
    found = _cpu_lowerings() if enabled() else None
    if found is None:
        yield
        return
    table, rules = found
    with _LOCK:
        if _DEPTH[0] == 0:
            from jax.interpreters import mlir

            for primitive, (entry, rule) in rules.items():
                _SAVED[primitive] = entry
                mlir.register_lowering(primitive, rule, platform="cpu", inline=getattr(entry, "inline", True))
        _DEPTH[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH[0] -= 1
            if _DEPTH[0] == 0:
                for primitive, entry in _SAVED.items():
                    table[primitive] = entry
                _SAVED.clear()
