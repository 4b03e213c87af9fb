"""The arc-kernel GP for conditional spaces (Swersky et al. 2014; ``model="arc"``).

The exact GP of :mod:`jbo.surrogates.gp` with :class:`jbo.kernels.Arc` over the space's relevance
mask: each parameter is embedded on an arc whose radius ``ω`` is its inverse lengthscale and whose angle
``ρ`` sets how far "inactive" sits from every active value.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

from jbo.kernels import KERNELS, Stationary, make_arc_kernel
from jbo.models.base import check_choice
from jbo.models.sampled import StepConfig
from jbo.surrogates.gp import exact_gp
from jbo.types import Surrogate


@dataclasses.dataclass(frozen=True)
class Arc(StepConfig):
    """The arc-kernel GP.

    Attributes:
      kernel: the distance profile: ``"matern52"``, ``"se"``, ``"rq"`` or a
        :class:`~jbo.kernels.Stationary` kernel object (its lengthscales are replaced by the arc's ``ω``).
      inference, num_samples, num_burnin, num_warmup, thin, map_restarts, num_chains, classifier, evidence_warp: see
        :class:`~jbo.models.sampled.StepConfig`.
    """

    kind: ClassVar[str] = "arc"
    cli_types: ClassVar[dict] = {"kernel": str}
    kernel: Any = "matern52"

    def validate(self) -> None:
        super().validate()
        if not isinstance(self.kernel, Stationary):
            check_choice("kernel", self.kernel, sorted(KERNELS))

    def surrogate_for(self, space) -> Surrogate:
        return arc_surrogate(self.kernel, space)


@functools.lru_cache(maxsize=32)
def arc_surrogate(kernel, space) -> Surrogate:
    """The exact GP with the arc kernel on ``kernel``'s profile over the relevance mask of ``space``
    (the same object for equal arguments: compiled programs key on it)."""
    return exact_gp(make_arc_kernel(kernel, space.relevance))
