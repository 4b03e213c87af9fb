r"""BOCK, Bayesian optimisation with cylindrical kernels (Oh, Gavves & Welling 2018; ``model="bock"``),
and the paper's Matérn baseline (``model="matern"``).

BOCK is the exact GP of :func:`jbo.surrogates.bock_surrogate` (the cylindrical kernel of eqs. 6–8:
a Matérn-5/2 on the Kumaraswamy-warped radius times :math:`\sum_p c_p (a_1^\top a_2)^p` on the
direction, with the centre rule of §3.3), every hyperparameter sampled (10 slice samples per
suggestion, :class:`~jbo.models.sampled.SampledConfig`), run by the step every sampled model shares
(:func:`jbo.models.sampled.step`). The kernel has ``P + 5`` parameters at any dimension, which is
what lets a GP run at 20–500 dimensions.

Three named variants (the paper's §4, Table 2):

* ``"bock"``: the paper's kernel (warped radius, ``P = 3``), the run started at the box's centre
  (:meth:`BOCK.default_design`), on standardised targets under jbo's priors, Yeo-Johnson warped
  (:mod:`jbo.warping`) at the suggestions where the model's evidence prefers the warp, so that its suggestions
  do not depend on the objective's units; the authors' priors in the
  objective's units, as their code runs the paper's tables, are ``units="objective"``;
* ``"bock-w"``: BOCK-W, no warping of the radius (``warp=False``);
* ``"bock-b"``: BOCK+B, one value-less "fake" observation on the boundary sphere in the direction of
  each test point, in the predictive variance only (``boundary=True``; footnote 4).

Domain. jbo's models see the unit cube; the kernel maps it to ``[-1, 1]^d`` inside the ball
``B(0, √d)`` (the cube's centre is the ball's origin, its corners lie on the sphere). The paper's
acquisition search runs Adam in the whole ball; here it runs in the cube (projected Adam, as for
every jbo model), so every point passed to the objective is inside the box. The anchors are a fresh
randomly shifted Sobol set per suggestion, as §4 asks (:func:`jbo.design.shifted`).

The acquisition search (:meth:`BOCK.default_maximize`) follows §4 and the reference code
(HyperSphere, ``BO/acquisition/acquisition_maximization.py``): the acquisition is scored on 20 000
Sobol points (``N_SPREAD``) plus 10 perturbations of good observations (``N_SPRAY``, standard
deviation 0.001 of the box width; the reference perturbs the best one, jbo's anchors pick among the
five best), and Adam refines the best 20 (``N_INIT``) with step size 0.01 in the
``[-1, 1]`` coordinates, i.e. 0.005 in the unit cube. The reference runs up to 500 Adam steps and
stops a start early once the acquisition changes by less than a relative 1e-9; a compiled search has
a static number of steps, and jbo takes 200, past which the best acquisition value found barely moves
at d = 20 (BENCHMARKS.md, design choices). Pass ``maximize=dict(num_steps=500)`` for the reference's
ceiling. jbo's default model (``units="standardised"``) first scores the anchors under one hyperparameter
sample and only the :data:`SCREEN` best under all of them (``maximize=dict(screen=0)`` scores all under all);
the paper's model (``units="objective"``) searches as the paper does.

The scoring of 20 000 anchors under 10 hyperparameter samples is evaluated in chunks of
:data:`CHUNK` points (:func:`chunked`), which bounds the memory of a suggestion (and of
``jbo.minimize_many``, which ``vmap``-s whole runs over seeds) without changing any value.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import ClassVar

import jax
import jax.numpy as jnp

from jbo import checks
from jbo.models import sampled
from jbo.models.base import check_bool
from jbo.models.gp import GP
from jbo.models.sampled import StepConfig
from jbo.optimize import MaximizeConfig
from jbo.surrogates.cylindrical import bock_surrogate
from jbo.types import Inputs, Surrogate

#: Points per chunk when a surrogate predicts at many points at once (the anchors): large enough
#: that each chunk is a few large matrix products, small enough that 10 samples × N = 600 rows stay
#: within a few hundred MB.
CHUNK = 2048

#: What BOCK's targets are measured in (:attr:`BOCK.units`).
UNITS = ("standardised", "objective")
#: Whose priors BOCK's hyperparameters take (:attr:`BOCK.priors`).
PRIORS = ("jbo", "authors")


#: Anchors that :meth:`BOCK.default_maximize` scores under every hyperparameter sample, after all of them were
#: scored under one (``units="standardised"``): the search's cost then grows with 20 000 + 10 · 1 024 predictions, not
#: 10 · 20 000, and Adam starts from the same best 20 wherever the samples agree on the ranking.
SCREEN = 1024


def paper_maximize() -> MaximizeConfig:
    """BOCK's acquisition search (§4 and the reference code; see the module docstring)."""
    return MaximizeConfig(num_anchors=20000, num_local=10, local_scale=0.001, top_k=20, num_steps=200,
                          learning_rate=0.005)


