"""jbo: Bayesian optimization as composable JAX functions.

The public surface is small: a :class:`Space` of :class:`Real`, :class:`Integer` and
:class:`Categorical` parameters, the ask/tell :class:`Optimizer`, :func:`minimize` and
:func:`minimize_many`. Everything underneath (kernels, surrogates, models, inference, acquisitions, the
acquisition optimizer) is a module of pure functions and values meant to be composed directly, and a
piece of your own (a kernel, an acquisition, a surrogate, a model) runs through the same drivers.

``import jbo`` turns on float64 (JAX's ``jax_enable_x64``) unless ``JAX_ENABLE_X64`` is set.
"""

import os as _os

# JAX's CPU Cholesky and triangular solves run in OpenBLAS, whose threads slow them down by an order of
# magnitude on a busy small machine (README, Design). One thread is the right default for the small
# dense problems of BO; it only takes effect if numpy was not imported before jbo, and an explicit
# OPENBLAS_NUM_THREADS from the user wins.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Two XLA:CPU deadlocks of jax 0.10.2 (jbo/_xla_cpu.py): the concurrency-optimised scheduler is turned
# off before the CPU backend starts (an explicit XLA_FLAGS setting wins), and batched LAPACK calls are
# lowered on CPU to loops of unbatched ones (JBO_SERIAL_LAPACK=0 keeps JAX's lowering).
from jbo import _xla_cpu  # noqa: E402

_xla_cpu.disable_concurrency_optimized_scheduler()
_xla_cpu.serialize_batched_lapack()

import jax as _jax  # noqa: E402

# float64 wherever a user enters, the building blocks of an own BO step included (jbo's GPs factorise
# ill-conditioned Gram matrices); float32 is asked for per run (dtype="float32"), or for the building blocks
# by setting JAX_ENABLE_X64=0 before importing jbo (a run with the default dtype="float64" turns x64 on).
if "JAX_ENABLE_X64" not in _os.environ:
    _jax.config.update("jax_enable_x64", True)

from jbo import acquisition, kernels, models, surrogates  # noqa: E402
from jbo.many import ManyResult, minimize_many  # noqa: E402
from jbo.optimizer import Optimizer, Result, minimize  # noqa: E402
from jbo.spaces import Categorical, Integer, Real, Space  # noqa: E402
from jbo.studies import StudyResult, study  # noqa: E402

__all__ = ["Space", "Real", "Integer", "Categorical", "Optimizer", "minimize", "Result", "minimize_many",
           "ManyResult", "study", "StudyResult", "models", "kernels", "acquisition", "surrogates"]
__version__ = "0.1.0"
