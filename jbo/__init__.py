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

# Two XLA:CPU deadlocks of jax 0.10.2 (jbo/_xla_cpu.py): the concurrency-optimised scheduler is turned
# off before the CPU backend starts (an explicit XLA_FLAGS setting wins), and batched LAPACK calls are
# lowered on CPU to loops of unbatched ones (JBO_SERIAL_LAPACK=0 keeps JAX's lowering).
from jbo import _xla_cpu  # noqa: E402

_xla_cpu.disable_concurrency_optimized_scheduler()
_xla_cpu.serialize_batched_lapack()

from jbo import cache as _cache  # noqa: E402

_cache.configure()

from jbo import models  # noqa: E402
from jbo.many import ManyResult, minimize_many  # noqa: E402
from jbo.optimizer import Optimizer, Result, minimize  # noqa: E402
from jbo.spaces import Categorical, Integer, Real, Space  # noqa: E402

__all__ = ["Space", "Real", "Integer", "Categorical", "Optimizer", "minimize", "Result", "minimize_many",
           "ManyResult", "models"]
__version__ = "0.1.0"