@dataclasses.dataclass(frozen=True)
class BOCK(StepConfig):
    """BOCK's cylindrical-kernel GP.

    Attributes:
      warp: Kumaraswamy warp of the radius (``False``: BOCK-W, ``model="bock-w"``).
      boundary: BOCK+B's fake boundary point in the predictive variance (``model="bock-b"``).
      degree: ``P``, the highest power of the angular kernel (eq. 7; the paper's default is 3).
      noise_floor: with jbo's priors only (``priors="jbo"``): added to the sampled noise variance, in the
        units of the standardised targets (default ``1e-10``; jbo's GP's is ``1e-6``). It bounds how finely the
        model resolves values: where a few values dominate the targets' spread (Rosenbrock's corners), a floor
        of ``1e-6`` of that spread can exceed the differences near the optimum (BENCHMARKS.md, ``bock_table1``).
        Under the authors' priors their noise bound e⁻¹² (in the targets' units) is the floor, as in the
        reference code.
      units: ``"standardised"`` (default): standardised targets (jbo's priors unless ``priors`` says
        otherwise), invariant to the objective's scale and offset, their Yeo-Johnson warp kept at each
        suggestion where the model's evidence prefers it (``evidence_warp=True``, the default). On BOCK's
        Rosenbrock a fixed warp compresses values of 10⁶ in the corners so that the region near the optimum
        is resolved (BENCHMARKS.md, ``bock_table1``, row ``bock-yj``), while on repeated Branin and Hartmann6
        the unwarped model does better (row ``bock-centre``); the evidence chooses per suggestion (row
        ``bock-ev-floor``, these defaults). ``"objective"`` (the paper's model as the authors' code runs it, used
        by the reproduction tables): the targets in the objective's own units
        (centred) under the authors' priors, whose bounds are stated in those units (signal variance
        ``≤ e²⁰``, noise variance in ``[e⁻¹², e¹⁶]``, mean between the smallest and largest value;
        :func:`jbo.surrogates.bock_surrogate`). The model is then *not* invariant to the
        objective's scale. Where the values' spread exceeds ``e¹⁰ ≈ 2·10⁴`` (BOCK's Rosenbrock,
        values to 10⁶) the signal-variance bound binds, holding the GP's prior variance far below
        the values' variance (4-11 % on Rosenbrock-20): that is what carries the paper's Rosenbrock
        runs away from the centre (BENCHMARKS.md, ``bock_table1``). Where the values' spread is
        below ``e⁻⁶ ≈ 2.5·10⁻³`` the noise bound e⁻¹² is comparable to it and the model smooths
        the values away: rescale such an objective, or use ``"standardised"``.
      priors: ``"jbo"`` (jbo's priors for standardised targets: a log-normal signal variance with median 1, a
        horseshoe noise variance above ``noise_floor``, a normal constant mean; :func:`jbo.surrogates.exact_gp`) or
        ``"authors"`` (HyperSphere's, :func:`jbo.surrogates.bock_surrogate`: log-uniform signal variance on
        ``[e⁻¹², e²⁰]``, noise variance on ``[e⁻¹², e¹⁶]`` with no floor beyond that bound, constant mean uniform
        between the smallest and largest target). Left unset, each ``units`` takes its own: ``"jbo"`` for
        standardised targets, ``"authors"`` in the objective's units (the only priors there). ``"authors"`` with
        ``units="standardised"`` states the authors' priors on the standardised (warped) targets: still
        scale-free, since those targets do not depend on the objective's units.
      evidence_warp: see :class:`~jbo.models.sampled.StepConfig`; on by default here (off in the objective's
        units, whose priors a warp would change: ``units="objective"`` sets it off unless given).
      inference, num_samples, num_burnin, num_warmup, thin, map_restarts, num_chains, classifier:
        see :class:`~jbo.models.sampled.StepConfig` (slice sampling, 10 samples per suggestion, as
        the paper).
    """

    kind: ClassVar[str] = "bock"
    # what a journal lacking these fields ran with (written before they existed)
    recorded_defaults: ClassVar[dict] = {"units": "standardised", "evidence_warp": False, "noise_floor": 1e-6}
    evidence_warp: bool | None = None
    warp: bool = True
    boundary: bool = False
    degree: int = 3
    noise_floor: float = 1e-10
    units: str = "standardised"
    priors: str | None = None

    @property
    def name(self) -> str:
        """``"bock-b"`` with the boundary point, else ``"bock-w"`` without the warp, else ``"bock"`` (the
        fields carry the rest: ``BOCK(warp=False, boundary=True)`` is ``"bock-b"`` with ``warp=False``)."""
        return "bock-b" if self.boundary else "bock-w" if not self.warp else "bock"

    def validate(self) -> None:
        if self.evidence_warp is None:
            object.__setattr__(self, "evidence_warp", self.units == "standardised")
        super().validate()
        check_bool(self, "warp", "boundary")
        object.__setattr__(self, "degree", checks.integer("degree", self.degree, 0))
        object.__setattr__(self, "noise_floor", checks.positive("noise_floor", self.noise_floor))
        if self.units not in UNITS:
            raise ValueError(f"units must be one of {', '.join(map(repr, UNITS))}, got {self.units!r}")
        if self.priors is None:
            object.__setattr__(self, "priors", "jbo" if self.units == "standardised" else "authors")
        if self.priors not in PRIORS:
            raise ValueError(f"priors must be one of {', '.join(map(repr, PRIORS))}, got {self.priors!r}")
        if self.units == "objective" and self.evidence_warp:
            raise ValueError('evidence_warp=True needs BOCK(units="standardised"): the objective-unit priors are '
                             "stated in the objective's own units, which a warp changes")
        if self.units == "objective" and self.priors != "authors":
            raise ValueError(f'priors={self.priors!r} needs BOCK(units="standardised"): jbo\'s priors are stated for '
                             "standardised targets")

    def default_maximize(self) -> MaximizeConfig:
        """The paper's search (:func:`paper_maximize`); on standardised targets its anchors screened first
        (:data:`SCREEN`), the objective-unit model keeping the paper's search as the authors ran it."""
        return paper_maximize()._replace(screen=SCREEN) if self.units == "standardised" else paper_maximize()

    def default_output_warping(self) -> str:
        """Yeo-Johnson on standardised targets (scale-free, and resolving values that span decades); none in the
        objective's units, whose priors are stated in those units."""
        return "yeo-johnson" if self.units == "standardised" and not self.evidence_warp else "none"

    def check_output_warping(self, name: str) -> None:
        super().check_output_warping(name)
        if self.units == "objective" and name != "none":
            raise ValueError(f'output_warping={name!r} needs BOCK(units="standardised"): the objective-unit priors '
                             "are stated in the objective's own units, which a warp changes")

    def default_design(self) -> str:
        """The box's centre first (BOCK's prior assumption, §3: the optimum lies near the centre; the
        reference code's runs start there and at one uniform point), then the Sobol set."""
        return "centre"

    def surrogate_for(self, space) -> Surrogate:
        """BOCK's GP (cached per configuration: compiled programs key on its identity), its predictions
        over many points evaluated in chunks (:func:`chunked`)."""
        return _chunked_surrogate(bock_surrogate(warp=self.warp, boundary=self.boundary, degree=self.degree,
                                                 noise_floor=self.noise_floor,
                                                 authors_priors=self.priors == "authors"))

    def step(self, space, acquisition, state, inputs, key):
        """One suggestion (:func:`jbo.models.sampled.step`), on targets in the objective's units with
        ``units="objective"``."""
        if self.units == "objective":
            inputs = in_objective_units(inputs)
        return sampled.step(self.surrogate_for(space), self, acquisition, state, inputs, key)


