"""DNGO: a neural network's last hidden layer as the basis of a Bayesian linear regression.

Snoek et al. (2015), "Scalable Bayesian optimization using deep neural networks", §3: a tanh MLP
(3 × 50 by default) with a linear output layer is trained on the standardised observations (a MAP
estimate of all its weights); its output layer is then replaced by Bayesian linear regression
(:mod:`jbo.surrogates.blr`) whose hyperparameters, and those of the quadratic prior mean, are integrated
out. Pethick (2018) ensembles ``E`` such networks: here they are one stacked PyTree trained by a single
jitted, ``vmap``-ped program, with the three training modes he compares:

* ``"fixed"``: train once (on the data of the first model-based suggestion) and keep the basis;
* ``"retrain"``: continue training from the last weights every iteration;
* ``"retrain-reset"``: train fresh weights every iteration (Pethick's choice).

Networks train in float32 by default (the BLR on top is float64): float64 doubles the training time
and buys nothing for the basis.

When JAX sees several local devices (GPUs, or host CPUs split with ``jax_num_cpu_devices`` /
``jbo run --cpu-devices``), an ensemble's members train split over them along the member axis
(:func:`jbo.devices.over_devices`): XLA:CPU runs one device's vmapped batch on one core, so on a CPU
this is what lets five networks use more than one core. The members and their keys are the same
either way.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar, NamedTuple, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

from jbo import acquisition as acq
from jbo import checks, inference
from jbo.devices import num_devices, over_devices
from jbo.models import classifier
from jbo.models.base import CliOption, check_bool, check_choice, internal
from jbo.models.sampled import SampledConfig, hyperparameter_means, search
from jbo.optimize import MaximizeConfig
from jbo.surrogates import blr
from jbo.types import Acquisition, Inputs, Start

# DNGO's acquisition search: the best of the anchors, no gradient refinement. A tanh basis extrapolates
# almost linearly past the data and the BLR's variance there stays small, so Adam on the acquisition
# follows the extrapolated mean to the faces of the cube (BENCHMARKS.md: dngo_boundary_hartmann6, and
# dngo_ablation for the runs with and without refinement).
MAXIMIZE = MaximizeConfig(num_steps=0)

ACTIVATIONS = ("tanh", "relu_tanh")
OPTIMIZERS = ("adam", "sgd")
TRAINING_MODES = ("retrain-reset", "retrain", "fixed")


class NetworkConfig(NamedTuple):
    """The basis network and its training (hashable: a static argument of the jitted programs).

    Attributes:
      hidden: units per hidden layer; the last layer's width is the basis size ``M``.
      activation: ``"tanh"`` everywhere (the paper's choice), or ``"relu_tanh"``: ReLU layers with a
        tanh last layer (the bounded-basis alternative of the paper's Fig. 2b).
      optimizer: ``"adam"`` (Pethick) or ``"sgd"`` with momentum (Snoek et al.).
      learning_rate: initial step size, decayed to ``final_lr_fraction`` of it by a cosine schedule.
      final_lr_fraction: ``1.0`` keeps the rate constant.
      momentum: SGD momentum.
      weight_decay: L2 penalty on the weight matrices (the paper found "very modest" ℓ2 best).
      num_steps: optimisation steps per training (a fixed number). The default 3000 trains the
        network until it resolves the differences between the best observations: on 200 Hartmann6
        observations of a DNGO run, 1000 steps left a training error of 0.09 standard deviations, as
        large as the spread of the 10 best values (0.03–0.11), so the model could not tell them apart
        and the run stopped refining; 3000 steps reach 0.03 (BENCHMARKS.md, dngo_table1 notes).
      batch_size: mini-batch size (rows drawn with replacement from the real observations); data sets
        that fit in one batch (padded size ``<= batch_size``) and ``batch_size=0`` train full-batch.
        Mini-batches make the training cost independent of ``N`` (Snoek et al. trained with SGD
        mini-batches); full batch makes it linear in ``N``.
      dtype: ``"float32"`` or ``"float64"`` for the network.
    """

    hidden: tuple[int, ...] = (50, 50, 50)
    activation: str = "tanh"
    optimizer: str = "adam"
    learning_rate: float = 0.01
    final_lr_fraction: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 1e-4
    num_steps: int = 3000
    batch_size: int = 256
    dtype: str = "float32"

    @classmethod
    def create(cls, **fields) -> "NetworkConfig":
        """Validated construction (lists become tuples, so the config stays hashable)."""
        checks.known_options("network", fields, cls._fields)
        if "hidden" in fields:
            hidden = fields["hidden"]
            hidden = (hidden,) if isinstance(hidden, int) else tuple(hidden)
            if not hidden or any(int(h) != h or int(h) < 1 for h in hidden):
                raise ValueError(f"network.hidden must be a non-empty list of positive ints, got {fields['hidden']!r}")
            fields["hidden"] = tuple(int(h) for h in hidden)
        config = cls(**fields)
        valid = {
            "activation": config.activation in ACTIVATIONS,
            "optimizer": config.optimizer in OPTIMIZERS,
            "dtype": config.dtype in ("float32", "float64"),
            "learning_rate": config.learning_rate > 0,
            "final_lr_fraction": 0 < config.final_lr_fraction <= 1,
            "momentum": 0 <= config.momentum < 1,
            "weight_decay": config.weight_decay >= 0,
            "num_steps": int(config.num_steps) >= 1,
            "batch_size": int(config.batch_size) >= 0,
        }
        for field, ok in valid.items():
            if not ok:
                choices = {"activation": ACTIVATIONS, "optimizer": OPTIMIZERS, "dtype": ("float32", "float64")}
                hint = f"; valid choices: {list(choices[field])}" if field in choices else ""
                raise ValueError(f"invalid network.{field}: {getattr(config, field)!r}{hint}")
        return config


class BasisNetwork(nn.Module):
    """MLP returning ``(basis (…, M), output (…,))``: the last hidden layer and a linear head."""

    hidden: Sequence[int]
    activation: str = "tanh"

    @nn.compact
    def __call__(self, x):
        h = x
        for i, width in enumerate(self.hidden):
            h = nn.Dense(width)(h)
            last = i == len(self.hidden) - 1
            h = jnp.tanh(h) if (self.activation == "tanh" or last) else nn.relu(h)
        return h, nn.Dense(1)(h)[..., 0]


def _module(config: NetworkConfig) -> BasisNetwork:
    return BasisNetwork(hidden=config.hidden, activation=config.activation)


def _dtype(config: NetworkConfig):
    return jnp.float32 if config.dtype == "float32" else jnp.float64


@functools.partial(jax.jit, static_argnames=("config", "dim", "num"))
def init_networks(key, config: NetworkConfig, dim: int, num: int):
    """``num`` independently initialised networks stacked along a leading axis."""
    dummy = jnp.zeros((1, dim), _dtype(config))
    return jax.vmap(lambda k: _module(config).init(k, dummy))(jax.random.split(key, num))


def basis(config: NetworkConfig, weights, x):
    """Basis ``phi(x)`` ``(…, M)`` of one network, returned in ``x``'s dtype."""
    phi, _ = _module(config).apply(weights, x.astype(_dtype(config)))
    return phi.astype(x.dtype)


def _optimizer(config: NetworkConfig):
    schedule = optax.cosine_decay_schedule(config.learning_rate, config.num_steps, alpha=config.final_lr_fraction)
    if config.optimizer == "sgd":
        return optax.sgd(schedule, momentum=config.momentum)
    return optax.adam(schedule)


def _loss(config: NetworkConfig, weights, x, y, w):
    """Weighted mean squared error plus the L2 penalty on the weight matrices (a MAP objective)."""
    _, out = _module(config).apply(weights, x)
    mse = jnp.sum(w * (out - y) ** 2) / jnp.maximum(jnp.sum(w), 1.0)
    kernels = [leaf for path, leaf in jax.tree_util.tree_leaves_with_path(weights) if "kernel" in jax.tree_util.keystr(path)]
    return mse + config.weight_decay * sum(jnp.sum(k * k) for k in kernels)


def _train_one(config: NetworkConfig, key, weights, x, y, mask):
    dtype = _dtype(config)
    x, y, w = x.astype(dtype), y.astype(dtype), mask.astype(dtype)
    tx = _optimizer(config)
    grad_fn = jax.value_and_grad(functools.partial(_loss, config))

    def step(carry, k):
        weights, opt_state = carry
        if 0 < config.batch_size < x.shape[0]:
            # Mini-batches drawn from the real rows only (padding has probability zero).
            idx = jax.random.choice(k, x.shape[0], (config.batch_size,), p=w / jnp.sum(w))
            loss, grads = grad_fn(weights, x[idx], y[idx], jnp.ones(config.batch_size, dtype))
        else:
            loss, grads = grad_fn(weights, x, y, w)
        updates, opt_state = tx.update(grads, opt_state, weights)
        return (optax.apply_updates(weights, updates), opt_state), loss

    (weights, _), losses = jax.lax.scan(step, (weights, tx.init(weights)), jax.random.split(key, config.num_steps))
    return weights, losses[-1]


def _train_members(keys, weights, x, y, mask, config: NetworkConfig):
    return jax.vmap(functools.partial(_train_one, config), in_axes=(0, 0, None, None, None))(keys, weights, x, y, mask)


@functools.partial(jax.jit, static_argnames=("config",))
def train_networks(key, weights, x, y, mask, *, config: NetworkConfig):
    """Train a stacked ensemble of networks in one compiled, ``vmap``-ped program.

    Args:
      key: PRNG key (mini-batches); member ``e`` gets ``jax.random.split(key, E)[e]``.
      weights: stacked initial weights (leading axis ``E``), from :func:`init_networks` or a previous fit.
      x, y, mask: padded standardised data ``(N, D)``, ``(N,)``, ``(N,)``.
      config: the network and its optimiser.
    Returns:
      ``(weights, final_loss (E,))``.
    """
    num = jax.tree_util.tree_leaves(weights)[0].shape[0]
    return _train_members(jax.random.split(key, num), weights, x, y, mask, config)


@functools.partial(jax.jit, static_argnames=("config",))
def _train_block(members, x, y, mask, *, config: NetworkConfig):
    keys, weights = members
    return _train_members(keys, weights, x, y, mask, config)


def train_split(key, weights, x, y, mask, *, config: NetworkConfig):
    """:func:`train_networks` with the members split over the local devices
    (:func:`jbo.devices.over_devices`); same keys, same members.

    Returns:
      ``(weights, final_loss (E,))`` on the default device.
    """
    keys = jax.random.split(key, jax.tree_util.tree_leaves(weights)[0].shape[0])
    return over_devices(_train_block, (keys, weights), x, y, mask, config=config)


@functools.partial(jax.jit, static_argnames=("config",))
def ensemble_stats(weights, x, y, mask, *, config: NetworkConfig) -> blr.BasisStats:
    """Per-member sufficient statistics :class:`~jbo.surrogates.blr.BasisStats` (leading axis ``E``)."""
    return jax.vmap(lambda w: blr.basis_stats(basis(config, w, x), x, y, mask))(weights)


def fit_basis(key, config: NetworkConfig, training: str, num_networks: int, previous_weights, x, y, mask):
    """The ensemble's weights for this iteration, following the training mode.

    Args:
      key: PRNG key (initialisation and mini-batches).
      config: network config; training: one of :data:`TRAINING_MODES`.
      num_networks: ensemble size ``E``.
      previous_weights: last iteration's stacked weights, or ``None``.
      x, y, mask: padded data.
    Returns:
      ``(weights, final_loss (E,) or None when nothing was trained)``.
    """
    if training not in TRAINING_MODES:
        raise ValueError(f"unknown training {training!r}; valid choices: {list(TRAINING_MODES)}")
    if previous_weights is not None and training == "fixed":
        return previous_weights, None
    k_init, k_train = jax.random.split(key)
    if previous_weights is None or training == "retrain-reset":
        start = init_networks(k_init, config, x.shape[-1], num_networks)
    else:
        start = previous_weights
    if num_networks > 1 and num_devices() > 1:
        return train_split(k_train, start, x, y, mask, config=config)
    return train_networks(k_train, start, x, y, mask, config=config)


def aggregate(values, aggregator, log_domain: bool):
    """Pethick's eq. (30): combine the members' acquisition values ``(E, m) -> (m,)``.

    Args:
      values: per-member (already sample-integrated) acquisition values.
      aggregator: ``"mean"``, ``"median"``, ``"max"``, or a quantile level in ``[0, 1]``.
      log_domain: ``values`` are logs of a positive acquisition; the mean is then taken of the
        acquisition itself (log-mean-exp). Median, max and quantiles commute with the log.
    """
    if aggregator == "mean":
        return acq.reduce_samples(values, log_domain)
    if aggregator == "max":
        return jnp.max(values, axis=0)
    q = 0.5 if aggregator == "median" else aggregator
    return jnp.quantile(values, q, axis=0)


def check_aggregator(aggregator: Any):
    """Validated aggregator: a name or a quantile level (float in ``[0, 1]``)."""
    if isinstance(aggregator, str):
        if aggregator in ("mean", "median", "max"):
            return aggregator
        try:
            aggregator = float(aggregator)
        except ValueError:
            raise ValueError(f"unknown aggregator {aggregator!r}; valid: 'mean', 'median', 'max' or a quantile "
                             "level in [0, 1]") from None
    if isinstance(aggregator, bool) or not isinstance(aggregator, (int, float)) or not 0.0 <= aggregator <= 1.0:
        raise ValueError(f"aggregator must be 'mean', 'median', 'max' or a quantile level in [0, 1], got {aggregator!r}")
    return float(aggregator)


def ensemble_score(config: NetworkConfig, surrogate, weights, stats, posteriors, pointwise, log_domain: bool,
                   best, aggregator):
    """Integrated, aggregated acquisition ``x (m, D) -> (m,)`` of an ensemble.

    Each member's basis is evaluated and rotated into its eigenbasis once per point
    (:func:`jbo.surrogates.blr.basis_inputs`); the BLR predictions of its ``S`` samples are averaged as in
    :func:`jbo.acquisition.integrate`, then the members are aggregated (:func:`aggregate`).

    Args:
      config: network config; surrogate: the BLR surrogate.
      weights: stacked network weights ``(E, …)``; stats: the members' :class:`~jbo.surrogates.blr.BasisStats`
        ``(E, …)``; posteriors: BLR posteriors ``(E, S, …)``.
      pointwise, log_domain, best: as in :func:`jbo.acquisition.integrate`.
      aggregator: see :func:`aggregate`.
    """

    def member(w, member_stats, member_posteriors, x):
        inputs = blr.basis_inputs(member_stats, x, basis(config, w, x))
        return acq.integrate(surrogate.predict, member_posteriors, pointwise, log_domain, best)(inputs)

    def score(x):
        values = jax.vmap(member, in_axes=(0, 0, 0, None))(weights, stats, posteriors, x)
        return aggregate(values, aggregator, log_domain)

    return score


class EnsembleState(NamedTuple):
    """What a DNGO ensemble carries between suggestions.

    Attributes:
      weights: stacked network weights ``(E, …)``.
      z: ``(E, P)`` where every member's next BLR fit starts (a prior draw, then the last sample);
        ``(E, C, P)`` with ``num_chains = C > 1``.
      restarts: ``(E, R, P)`` prior draws the first MAP fits also start from.
      params: the last fit's BLR samples, constrained, ``(E, S, …)``.
    """

    weights: Any
    z: Any
    restarts: Any
    params: Any


def propose(key, weights, params, stats, inputs: Inputs, acquisition: Acquisition, *, config: NetworkConfig, surrogate,
            aggregator, log_feasibility=None):
    """Proposal of an ensemble: condition every member's samples, fantasise, maximise (traceable; the
    search is :func:`jbo.models.sampled.search`, shared with every sampled model).

    Args:
      key: PRNG key (fantasies, Thompson sampling).
      weights: stacked network weights ``(E, …)``; params: BLR samples ``(E, S, …)``;
      stats: per-member :class:`~jbo.surrogates.blr.BasisStats` ``(E, …)``.
      inputs: the suggestion's pending points, anchors, incumbent and UCB weight.
      acquisition: what to maximise, how pending points enter, the search sizes.
      config: network config; surrogate: the BLR surrogate.
      aggregator: member aggregation (:func:`aggregate`).
      log_feasibility: ``x -> log P[feasible]`` (:func:`feasibility`), added to the log acquisition.
    Returns:
      ``(x (D,), score)``.
    """
    condition = jax.vmap(jax.vmap(surrogate.condition, in_axes=(0, None)), in_axes=(0, 0))
    posteriors = condition(params, stats)
    k_pending, key = jax.random.split(key)
    pending = inputs.pending
    if pending.x.shape[0]:
        def fantasize_member(k, w, member_stats, member_posteriors):
            features = blr.basis_inputs(member_stats, pending.x, basis(config, w, pending.x))
            return acq.pending_posteriors(k, surrogate, member_posteriors, features, pending.mask, acquisition.pending,
                                          acquisition.num_fantasies)

        keys = jax.random.split(k_pending, jax.tree_util.tree_leaves(weights)[0].shape[0])
        posteriors = jax.vmap(fantasize_member)(keys, weights, stats, posteriors)

    def thompson(k):  # one member at random, then Thompson sampling over its hyperparameter samples
        k_member, k_draw = jax.random.split(k)
        e = jax.random.randint(k_member, (), 0, jax.tree_util.tree_leaves(weights)[0].shape[0])
        w, member_stats, member = jax.tree_util.tree_map(lambda a: a[e], (weights, stats, posteriors))
        joint = lambda posterior, x: surrogate.predict_joint(posterior,
                                                             blr.basis_inputs(member_stats, x, basis(config, w, x)))
        return acq.thompson_sample(k_draw, joint, member, inputs.anchors)

    def score(pointwise, log_domain):
        return ensemble_score(config, surrogate, weights, stats, posteriors, pointwise, log_domain, inputs.best,
                              aggregator)

    return search(key, acquisition, inputs.ucb_beta, inputs.anchors, score, thompson, log_feasibility,
                  choice=inputs.choice, region=inputs.region)


# ----------------------------------------------------------------------------- the model


@dataclasses.dataclass(frozen=True)
class DNGO(SampledConfig):
    """DNGO (Snoek et al. 2015) and its ensembles (Pethick 2018): ``model="dngo"`` is one network,
    ``model="ensemble"`` five.

    Attributes:
      n_networks: ensemble size ``E``.
      aggregator: how an ensemble combines its members' acquisitions (Pethick 2018, eq. 30): ``"mean"``,
        ``"median"``, ``"max"`` or a quantile level in ``[0, 1]``.
      training: ``"retrain-reset"`` (fresh weights every iteration), ``"retrain"`` (continue from the
        last weights) or ``"fixed"`` (train once).
      quadratic_prior: the quadratic prior mean of eq. (9); ``False``: a constant.
      curvature_scale: scale of the horseshoe prior on the quadratic's curvatures ``diag(Λ)``
        (standardised output units per squared unit-cube distance; :func:`jbo.surrogates.blr.blr_prior`).
      network: the basis network and its training (:class:`NetworkConfig`; a dict of its fields is
        accepted).
      inference, num_samples, num_burnin, num_warmup, thin, map_restarts, num_chains: how the BLR's
        hyperparameters are inferred (:class:`~jbo.models.sampled.SampledConfig`).
      pretrained: set by the ask/tell driver, not a user option: the networks in the state were
        trained by :meth:`prepare` (split over devices) and the step uses them as they are.
    """

    kind: ClassVar[str] = "dngo"
    n_networks: int = 1
    aggregator: Any = "mean"
    training: str = "retrain-reset"
    quadratic_prior: bool = True
    curvature_scale: float = 1.0
    network: Any = NetworkConfig()
    pretrained: bool = internal(False)
    cli_types: ClassVar[dict] = {"aggregator": str}

    @property
    def name(self) -> str:
        return "dngo" if self.n_networks == 1 else "ensemble"

    @property
    def members(self) -> int:
        return self.n_networks

    def validate(self) -> None:
        super().validate()
        object.__setattr__(self, "n_networks", checks.integer("n_networks", self.n_networks, 1))
        object.__setattr__(self, "aggregator", check_aggregator(self.aggregator))
        check_choice("training", self.training, TRAINING_MODES)
        check_bool(self, "quadratic_prior")
        object.__setattr__(self, "curvature_scale", checks.positive("curvature_scale", self.curvature_scale))
        network = self.network._asdict() if isinstance(self.network, NetworkConfig) else self.network
        if not isinstance(network, dict):
            raise ValueError(f"network must be a dict of NetworkConfig fields, got {type(self.network).__name__}")
        object.__setattr__(self, "network", NetworkConfig.create(**network))

    def default_maximize(self) -> MaximizeConfig:
        return MAXIMIZE

    def default_output_warping(self) -> str:
        """Yeo-Johnson (:mod:`jbo.warping`), as the GP's (why: BENCHMARKS.md, ``dngo_vs_tpe`` and ``suite``);
        ``output_warping="none"`` gives Snoek et al.'s (2015) standardised targets."""
        return "yeo-johnson"

    def default_trust_region(self) -> bool:
        """On (TuRBO-1's trust region, :mod:`jbo.trust`), as the GP's (why: BENCHMARKS.md, ``dngo_vs_tpe`` and
        ``suite``); ``trust_region=False`` is the paper's whole-box search."""
        return True

    @classmethod
    def cli_options(cls) -> tuple[CliOption, ...]:
        """The fields' options, and the network's size and training length (``network.hidden``,
        ``network.num_steps``)."""
        defaults = NetworkConfig()
        return super().cli_options() + (
            CliOption("--hidden", "network.hidden", int, "+",
                      f"hidden layer widths (default {' '.join(map(str, defaults.hidden))})"),
            CliOption("--network-steps", "network.num_steps", int, None,
                      f"optimisation steps per network training (default {defaults.num_steps})"))

    def init(self, space, dtype, key) -> "EnsembleState":
        return init(self, space, dtype, key)

    def step(self, space, acquisition, state, inputs, key):
        return step(self, space, acquisition, state, inputs, key)

    def prepare(self, state, data, key, first: bool):
        return prepare(self, state, data, key, first)


@functools.lru_cache(maxsize=8)
def blr_for(quadratic: bool, curvature_scale: float):
    """The BLR surrogate of a DNGO config (cached: compiled programs key on it)."""
    return blr.blr_surrogate(quadratic=quadratic, curvature_scale=curvature_scale)


def _example_stats(config: DNGO, dim: int, dtype):
    m = config.network.hidden[-1]
    return jax.eval_shape(lambda: blr.basis_stats(jnp.zeros((1, m), dtype), jnp.zeros((1, dim), dtype),
                                                  jnp.zeros((1,), dtype), jnp.ones((1,), bool)))


@functools.partial(jax.jit, static_argnames=("surrogate", "config"))
def _cold_starts(keys, surrogate, stats, config: inference.InferenceConfig):
    return jax.vmap(lambda k: inference.cold_start(k, surrogate, stats, config))(keys)


def init(config: DNGO, space, dtype, key) -> EnsembleState:
    surrogate = blr_for(config.quadratic_prior, float(config.curvature_scale))
    stats = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), _example_stats(config, space.dim, dtype))
    start = _cold_starts(jax.random.split(key, config.n_networks), surrogate, stats, config.inference_config)
    shape = (config.n_networks, config.kept_samples, start.z.shape[-1])
    params = jax.eval_shape(lambda z: jax.vmap(jax.vmap(inference.to_params(surrogate, stats)))(z),
                            jax.ShapeDtypeStruct(shape, dtype))
    weights = init_networks(jax.random.key(0), config.network, space.dim, config.n_networks)
    zeros = lambda tree: jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), tree)
    return EnsembleState(zeros(weights), start.z, start.restarts, zeros(params))


