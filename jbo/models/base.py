"""The contracts every model in jbo implements: a :class:`Surrogate` and a :class:`Model`.

A *surrogate* is the probabilistic part, a tuple of pure functions over padded data (the exact GP,
BLR on a basis, the tree GP). A *model* is what the BO loop runs: a validated, serialisable config
plus two pure functions over padded arrays,

* ``init(config, space, dtype, key) -> state``: the PyTree a model carries from one suggestion to
  the next (where its fits start, network weights), with the same structure and shapes at every
  step; ``key`` draws its cold start (prior draws), so the per-suggestion program holds no sampling;
* ``step(config, space, acquisition, state, inputs, key) -> (x, state, info)``: fit to
  ``inputs.data`` and maximise ``acquisition`` (static, an :class:`Acquisition`); ``x`` ``(D,)`` in
  the unit cube, ``info`` a dict of arrays.

``step`` is traceable: the loop compiles it once per padded size for ask/tell, and ``lax.scan`` runs
it for a whole run on a JAX objective (``jbo.minimize_many``). Models never import the loop.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar, NamedTuple

import jax.numpy as jnp

from jbo.data import Data


class Surrogate(NamedTuple):
    """A probabilistic surrogate as a tuple of pure functions.

    Attributes:
      name: short name (``"gp"``, ...).
      prior: numpyro model fragment ``prior(data) -> params``: samples every hyperparameter as a
        site and returns them as the params PyTree that ``condition`` takes (``data`` gives shapes).
      log_likelihood: ``log_likelihood(params, data) -> scalar``, the marginal likelihood. Prior plus
        this is the log joint that MAP maximises and the samplers sample
        (:func:`jbo.inference.joint_model`).
      condition: ``condition(params, data) -> posterior``, the per-sample work (a Cholesky
        factorisation, say) done once before the acquisition is evaluated many times.
      predict: ``predict(posterior, x) -> (mean, var)`` of the latent function at ``x`` ``(m, D)``,
        both ``(m,)``, on the standardised scale, noise excluded.
      fantasize: ``fantasize(posterior, x, mask, y=None) -> posterior`` conditioned on extra points
        ``x`` (rows where ``mask``) observed at ``y``; ``y=None`` is their own predictive mean (the
        kriging believer). Pending evaluations enter this way (believer, or Monte Carlo fantasies:
        ``y`` drawn from ``predict_joint``). A surrogate that can only take the believer raises on a
        ``y``.
      predict_joint: ``predict_joint(posterior, x) -> (mean (m,), cov (m, m))``, for Thompson sampling.
    """

    name: str
    prior: Callable[[Any], Any]
    log_likelihood: Callable[[Any, Any], Any]
    condition: Callable[[Any, Any], Any]
    predict: Callable[[Any, Any], tuple[Any, Any]]
    fantasize: Callable[..., Any]
    predict_joint: Callable[[Any, Any], tuple[Any, Any]]


class Pending(NamedTuple):
    """Points suggested but not yet observed, padded to a static count.

    Attributes:
      x: ``(P, D)`` unit-cube points (``P`` may be 0).
      mask: ``(P,)`` bool, ``True`` on real rows.
    """

    x: jnp.ndarray
    mask: jnp.ndarray

    @classmethod
    def empty(cls, dim: int, dtype=jnp.float64) -> "Pending":
        return cls(jnp.zeros((0, dim), dtype), jnp.zeros((0,), bool))


class Acquisition(NamedTuple):
    """What to maximise and how hard (static: hashable, part of the compiled program).

    Attributes:
      name: ``"ei"`` (maximised as log-EI), ``"logei"``, ``"pi"``, ``"ucb"`` or ``"thompson"``.
      maximize: sizes of the search (a :class:`jbo.optimize.MaximizeConfig`).
      pending: how pending evaluations enter: ``"believer"`` or ``"fantasies"``
        (:func:`jbo.acquisition.pending_posteriors`).
      num_fantasies: draws per hyperparameter sample with ``pending="fantasies"``.
      classify: some evaluations can be infeasible: multiply the acquisition by the probability of
        feasibility (constrained EI) from a classifier of ``Inputs.labels``.
      num_constraints: ``K`` constraint values known at evaluation (``Inputs.constraints``), each
        modelled by the objective's surrogate; the acquisition is multiplied by ``P[c_k <= 0]`` for each.
    """

    name: str
    maximize: Any
    pending: str = "believer"
    num_fantasies: int = 16
    classify: bool = False
    num_constraints: int = 0


class Constraints(NamedTuple):
    """Constraint values known at evaluation (feasible where every one is ``<= 0``), as the models see them.

    Attributes:
      x: ``(N_pad, D)`` evaluated points.
      y: ``(K, N_pad)`` each constraint's values, standardised over its known rows.
      mask: ``(K, N_pad)`` rows where that constraint's value is known.
      threshold: ``(K,)`` where 0 (the feasibility boundary) lies on each standardised scale.
    """

    x: jnp.ndarray
    y: jnp.ndarray
    mask: jnp.ndarray
    threshold: jnp.ndarray


class Inputs(NamedTuple):
    """Everything the loop hands a model for one suggestion (arrays only: traced under ``jit``).

    Attributes:
      data: padded observations, targets standardised, failures already handled.
      pending: points being evaluated (fantasies).
      anchors: ``(A, D)`` starting candidates of the acquisition search.
      best: the incumbent on the standardised scale.
      first: ``True`` when the model has not been fitted yet (cold start: burn-in, restarts).
      ucb_beta: UCB's exploration weight (an array, so runs can ``vmap`` over it).
      labels: with ``Acquisition.classify``, every evaluated point labelled feasible (``y = 1``) or not
        (``y = 0``) (:func:`jbo.loop.feasibility`); ``None`` otherwise.
      constraints: known constraint values (:class:`Constraints`), or ``None``.
      scale: objective units per standardised unit (the standard deviation the targets were divided
        by), for models whose priors are stated in the objective's units (``BOCK(units="objective")``);
        ``None`` where a caller has no objective scale.
    """

    data: Data
    pending: Pending
    anchors: jnp.ndarray
    best: jnp.ndarray
    first: jnp.ndarray
    ucb_beta: jnp.ndarray
    labels: Data | None = None
    constraints: Constraints | None = None
    scale: jnp.ndarray | None = None


class Model(NamedTuple):
    """A model as the loop sees it: its config type and its two pure functions.

    Attributes:
      config: the config class (a :class:`ModelConfig` subclass).
      init: ``init(config, space, dtype, key) -> state``.
      step: ``step(config, space, acquisition, state, inputs, key) -> (x (D,), state, info)``.
      prepare: optional host-side work the ask/tell driver runs before the compiled step when
        several devices are present: ``prepare(config, state, data, key, first) -> (config, state)``
        (DNGO ensembles train their members split over the devices this way).
    """

    config: type
    init: Callable
    step: Callable
    prepare: Callable | None = None


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Base of every model config: frozen (hashable, a static argument of compiled programs),
    validated on construction, serialisable to the journal with :meth:`to_dict`.

    Subclasses set ``kind`` (the model family) and may override :meth:`validate`, and ``name`` when
    one config class serves several named models (``"dngo"``/``"ensemble"``).
    """

    kind: ClassVar[str] = ""
    #: Fields added after journals were first written, with the value a run had before each existed
    #: (where the new default differs): resuming an older journal keeps its model.
    recorded_defaults: ClassVar[dict] = {}

    @property
    def name(self) -> str:
        """The model's name (a key of :data:`jbo.models.SHORTCUTS`)."""
        return self.kind

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Raise ``ValueError`` naming the field of any invalid value (subclasses extend)."""

    def default_design(self) -> str:
        """The initial design a run uses when its settings name none (``Settings.design``): a Sobol set,
        unless the model assumes more about where the optimum lies (BOCK: the centre first)."""
        return "sobol"

    def to_dict(self) -> dict:
        """JSON-able fields, with the model's ``name``."""
        out = {"name": self.name}
        for f in dataclasses.fields(self):
            out[f.name] = _jsonable(getattr(self, f.name))
        return out

    @classmethod
    def create(cls, **fields) -> "ModelConfig":
        """Construction from keyword options; unknown names raise a ``ValueError`` listing the valid ones."""
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(fields) - set(known))
        if unknown:
            raise ValueError(f"unknown option(s) {unknown} for model {cls.kind!r}; valid: {known}")
        return cls(**fields)

    def replace(self, **fields) -> "ModelConfig":
        return dataclasses.replace(self, **fields)


def _jsonable(value):
    if hasattr(value, "_asdict"):
        return {k: _jsonable(v) for k, v in value._asdict().items()}
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


def check_choice(field: str, value, choices) -> None:
    """``ValueError`` naming ``field`` and listing ``choices`` unless ``value`` is one of them."""
    if value not in choices:
        raise ValueError(f"unknown {field} {value!r}; valid choices: {list(choices)}")