@dataclasses.dataclass(frozen=True)
class Matern(GP):
    """The BOCK paper's "Matérn" baseline (its §4, footnote 3): jbo's exact GP with one shared
    lengthscale (``ard=False``) and BOCK's acquisition search (20 000 fresh Sobol anchors, the top 20
    refined by Adam), ``model="matern"``. Every field is :class:`~jbo.models.gp.GP`'s."""

    kind: ClassVar[str] = "matern"
    ard: bool = False

    def default_maximize(self) -> MaximizeConfig:
        return paper_maximize()

    def default_output_warping(self) -> str:
        """None: the paper's baseline, on the standardised targets as they are."""
        return "none"

    def default_acquisition(self):
        """EI: the paper's baseline."""
        return "ei"

    def default_trust_region(self) -> bool:
        """Off: the paper's baseline searches the whole box."""
        return False

    def surrogate_for(self, space) -> Surrogate:
        return _chunked_surrogate(super().surrogate_for(space))


def chunked(predict, size: int = CHUNK):
    """``predict(posterior, x)`` evaluated over ``x`` in chunks of ``size`` rows when ``x`` has more
    (``lax.map``; the same values, bounded memory)."""

    def wrapped(posterior, x):
        m = x.shape[0]
        if m <= size:
            return predict(posterior, x)
        count = -(-m // size)
        pad = count * size - m
        xs = jnp.concatenate([x, jnp.broadcast_to(x[:1], (pad, x.shape[1]))]) if pad else x
        mean, var = jax.lax.map(lambda chunk: predict(posterior, chunk), xs.reshape(count, size, x.shape[1]))
        return mean.reshape(-1)[:m], var.reshape(-1)[:m]

    return wrapped


@functools.lru_cache(maxsize=None)
def _chunked_surrogate(surrogate: Surrogate) -> Surrogate:
    return surrogate._replace(predict=chunked(surrogate.predict))


def in_objective_units(inputs: Inputs) -> Inputs:
    """The targets and the incumbent back in the objective's units (centred: ``y_std · scale``).

    Expected improvement in those units is the standardised one times ``scale``: the same argmax.
    """
    if inputs.scale is None:
        raise ValueError('BOCK(units="objective") needs the objective\'s scale (Inputs.scale); this caller '
                         "passed None")
    scale = jnp.asarray(inputs.scale, inputs.data.y.dtype)
    return inputs._replace(data=inputs.data._replace(y=inputs.data.y * scale), best=inputs.best * scale)