def train(config: DNGO, state: EnsembleState, data, key, first, train_fn=None):
    """This suggestion's networks, by ``config.training`` (traceable; ``first`` may be traced).

    Args:
      config: the model; state: the carried state (last weights); data: padded standardised data.
      key: PRNG key (initialisation and mini-batches).
      first: no networks trained yet.
      train_fn: ``(key, weights, x, y, mask) -> (weights, loss)``; default :func:`train_networks`.
    Returns:
      ``(weights, final_loss (E,))`` (zero loss where nothing was trained).
    """
    net = config.network
    train_fn = train_fn or functools.partial(train_networks, config=net)
    k_init, k_train = jax.random.split(key)
    fresh = init_networks(k_init, net, data.x.shape[-1], config.n_networks)
    fit = lambda start: train_fn(k_train, start, data.x, data.y, data.mask)
    if config.training == "retrain-reset":
        return fit(fresh)
    if config.training == "retrain":
        return fit(jax.tree_util.tree_map(lambda a, b: jnp.where(first, a, b), fresh, state.weights))
    # "fixed": train once, on the data of the first model-based suggestion
    return jax.lax.cond(first, lambda: fit(fresh), lambda: (state.weights, jnp.zeros(config.n_networks, _dtype(net))))


def prepare(config: DNGO, state: EnsembleState, data, key, first: bool):
    """Train an ensemble's networks outside the compiled step, split over the local devices.

    One program cannot both split the members over several devices and run the BLR's samplers (``while``
    loops): on two CPU devices that deadlocked XLA (:mod:`jbo.devices`). So with several devices the
    ask/tell driver calls this first (the members train from one host thread per device,
    :func:`train_split`) and then the step with ``pretrained=True``; the keys are the step's own.

    Returns:
      ``(config, state)`` for the compiled step.
    """
    k_net = jax.random.split(key, 3)[0]
    train_fn = functools.partial(train_split, config=config.network)
    weights, loss = train(config, state, data, k_net, first, train_fn)
    return dataclasses.replace(config, pretrained=True), state._replace(weights=weights)


