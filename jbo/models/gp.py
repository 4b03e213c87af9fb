"""The exact GP model (``model="gp"``): :func:`jbo.surrogates.exact_gp` on any kernel, every hyperparameter
inferred, run by the step every sampled model shares (:func:`jbo.models.sampled.step`)."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

from jbo import acquisition as acq
from jbo import kernels
from jbo.escape import EscapeConfig
from jbo.kernels import Kernel
from jbo.models import sampled
from jbo.models.base import check_bool
from jbo.models.sampled import StepConfig
from jbo.surrogates.gp import exact_gp
from jbo.types import Surrogate


@functools.lru_cache(maxsize=64)
def gp_surrogate(kernel: Kernel) -> Surrogate:
    """The exact GP on ``kernel`` (the same object for equal kernels: compiled programs key on it)."""
    return exact_gp(kernel)


@dataclasses.dataclass(frozen=True)
class GP(StepConfig):
    """The exact GP model with a constant mean (``model="gp"``).

    Attributes:
      kernel: a name, ``"matern52"`` (default), ``"se"`` or ``"rq"`` (:data:`jbo.kernels.KERNELS`), or a
        kernel object: ``jbo.kernels.Matern52() + jbo.kernels.Linear()``, a class of your own.
        ``kernel=jbo.kernels.Matern52()`` is the model of ``kernel="matern52"``.
      warp: Kumaraswamy input warping of every dimension (Snoek et al. 2014).
      ard: one lengthscale per dimension (``False``: one shared lengthscale, the "Matérn" baseline
        of the BOCK paper); for a named kernel (a kernel object says it itself: ``Matern52(ard=False)``).
      escape: leave a converged basin for a local search elsewhere (:mod:`jbo.escape`): an
        :class:`~jbo.escape.EscapeConfig`, a dict of some of its fields, ``True`` (its defaults) or
        ``False`` (the default: measured, it helps on Hartmann6 and costs on Levy, Alpine01 and
        Hartmann3; BENCHMARKS.md, escape_ablation).
      inference, num_samples, num_burnin, num_warmup, thin, map_restarts, num_chains, classifier,
        evidence_warp: see :class:`~jbo.models.sampled.StepConfig`.

    The run's targets are Yeo-Johnson warped, its acquisition is UCB (EI under constraints) and its search
    keeps to a trust region unless its settings say otherwise (:meth:`default_output_warping`,
    :meth:`default_acquisition`, :meth:`default_trust_region`).
    """

    kind: ClassVar[str] = "gp"
    continued_chain: ClassVar[bool] = True  # warm slice fits discard no sweeps (StepConfig.num_warmup)
    cli_types: ClassVar[dict] = {"kernel": str, "escape": bool}
    kernel: Any = "matern52"
    warp: bool = False
    ard: bool = True
    escape: Any = False

    def validate(self) -> None:
        super().validate()
        kernels.check(self.kernel)
        check_bool(self, "warp", "ard")
        if self.ard != type(self).ard and not isinstance(self.kernel, str):
            raise ValueError(f"ard={self.ard} applies to a named kernel; a kernel object says it itself "
                             "(jbo.kernels.Matern52(ard=False))")
        object.__setattr__(self, "escape", EscapeConfig.from_option(self.escape))

    def default_output_warping(self) -> str:
        """Yeo-Johnson (:mod:`jbo.warping`; why: BENCHMARKS.md, ``suite``); none with ``evidence_warp`` (the model
        warps)."""
        return "none" if self.evidence_warp else "yeo-johnson"

    def default_acquisition(self):
        r"""UCB (:math:`\beta = 2`), and EI in a constrained run, where UCB has no product with
        :math:`P[\text{feasible}]` (:class:`jbo.acquisition.ConstraintAware`; why: BENCHMARKS.md, ``suite``)."""
        return acq.ConstraintAware("ucb", "ei")

    def default_trust_region(self) -> bool:
        """On (TuRBO-1's trust region, :mod:`jbo.trust`; why: BENCHMARKS.md, ``suite``) unless the escape rule is:
        it leaves the incumbent's basin for a search elsewhere, which a region around the incumbent would forbid."""
        return not self.escape

    @property
    def covariance(self) -> Kernel:
        """The kernel object the options stand for."""
        return kernels.resolve(self.kernel, self.ard, self.warp)

    def surrogate_for(self, space) -> Surrogate:
        return gp_surrogate(self.covariance)

    def step(self, space, acquisition, state, inputs, key):
        """One suggestion (:func:`jbo.models.sampled.step` on the exact GP, with the escape rule)."""
        return sampled.step(self.surrogate_for(space), self, acquisition, state, inputs, key,
                            escape_config=self.escape or None)
