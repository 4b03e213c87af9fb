"""The arc-kernel GP for conditional spaces (Swersky et al. 2014; ``model="arc"``).

The exact GP of :mod:`jbo.models.gp` with :class:`jbo.kernels.Arc` over the space's relevance mask:
each parameter is embedded on an arc whose radius ``ω`` is its inverse lengthscale and whose angle
``ρ`` sets how far "inactive" sits from every active value.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import ClassVar

from jbo import inference
from jbo.kernels import KERNELS, make_arc_kernel
from jbo.models import sampled
from jbo.models.base import Model, Surrogate, check_choice
from jbo.models.gp import exact_gp
from jbo.models.sampled import StepConfig
from jbo.optimize import MaximizeConfig


@dataclasses.dataclass(frozen=True)
class Arc(StepConfig):
    """The arc-kernel GP.

    Attributes:
      kernel: the distance profile, ``"matern52"``, ``"se"`` or ``"rq"``.
      inference, num_samples, num_burnin, num_warmup, thin, map_restarts, classifier: see
        :class:`~jbo.models.sampled.StepConfig`.
    """

    kind: ClassVar[str] = "arc"
    kernel: str = "matern52"

    def validate(self) -> None:
        super().validate()
        check_choice("kernel", self.kernel, sorted(KERNELS))

    def default_maximize(self) -> MaximizeConfig:
        return MaximizeConfig()


@functools.lru_cache(maxsize=32)
def surrogate_for(kernel: str, space) -> Surrogate:
    """The exact GP with the arc kernel on ``kernel``'s profile over the relevance mask of ``space``
    (cached per space: compiled programs key on the surrogate)."""
    return exact_gp(make_arc_kernel(kernel, space.relevance))


def init(config: Arc, space, dtype, key) -> sampled.SampledState:
    data = inference.example_data(space.dim, dtype)
    return sampled.init(surrogate_for(config.kernel, space), data, config, key)


def step(config: Arc, space, acquisition, state, inputs, key):
    """One suggestion (:func:`jbo.models.sampled.step` on the arc GP)."""
    return sampled.step(surrogate_for(config.kernel, space), config, acquisition, state, inputs, key)


MODEL = Model(Arc, init, step)