def feasibility(config: NetworkConfig, weights, labels, alpha: float = 1.0, noiseless: bool = True):
    r"""``x -> log P[feasible]``: Bayesian logistic regression with a Laplace approximation on each
    member's basis (and a constant), Snoek et al. 2015, §3.2 (eq. 10), the members' probabilities
    averaged.

    Args:
      config: the network; weights: stacked member weights ``(E, …)``.
      labels: every evaluated point with ``y`` 1 feasible / 0 infeasible (:func:`jbo.loop.feasibility`).
      alpha: prior precision of the logistic weights (the basis is a tanh layer: features in [-1, 1]).
      noiseless: the constraint is deterministic (:func:`jbo.models.classifier.log_probability`).
    """
    def features(w, x):
        phi = basis(config, w, x)
        return jnp.concatenate([phi, jnp.ones(phi.shape[:-1] + (1,), phi.dtype)], -1)

    posteriors = jax.vmap(lambda w: classifier.laplace_logistic(features(w, labels.x), labels.y, labels.mask, alpha))(weights)

    def log_feasibility(x):
        member = lambda w, post: classifier.log_probability(*classifier.logistic_predict(post, features(w, x)), noiseless)
        values = jax.vmap(member)(weights, posteriors)  # (E, m)
        return acq.log_mean_exp(values)

    return log_feasibility


