"""jbo: Bayesian optimization as composable JAX functions.

The public surface is small: a :class:`Space` of :class:`Real`, :class:`Integer` and
:class:`Categorical` parameters, the ask/tell :class:`Optimizer` and :func:`minimize`. Everything
underneath (kernels, models, inference, acquisitions, the acquisition optimizer) is a module of pure
functions meant to be composed directly.
"""

import os as _os

# JAX's CPU Cholesky and triangular solves run in OpenBLAS, whose threads made them up to 50x
# slower on a busy 2-core machine (JAX-NOTES.md). One thread is the right default for the small
# dense problems of BO; it only takes effect if numpy was not imported before jbo, and an explicit
# OPENBLAS_NUM_THREADS from the user wins.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# XLA:CPU's concurrency-optimised scheduler (jax 0.10.2) deadlocked compiled suggestions: BOCK's
# program on a few points at the cube's corners waited forever with every runtime thread idle, and
# long ``minimize_many`` runs stopped the same way. The sequential scheduler ran the same programs to
# completion (XLA reads the flag when its CPU backend starts, so this must precede any computation).
# An explicit setting in XLA_FLAGS wins.
_SCHEDULER_FLAG = "--xla_cpu_enable_concurrency_optimized_scheduler"
if _SCHEDULER_FLAG not in _os.environ.get("XLA_FLAGS", ""):
    _os.environ["XLA_FLAGS"] = f"{_os.environ.get('XLA_FLAGS', '')} {_SCHEDULER_FLAG}=false".strip()

from jbo import cache as _cache  # noqa: E402

_cache.configure()

from jbo import models  # noqa: E402
from jbo.many import ManyResult, minimize_many  # noqa: E402
from jbo.optimizer import Optimizer, Result, minimize  # noqa: E402
from jbo.spaces import Categorical, Integer, Real, Space  # noqa: E402

__all__ = ["Space", "Real", "Integer", "Categorical", "Optimizer", "minimize", "Result", "minimize_many",
           "ManyResult", "models"]
__version__ = "0.1.0"
