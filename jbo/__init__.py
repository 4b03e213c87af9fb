"""jbo: Bayesian optimization as composable JAX functions.

The public surface is small: a :class:`Space` of :class:`Real`, :class:`Integer` and
:class:`Categorical` parameters, the ask/tell :class:`Optimizer` and :func:`minimize`. Everything
underneath (kernels, models, inference, acquisitions, the acquisition optimizer) is a module of pure
functions meant to be composed directly.
"""

from jbo.optimizer import Optimizer, Result, minimize
from jbo.spaces import Categorical, Integer, Real, Space

__all__ = ["Space", "Real", "Integer", "Categorical", "Optimizer", "minimize", "Result"]
__version__ = "0.1.0"