def constraint_feasibility(config: NetworkConfig, surrogate, weights, constraints, key):
    r"""``x -> \sum_k \log P[c_k(x) \le 0]`` with each constraint value modelled by BLR on every member's
    basis (MAP hyperparameters, :func:`jbo.models.classifier.fit_constraints`), the members' probabilities
    averaged."""

    def member_fit(w, k):
        phi = basis(config, w, constraints.x)
        return classifier.fit_constraints(k, surrogate, constraints, 1,
                                          lambda y, mask: blr.basis_stats(phi, constraints.x, y, mask))

    num = jax.tree_util.tree_leaves(weights)[0].shape[0]
    stats, posteriors = jax.vmap(member_fit)(weights, jax.random.split(key, num))

    def log_probability(x):
        def member(w, member_stats, member_posteriors):
            phi = basis(config, w, x)
            return classifier.log_probability_feasible(surrogate, constraints.threshold, member_stats,
                                                       member_posteriors, x,
                                                       lambda s, points: blr.basis_inputs(s, points, phi))

        return acq.log_mean_exp(jax.vmap(member)(weights, stats, posteriors))  # (E, m) -> (m,)

    return log_probability


def step(config: DNGO, space, acquisition, state: EnsembleState, inputs, key):
    """One suggestion: train the basis networks (by ``config.training``), infer every member's BLR
    hyperparameters (warm-started), maximise the aggregated integrated acquisition (traceable)."""
    k_net, k_infer, k_acq = jax.random.split(key, 3)
    data, net, first = inputs.data, config.network, inputs.first
    if config.pretrained:
        weights, loss = state.weights, jnp.zeros(config.n_networks, _dtype(net))
    else:
        weights, loss = train(config, state, data, k_net, first)
    stats = ensemble_stats(weights, data.x, data.y, data.mask, config=net)
    surrogate = blr_for(config.quadratic_prior, float(config.curvature_scale))
    keys = jax.random.split(k_infer, config.n_networks)
    member = lambda k, s, z, r: inference.fit(k, surrogate, s, config.inference_config, Start(z, r), first)
    samples = jax.vmap(member)(keys, stats, state.z, state.restarts)
    terms = []
    if acquisition.classify:
        terms.append(feasibility(net, weights, inputs.labels))
    if acquisition.num_constraints:
        terms.append(constraint_feasibility(net, surrogate, weights, inputs.constraints, jax.random.fold_in(k_infer, 7)))
    log_feasibility = (lambda x: sum(term(x) for term in terms)) if terms else None
    x, score = propose(k_acq, weights, samples.params, stats, inputs, acquisition, config=net, surrogate=surrogate,
                       aggregator=config.aggregator, log_feasibility=log_feasibility)
    info = dict(samples.info, score=score, train_loss=loss.astype(jnp.float32))
    info.update(hyperparameter_means(jax.tree_util.tree_map(lambda a: a.reshape((-1,) + a.shape[2:]), samples.params)))
    z = jax.vmap(lambda s: inference.next_start(s, config.inference_config))(samples)
    return x, EnsembleState(weights, z, state.restarts, samples.params), info

