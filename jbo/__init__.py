"""jbo: Bayesian optimization as composable JAX functions.

The public surface is small: a :class:`Space` of :class:`Real`, :class:`Integer` and
:class:`Categorical` parameters, the ask/tell :class:`Optimizer`, :func:`minimize` and
:func:`minimize_many`. Everything underneath (kernels, surrogates, models, inference, acquisitions, the
acquisition optimizer) is a module of pure functions and values meant to be composed directly, and a
piece of your own (a kernel, an acquisition, a surrogate, a model) runs through the same drivers.

``import jbo`` leaves JAX's configuration as it was: jbo computes in float64 inside its own runs
(:mod:`jbo.precision`), applies its XLA:CPU workarounds to its own programs (:mod:`jbo._xla_cpu`), and stores
its own compiled programs (:mod:`jbo.cache`). One documented exception: it sets ``OPENBLAS_NUM_THREADS=1`` in
the environment unless it is set (before numpy loads OpenBLAS, where it takes effect at all).
"""

import os as _os

# JAX's CPU Cholesky and triangular solves run in OpenBLAS, whose threads slow them down by an order of
# magnitude on a busy small machine (README, Design). One thread is the right default for the small
# dense problems of BO; it only takes effect if numpy was not imported before jbo, and an explicit
# OPENBLAS_NUM_THREADS from the user wins.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from jbo import acquisition, kernels, models, surrogates  # noqa: E402
from jbo.many import ManyResult, minimize_many  # noqa: E402
from jbo.optimizer import Optimizer, Result, minimize  # noqa: E402
from jbo.spaces import Categorical, Integer, Real, Space  # noqa: E402
from jbo.studies import StudyResult, study  # noqa: E402

_SUBMODULES = ("benchmarks", "cache", "executors", "inference", "integrations", "many", "optimize", "plotting",
               "precision", "spaces", "store", "studies")


def __getattr__(name):  # ``jbo.benchmarks.get_problem`` after a plain ``import jbo`` (PEP 562)
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"jbo.{name}")
    raise AttributeError(f"module 'jbo' has no attribute {name!r}")


__all__ = ["Space", "Real", "Integer", "Categorical", "Optimizer", "minimize", "Result", "minimize_many",
           "ManyResult", "study", "StudyResult", "models", "kernels", "acquisition", "surrogates"]
__version__ = "0.1.0"
