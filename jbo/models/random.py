"""Random search (``model="random"``): uniform points of the unit cube, no model.

It is a model like the others so that every driver (ask/tell, ``minimize``, ``minimize_many``) runs
it through the same step; it has no initial design (every point is already random).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax

from jbo.models.base import Model, ModelConfig
from jbo.optimize import MaximizeConfig


@dataclasses.dataclass(frozen=True)
class Random(ModelConfig):
    """Uniform random search."""

    kind: ClassVar[str] = "random"

    def default_maximize(self) -> MaximizeConfig:
        return MaximizeConfig()


def init(config: Random, space, dtype, key):
    return ()


def step(config: Random, space, acquisition, state, inputs, key):
    """A uniform point of the unit cube."""
    return jax.random.uniform(key, inputs.anchors.shape[-1:], inputs.anchors.dtype), state, {}


MODEL = Model(Random, init, step)
