"""Surrogate models. Each is a :class:`~jbo.models.base.Surrogate`: a tuple of pure functions."""

from jbo.models.base import Surrogate
from jbo.models.gp import exact_gp

__all__ = ["Surrogate", "exact_gp"]
