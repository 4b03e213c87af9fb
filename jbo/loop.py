"""The BO loop: a functional core over :class:`LoopState` and the stateful :class:`Optimizer`.

One suggestion, end to end (DESIGN.md)::

    observations -> encode -> infer hyperparameters (warm-started) -> condition each sample
    -> integrated acquisition (pending points as fantasies) -> maximise -> decode

``suggest`` and ``observe`` are pure functions of ``(settings, state)``; randomness comes from
``fold_in(key(seed), number of suggestions so far)``, so the same seed gives the same suggestions.
The model work is two jitted programs per padded data size (inference and the proposal).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbo import acquisition as acq
from jbo import escape
from jbo import inference
from jbo.data import Standardizer, bucket_size, pad_data
from jbo.escape import EscapeConfig
from jbo.kernels import KERNELS, make_arc_kernel, make_kernel
from jbo.models import blr, dngo
from jbo.models.base import Surrogate
from jbo.models import tree as tree_model
from jbo.models.gp import exact_gp
from jbo.optimize import MaximizeConfig, local_anchors, maximize
from jbo.spaces import Space

ACQUISITIONS = ("ei", "logei", "pi", "ucb", "thompson")
ESCAPE_MODELS = ("gp",)  # models whose samples carry lengthscales (jbo.escape measures distances in them)
FAILURE_POLICIES = ("worst", "ignore")


def _check_choice(field: str, value, choices):
    if value not in choices:
        raise ValueError(f"unknown {field} {value!r}; valid choices: {list(choices)}")


@dataclasses.dataclass(frozen=True)
class Settings:
    """Everything that defines a run besides the space (JSON-serialisable, written to the journal).

    Attributes:
      model: surrogate (``"gp"``, ``"arc"``: the GP with the arc kernel over the space's relevance
        mask, ``"tree"``: Jenatton et al.'s tree GP with two-step EI, its baselines
        ``"independent"`` and ``"marginal"`` (:mod:`jbo.models.tree`), or ``"random"`` search).
      inference: ``"slice"`` (default, as in Snoek et al. 2012), ``"nuts"`` or ``"map"``.
      acquisition: ``"ei"`` (maximised as log-EI), ``"logei"``, ``"pi"``, ``"ucb"``, ``"thompson"``.
      seed: seed of every random choice of the run.
      n_init: size of the scrambled Sobol initial design (default ``max(5, D + 1)``).
      kernel: ``"matern52"``, ``"se"`` or ``"rq"``; warp: Kumaraswamy input warping.
      num_samples: hyperparameter samples ``S`` per suggestion (MCMC methods).
      num_burnin: sweeps/steps discarded on the first fit (chain started from the prior).
      num_warmup: sweeps/steps discarded on later fits (chain warm-started from the last sample).
      thin: MCMC steps between kept samples.
      map_restarts: prior draws the first MAP fit starts from (later fits: the last estimate).
      ucb_beta: exploration weight of UCB.
      failures: how failed evaluations enter the model: ``"worst"`` imputes the worst successful
        value there (steers the search away from crashing regions), ``"ignore"`` leaves them out.
      maximize: sizes of the acquisition search (a dict of some :class:`~jbo.optimize.MaximizeConfig`
        fields fills the rest from the model's default). Default: ``MaximizeConfig()``; for DNGO models
        the anchors only, no Adam refinement (:data:`jbo.models.dngo.MAXIMIZE`, which says why).
      n_networks: ensemble size ``E`` of ``model="ensemble"`` (default 5; ``model="dngo"`` is one network).
      aggregator: how an ensemble combines its members' acquisitions (Pethick 2018, eq. 30): ``"mean"``,
        ``"median"``, ``"max"`` or a quantile level in ``[0, 1]``.
      training: network training mode of DNGO models: ``"retrain-reset"``, ``"retrain"`` or ``"fixed"``.
      quadratic_prior: DNGO's quadratic prior mean (Snoek et al. 2015, eq. 9); ``False``: a constant.
      curvature_scale: scale of the horseshoe prior on the quadratic's curvatures ``diag(Λ)``
        (standardised output units per squared unit-cube distance; :func:`jbo.models.blr.blr_prior`).
      network: the basis network and its training (:class:`jbo.models.dngo.NetworkConfig`; a dict of
        its fields is accepted).
      dtype: ``"float64"`` (default) or ``"float32"`` for the model's linear algebra.
      escape: leave a converged basin for a local search elsewhere (:mod:`jbo.escape`, ``model="gp"``
        only): an :class:`~jbo.escape.EscapeConfig`, a dict of some of its fields, ``True`` (its
        defaults) or ``False`` (the default: measured, it helps on Hartmann6 and costs on Levy,
        Alpine01 and Hartmann3; BENCHMARKS.md, escape_ablation).
    """

    model: str = "gp"
    inference: str = "slice"
    acquisition: str = "ei"
    seed: int = 0
    n_init: int | None = None
    kernel: str = "matern52"
    warp: bool = False
    num_samples: int = 10
    num_burnin: int = 50
    num_warmup: int = 5
    thin: int = 1
    map_restarts: int = 4
    ucb_beta: float = 2.0
    failures: str = "worst"
    maximize: MaximizeConfig | dict | None = None
    n_networks: int | None = None
    aggregator: str | float = "mean"
    training: str = "retrain-reset"
    quadratic_prior: bool = True
    curvature_scale: float = 1.0
    network: dngo.NetworkConfig = dngo.NetworkConfig()
    dtype: str = "float64"
    escape: EscapeConfig | dict | bool | None = None

    def __post_init__(self):
        _check_choice("model", self.model, MODELS)
        _check_choice("inference", self.inference, inference.METHODS)
        _check_choice("acquisition", self.acquisition, ACQUISITIONS)
        _check_choice("kernel", self.kernel, sorted(KERNELS))
        _check_choice("failures", self.failures, FAILURE_POLICIES)
        _check_choice("dtype", self.dtype, ("float64", "float32"))
        default = dngo.MAXIMIZE if self.model in ("dngo", "ensemble") else MaximizeConfig()
        if self.maximize is None:
            object.__setattr__(self, "maximize", default)
        elif isinstance(self.maximize, dict):
            unknown = sorted(set(self.maximize) - set(MaximizeConfig._fields))
            if unknown:
                raise ValueError(f"unknown maximize option(s) {unknown}; valid: {list(MaximizeConfig._fields)}")
            object.__setattr__(self, "maximize", default._replace(**self.maximize))
        elif not isinstance(self.maximize, MaximizeConfig):
            raise ValueError(f"maximize must be a dict of MaximizeConfig fields, got {type(self.maximize).__name__}")
        network = self.network._asdict() if isinstance(self.network, dngo.NetworkConfig) else self.network
        if not isinstance(network, dict):
            raise ValueError(f"network must be a dict of NetworkConfig fields, got {type(self.network).__name__}")
        object.__setattr__(self, "network", dngo.NetworkConfig.create(**network))
        object.__setattr__(self, "aggregator", dngo.check_aggregator(self.aggregator))
        _check_choice("training", self.training, dngo.TRAINING_MODES)
        object.__setattr__(self, "escape", self._escape_config())
        if not isinstance(self.quadratic_prior, bool):
            raise ValueError(f"quadratic_prior must be true or false, got {self.quadratic_prior!r}")
        if (isinstance(self.curvature_scale, bool) or not isinstance(self.curvature_scale, (int, float))
                or not math.isfinite(self.curvature_scale) or self.curvature_scale <= 0):
            raise ValueError(f"curvature_scale must be a positive number, got {self.curvature_scale!r}")
        if self.n_networks is not None and (isinstance(self.n_networks, bool) or int(self.n_networks) != self.n_networks
                                            or int(self.n_networks) < 1):
            raise ValueError(f"n_networks must be a positive integer, got {self.n_networks!r}")
        if self.model == "dngo" and self.n_networks not in (None, 1):
            raise ValueError(f"model 'dngo' is one network; use model='ensemble' for n_networks={self.n_networks}")
        for field in ("num_samples", "thin", "map_restarts"):
            if int(getattr(self, field)) < 1:
                raise ValueError(f"{field} must be >= 1, got {getattr(self, field)!r}")
        for field in ("num_burnin", "num_warmup"):
            if int(getattr(self, field)) < 0:
                raise ValueError(f"{field} must be >= 0, got {getattr(self, field)!r}")
        if self.n_init is not None and int(self.n_init) < 1:
            raise ValueError(f"n_init must be >= 1, got {self.n_init!r}")

    def _escape_config(self) -> EscapeConfig | bool:
        option = self.escape
        if option is None or option is False:
            return False
        if option is True:
            config = EscapeConfig()
        elif isinstance(option, dict):
            config = EscapeConfig.create(**option)
        elif isinstance(option, EscapeConfig):
            config = EscapeConfig.create(**option._asdict())
        else:
            raise ValueError(f"escape must be true, false or a dict of EscapeConfig fields, got {option!r}")
        if self.model not in ESCAPE_MODELS:
            raise ValueError(f"escape needs a model with lengthscales ({list(ESCAPE_MODELS)}), got model={self.model!r}; "
                             "use escape=False")
        return config

    @property
    def ensemble_size(self) -> int:
        """Networks of a DNGO model: 1 for ``"dngo"``, ``n_networks`` (default 5) for ``"ensemble"``."""
        return 1 if self.model == "dngo" else int(self.n_networks or 5)

    def initial_size(self, dim: int) -> int:
        return int(self.n_init) if self.n_init is not None else max(5, dim + 1)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["maximize"] = self.maximize._asdict()
        d["escape"] = self.escape._asdict() if self.escape else False
        d["network"] = {**self.network._asdict(), "hidden": list(self.network.hidden)}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Settings":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown setting(s) {unknown}; valid: {sorted(known)}")
        return cls(**d)


class LoopState(NamedTuple):
    """The whole state of a run.

    Attributes:
      x: ``(N, D)`` encoded evaluated points (successes and failures).
      y: ``(N,)`` user-scale values, ``nan`` for failures.
      pending: ``(P, D)`` encoded points suggested but not yet observed.
      model_state: what the model carries from one suggestion to the next (the last hyperparameter
        samples as warm start; trained network weights), or ``None`` before the first fit.
      n_suggested: suggestions made so far (drives the seed stream and the Sobol design).
    """

    x: np.ndarray
    y: np.ndarray
    pending: np.ndarray
    model_state: Any
    n_suggested: int


def init(dim: int) -> LoopState:
    """Empty state for a ``dim``-dimensional encoded space."""
    empty = np.zeros((0, dim))
    return LoopState(empty, np.zeros(0), empty, None, 0)


@functools.lru_cache(maxsize=32)
def make_surrogate(model: str, kernel: str, warp: bool) -> Surrogate:
    """The exact-GP surrogate for a setting (cached: jitted programs are keyed on the surrogate's identity)."""
    if model == "gp":
        return exact_gp(make_kernel(kernel, warp=warp))
    raise ValueError(f"model {model!r} has no exact-GP surrogate")


@functools.lru_cache(maxsize=32)
def arc_surrogate(kernel: str, warp: bool, space: Space) -> Surrogate:
    """The exact GP with the arc kernel (Swersky et al. 2013) on ``kernel``'s profile over the
    relevance mask of ``space`` (cached per space: jitted programs key on the surrogate)."""
    if warp:
        raise ValueError("warp: the arc kernel has no Kumaraswamy warping; use warp=False with model='arc'")
    return exact_gp(make_arc_kernel(kernel, space.relevance))


def _key(settings: Settings, n: int):
    return jax.random.fold_in(jax.random.key(settings.seed), n)


def training_data(settings: Settings, state: LoopState):
    """Standardised model inputs from the observations, failures handled by ``settings.failures``.

    Returns:
      ``(x, y_std, standardizer)`` or ``None`` if fewer than two successes exist.
    """
    ok = np.isfinite(state.y)
    if ok.sum() < 2:
        return None
    # Rows stay in the order of observation (the escape rule reads the run's recent history).
    if settings.failures == "worst":
        x, y = state.x, np.where(ok, state.y, np.max(state.y[ok]))
    else:
        x, y = state.x[ok], state.y[ok]
    standardizer = Standardizer.fit(y)
    return x, standardizer.forward(y), standardizer


class Context(NamedTuple):
    """What every model's proposer gets for one suggestion (built once by :func:`suggest`).

    Attributes:
      key_fit, key_acq: PRNG keys for the fit and for the acquisition.
      x_train: ``(n, D)`` encoded training inputs; y_std: ``(n,)`` standardised targets.
      data: the same, padded to a bucketed size (:func:`jbo.data.pad_data`).
      anchors: ``(A, D)`` starting candidates of the acquisition search (Sobol + around the best).
      best: incumbent on the standardised scale.
      pending_x, pending_mask: padded pending points, or ``None``.
      dtype: the model's float dtype.
    """

    key_fit: Any
    key_acq: Any
    x_train: np.ndarray
    y_std: np.ndarray
    data: Any
    anchors: jnp.ndarray
    best: jnp.ndarray
    pending_x: Any
    pending_mask: Any
    dtype: Any


class Proposal(NamedTuple):
    """A proposer's answer: the encoded point ``x (D,)``, the model state to carry, diagnostics."""

    x: np.ndarray
    model_state: Any
    info: dict


@functools.partial(jax.jit, static_argnames=("surrogate", "acquisition", "ucb_beta", "config"))
def propose(key, surrogate: Surrogate, params, data, pending_x, pending_mask, anchors, best, exclusion, *,
            acquisition: str, ucb_beta: float, config: MaximizeConfig):
    """Jitted proposal: condition every sample, fantasise pending points, maximise the acquisition.

    Args:
      key: PRNG key (Thompson sampling).
      surrogate: the model; params: stacked hyperparameter samples (leading axis ``S``).
      data: padded observations; pending_x, pending_mask: padded pending points (or ``None``).
      anchors: ``(A, D)`` starting candidates in the unit cube.
      best: incumbent on the standardised scale.
      exclusion: region where the acquisition is ``-inf`` (:func:`jbo.escape.exclude`; masks nothing
        when built by :func:`jbo.escape.no_exclusion`).
      acquisition: name; ucb_beta: UCB weight; config: search sizes.
    Returns:
      ``(x (D,), score)``.
    """
    posteriors = jax.vmap(surrogate.condition, in_axes=(0, None))(params, data)
    if pending_x is not None:
        posteriors = jax.vmap(surrogate.fantasize, in_axes=(0, None, None))(posteriors, pending_x, pending_mask)
    if acquisition == "thompson":
        index = acq.thompson_sample(key, surrogate.predict_joint, posteriors, anchors)
        return anchors[index], jnp.zeros((), anchors.dtype)
    pointwise, log_domain = acq.ACQUISITIONS[acquisition]
    if acquisition == "ucb":
        pointwise = functools.partial(pointwise, beta=ucb_beta)
    score = escape.exclude(acq.integrate(surrogate.predict, posteriors, pointwise, log_domain, best), *exclusion)
    return maximize(score, anchors, config.top_k, config.num_steps, config.learning_rate)


def _inference_options(settings: Settings, first: bool) -> dict:
    if settings.inference == "map":
        # A cold start explores several prior draws; later fits refine the last estimate, which
        # converges in a few L-BFGS steps and is what keeps MAP cheap at large N.
        return dict(num_restarts=settings.map_restarts if first else 0)
    return dict(num_samples=settings.num_samples, thin=settings.thin,
                num_warmup=settings.num_burnin if first else settings.num_warmup)


def infer_hyperparameters(settings: Settings, previous, surrogate: Surrogate, data, key):
    """Hyperparameter samples by ``settings.inference``, warm-started from ``previous`` samples."""
    options = _inference_options(settings, previous is None)
    return inference.infer(key, surrogate, data, settings.inference, previous=previous, **options)


def _escape_plan(settings: Settings, ctx: Context, params) -> escape.Escape | None:
    """The escape search of :mod:`jbo.escape` if the run has stalled (``None`` otherwise or when off)."""
    if not settings.escape:
        return None
    scale = escape.lengthscales(params)
    if scale is None:
        return None
    rng = np.random.default_rng(np.asarray(jax.random.key_data(jax.random.fold_in(ctx.key_acq, 1))).ravel())
    return escape.plan(ctx.x_train, ctx.y_std, scale, np.asarray(ctx.anchors), settings.escape, rng,
                       settings.maximize.num_local, settings.maximize.local_scale)


def sampled_surrogate_proposer(surrogate_for: Callable[[Settings, Space], Surrogate]):
    """A proposer for any surrogate whose hyperparameters are all inferred (GP, arc GP, ...).

    Args:
      surrogate_for: ``(settings, space) -> Surrogate`` (cache it: jitted programs key on it).
    Returns:
      ``proposer(settings, space, context, previous_samples) -> Proposal``.
    """

    def proposer(settings: Settings, space: Space, ctx: Context, previous) -> Proposal:
        surrogate = surrogate_for(settings, space)
        t0 = time.perf_counter()
        samples = infer_hyperparameters(settings, previous, surrogate, ctx.data, ctx.key_fit)
        jax.block_until_ready(samples.z)
        t1 = time.perf_counter()
        anchors, best, exclusion = ctx.anchors, ctx.best, escape.no_exclusion(ctx.anchors.shape[-1], ctx.dtype)
        plan = _escape_plan(settings, ctx, samples.params)
        if plan is not None:
            anchors, best, exclusion = plan
        x, score = propose(ctx.key_acq, surrogate, samples.params, ctx.data, ctx.pending_x, ctx.pending_mask,
                           anchors, best, exclusion, acquisition=settings.acquisition,
                           ucb_beta=float(settings.ucb_beta), config=settings.maximize)
        jax.block_until_ready(x)
        info = dict(fit_seconds=t1 - t0, acquisition_seconds=time.perf_counter() - t1, score=float(score),
                    escape=plan is not None, **{k: np.asarray(v).tolist() for k, v in samples.info.items()})
        return Proposal(np.asarray(x, dtype=np.float64), samples, info)

    return proposer


@functools.lru_cache(maxsize=8)
def _blr_surrogate(quadratic: bool, curvature_scale: float) -> Surrogate:
    return blr.blr_surrogate(quadratic=quadratic, curvature_scale=curvature_scale)


@functools.partial(jax.jit, static_argnames=("surrogate", "method", "options"))
def _infer_members_jit(members, *, surrogate: Surrogate, method: str, options: tuple):
    def member(key, member_stats, member_previous):
        return inference.infer(key, surrogate, member_stats, method, previous=member_previous, **dict(options))

    return jax.vmap(member)(*members)


def _infer_members(settings: Settings, surrogate: Surrogate, stats, key, previous):
    """BLR hyperparameter samples for every ensemble member: one jitted program ``vmap``-ped over the
    leading axis (jitted whole, so the sampler is not re-traced at every suggestion).

    It runs on the default device even when the networks train split over several
    (:func:`jbo.devices.over_devices`): the samplers and the MAP fit are ``while`` loops, and two such
    programs (then with a Cholesky per step) running at once on two CPU devices deadlocked XLA's CPU
    runtime (jax 0.10.2), whether split as one ``shard_map``-ped program or as one call per device.
    """
    keys = jax.random.split(key, jax.tree_util.tree_leaves(stats)[0].shape[0])
    options = tuple(sorted(_inference_options(settings, previous is None).items()))
    return _infer_members_jit((keys, stats, previous), surrogate=surrogate, method=settings.inference,
                              options=options)


def dngo_proposer(settings: Settings, space: Space, ctx: Context, previous) -> Proposal:
    """DNGO (Snoek et al. 2015) and its ensembles (Pethick 2018): train the basis networks, sample the
    BLR hyperparameters per member, maximise the aggregated integrated acquisition."""
    config, data = settings.network, ctx.data
    k_train, k_infer = jax.random.split(ctx.key_fit)
    t0 = time.perf_counter()
    weights, loss = dngo.fit_basis(k_train, config, settings.training, settings.ensemble_size,
                                   None if previous is None else previous.weights, data.x, data.y, data.mask)
    stats = dngo.ensemble_stats(weights, data.x, data.y, data.mask, config=config)
    jax.block_until_ready(stats)
    t1 = time.perf_counter()
    surrogate = _blr_surrogate(settings.quadratic_prior, float(settings.curvature_scale))
    samples = _infer_members(settings, surrogate, stats, k_infer, None if previous is None else previous.samples)
    jax.block_until_ready(samples.z)
    t2 = time.perf_counter()
    x, score = dngo.propose(ctx.key_acq, weights, samples.params, stats, ctx.pending_x, ctx.pending_mask,
                            ctx.anchors, ctx.best, config=config, surrogate=surrogate,
                            acquisition=settings.acquisition, ucb_beta=float(settings.ucb_beta),
                            aggregator=settings.aggregator, maximize_config=settings.maximize)
    jax.block_until_ready(x)
    info = dict(train_seconds=t1 - t0, fit_seconds=t2 - t0, acquisition_seconds=time.perf_counter() - t2,
                score=float(score), **{k: np.asarray(v).tolist() for k, v in samples.info.items()})
    if loss is not None:
        info["train_loss"] = np.asarray(loss).tolist()
    return Proposal(np.asarray(x, dtype=np.float64), dngo.EnsembleState(weights, samples), info)


# Each model-based search is a proposer ``(settings, space, context, previous_state) -> Proposal``;
# "random" needs none. New models register here.
MODELS: dict[str, Callable | None] = {
    "gp": sampled_surrogate_proposer(lambda s, space: make_surrogate(s.model, s.kernel, s.warp)),
    "arc": sampled_surrogate_proposer(lambda s, space: arc_surrogate(s.kernel, s.warp, space)),
    "dngo": dngo_proposer,
    "ensemble": dngo_proposer,
    # Jenatton et al. (2017): tree GP with two-step EI; its baselines search every leaf.
    "tree": tree_model.proposer("tree"),
    "independent": tree_model.proposer("independent"),
    "marginal": tree_model.proposer("marginal"),
    "random": None,
}


def _context(settings: Settings, space: Space, state: LoopState, train, key_fit, key_acq, rng) -> Context:
    dtype = jnp.float64 if settings.dtype == "float64" else jnp.float32
    x_train, y_std, _ = train
    cfg = settings.maximize
    order = np.argsort(y_std)[: max(1, min(5, len(y_std)))]
    anchors = np.concatenate([
        space.sobol(cfg.num_anchors, seed=int(rng.integers(2**31))),
        local_anchors(rng, x_train[order], cfg.num_local, cfg.local_scale),
    ])
    pending_x = pending_mask = None
    if len(state.pending):
        size = bucket_size(len(state.pending), minimum=4)
        padded = pad_data(state.pending, np.zeros(len(state.pending)), size=size, dtype=dtype)
        pending_x, pending_mask = padded.x, padded.mask
    return Context(key_fit, key_acq, x_train, y_std, pad_data(x_train, y_std, dtype=dtype),
                   jnp.asarray(anchors, dtype), jnp.asarray(np.min(y_std), dtype), pending_x, pending_mask, dtype)


def suggest(settings: Settings, space: Space, state: LoopState) -> tuple[LoopState, np.ndarray, dict]:
    """One new point to evaluate.

    Args:
      settings: the run's settings.
      space: the search space.
      state: current state.
    Returns:
      ``(state, x, info)``: the new state (``x`` added to ``pending``), the encoded point ``(D,)``
      (a canonical encoding: ``space.round_trip`` of what the optimiser found) and timings.
    """
    key = _key(settings, state.n_suggested)
    k_fit, k_acq, k_anchor = jax.random.split(key, 3)
    n_init = settings.initial_size(space.dim)
    rng = np.random.default_rng(np.asarray(jax.random.key_data(k_anchor)).ravel())
    info: dict = {"n": len(state.y), "phase": "model"}
    train = training_data(settings, state)
    if settings.model == "random":
        x, info["phase"] = rng.random(space.dim), "random"
    elif state.n_suggested < n_init or train is None:
        # The initial design: the next point of one scrambled Sobol sequence per seed (for a
        # conditional space, first one random point per leaf: Space.initial_points).
        design = space.initial_points(max(n_init, state.n_suggested + 1), seed=settings.seed)
        x, info["phase"] = design[state.n_suggested], "initial"
    else:
        ctx = _context(settings, space, state, train, k_fit, k_acq, rng)
        proposal = MODELS[settings.model](settings, space, ctx, state.model_state)
        x = proposal.x
        info.update(n_pad=int(ctx.data.x.shape[0]), **proposal.info)
        state = state._replace(model_state=proposal.model_state)
    x = space.round_trip(np.clip(x, 0.0, 1.0)[None])[0]
    state = state._replace(pending=np.concatenate([state.pending, x[None]]), n_suggested=state.n_suggested + 1)
    return state, x, info


def encode_observation(settings: Settings, space: Space, config: dict, index: int) -> np.ndarray:
    """Encoded training row ``(D,)`` of the ``index``-th observed configuration.

    The columns of parameters inactive in ``config`` (conditional spaces) are filled with uniform
    noise from a generator seeded by ``(seed, index)``, so a resumed run rebuilds the same rows.
    That is the "GP with irrelevant dimensions filled randomly" baseline of Swersky et al. (2014)
    for ``model="gp"``; models that know the structure (relevance mask, per-leaf GPs) ignore
    those columns.
    """
    return space.encode(config, fill=np.random.default_rng([int(settings.seed), int(index)]))


def observe(state: LoopState, x: np.ndarray, value: float | None, active: np.ndarray | None = None) -> LoopState:
    """Record ``value`` at encoded point ``x`` (``None``/``nan``/``inf`` = a failure); clears it from pending.

    ``active`` ``(D,)`` (e.g. ``space.relevance(x)``) restricts the match with the pending points to
    the columns of active parameters: inactive columns hold fill values that differ between the
    suggestion and the observation.
    """
    value = np.nan if value is None or not np.isfinite(value) else float(value)
    pending = state.pending
    if len(pending):
        close = np.abs(pending - x[None]) < 1e-9
        if active is not None:
            close |= np.asarray(active)[None] == 0
        match = np.flatnonzero(np.all(close, axis=1))
        if len(match):
            pending = np.delete(pending, match[0], axis=0)
    return state._replace(x=np.concatenate([state.x, x[None]]), y=np.append(state.y, value), pending=pending)
