"""Random search (``model="random"``): uniform points of the unit cube, no model.

It is a model like the others so that every driver (ask/tell, ``minimize``, ``minimize_many``) runs
it through the same step; it has no initial design (every point is already random).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax

from jbo.models.base import ModelConfig


@dataclasses.dataclass(frozen=True)
class Random(ModelConfig):
    """Uniform random search."""

    kind: ClassVar[str] = "random"
    uses_initial_design: ClassVar[bool] = False

    def step(self, space, acquisition, state, inputs, key):
        """A uniform point of the unit cube (pending points, feasibility and constraints change nothing)."""
        return jax.random.uniform(key, inputs.anchors.shape[-1:], inputs.anchors.dtype), state, {}
