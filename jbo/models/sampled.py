"""The step shared by models whose hyperparameters are all inferred: exact GPs (ARD, arc, BOCK, ...).

One suggestion is :func:`step`: infer ``S`` hyperparameter samples (warm-started from the last one),
condition the surrogate on the data under each, fantasise the pending points, and maximise the
integrated acquisition (:func:`propose`). Every model built on a :class:`~jbo.models.base.Surrogate`
whose parameters are all sampled reuses it; a model module adds only its config and its surrogate.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from jbo import acquisition as acq
from jbo import escape, inference
from jbo.models import classifier
from jbo.models.base import Acquisition, Inputs, ModelConfig, Surrogate, check_choice
from jbo.optimize import maximize


@dataclasses.dataclass(frozen=True)
class SampledConfig(ModelConfig):
    """Fields of every model whose hyperparameters are inferred (see :class:`jbo.inference.InferenceConfig`).

    Attributes:
      inference: ``"slice"`` (default, as in Snoek et al. 2012), ``"nuts"`` or ``"map"``.
      num_samples: hyperparameter samples ``S`` per suggestion (MCMC methods).
      num_burnin: sweeps/steps discarded on the first fit (chain started from the prior).
      num_warmup: sweeps/steps discarded on later fits (chain warm-started from the last sample);
        ``None`` (default): 5, or 0 for the slice sampler of a model whose class sets
        ``continued_chain`` (the exact GP): its chain simply goes on from the last sample, as
        Spearmint's does (Snoek et al. 2012). Measured: the GP's mean best over 30 seeds of
        Hartmann6 and of Branin was the same with 0 as with 5, for two thirds of the sampler's
        cost; BOCK's got worse (Rosenbrock-20, centre start: lower with 5 on 5 of 5 seeds), so
        it and the models not measured keep 5. NUTS adapts its step size on every fit: 5.
      thin: MCMC steps between kept samples.
      map_restarts: prior draws the first MAP fit also starts from.
    """

    inference: str = "slice"
    num_samples: int = 10
    num_burnin: int = 50
    num_warmup: int | None = None
    thin: int = 1
    map_restarts: int = 4
    continued_chain: ClassVar[bool] = False  # see num_warmup

    @property
    def kept_samples(self) -> int:
        """Samples a fit returns (one for MAP)."""
        return 1 if self.inference == "map" else self.num_samples

    @property
    def inference_config(self) -> inference.InferenceConfig:
        warmup = self.num_warmup
        if warmup is None:
            warmup = 0 if self.inference == "slice" and self.continued_chain else 5
        return inference.InferenceConfig(self.inference, self.num_samples, self.num_burnin, warmup,
                                         self.thin, self.map_restarts)

    def validate(self) -> None:
        self.inference_config.validate()


@dataclasses.dataclass(frozen=True)
class StepConfig(SampledConfig):
    """Fields of the models whose suggestion is :func:`step` (exact GPs: ARD, arc, BOCK).

    Attributes:
      classifier: the model of where evaluations are feasible (constrained EI):
        ``"least_squares"`` (default: GP regression of the ±1 labels,
        :func:`jbo.models.classifier.label_regression`) or ``"laplace"`` (the GP classifier with the
        logistic likelihood and a Laplace approximation, :func:`jbo.models.classifier.gp_classifier`;
        measured worse: BENCHMARKS.md, constrained).
    """

    classifier: str = "least_squares"

    def validate(self) -> None:
        super().validate()
        check_choice("classifier", self.classifier, classifier.CLASSIFIERS)


class SampledState(NamedTuple):
    """What a sampled model carries between suggestions.

    Attributes:
      z: ``(P,)`` where the next fit starts: a prior draw before the first fit, then the last
        unconstrained sample (a warm start).
      restarts: ``(R, P)`` prior draws the first MAP fit also starts from (``R = 0`` for MCMC).
      params: the last fit's samples, constrained (the surrogate's params PyTree, leading axis ``S``).
    """

    z: jnp.ndarray
    restarts: jnp.ndarray
    params: Any


@functools.partial(jax.jit, static_argnames=("surrogate", "config"))
def _cold_start(key, surrogate: Surrogate, data, config: inference.InferenceConfig):
    return inference.cold_start(key, surrogate, data, config)


def init(surrogate: Surrogate, data, config: SampledConfig, key) -> SampledState:
    """The state before the first fit: prior draws to start from, placeholder samples.

    Args:
      surrogate: the model; data: any data of the right shapes (one row is enough).
      config: the inference settings; key: PRNG key of the prior draws.
    """
    start = _cold_start(key, surrogate, data, config.inference_config)
    dtype = inference.data_dtype(data)
    shape = jax.ShapeDtypeStruct((config.kept_samples,) + start.z.shape, dtype)
    params = jax.eval_shape(lambda z: jax.vmap(inference.to_params(surrogate, data))(z), shape)
    return SampledState(start.z, start.restarts, jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), params))


def pointwise(name: str, ucb_beta):
    """The pointwise acquisition ``(mean, var, best) -> score`` of ``name`` and whether it is a log."""
    check_choice("acquisition", name, tuple(acq.ACQUISITIONS))
    fn, log_domain = acq.ACQUISITIONS[name]
    if name == "ucb":
        fn = functools.partial(fn, beta=ucb_beta)
    return fn, log_domain


def propose(key, surrogate: Surrogate, params, inputs: Inputs, acquisition: Acquisition, anchors=None,
            best=None, exclusion=None, log_feasibility=None):
    """Condition every sample, fantasise the pending points, maximise the integrated acquisition.

    Args:
      key: PRNG key (Thompson sampling).
      surrogate: the model; params: stacked hyperparameter samples (leading axis ``S``).
      inputs: the suggestion's data, pending points, anchors, incumbent and UCB weight.
      acquisition: name and search sizes.
      anchors, best: override ``inputs.anchors`` / ``inputs.best`` (an escape search).
      exclusion: region where the acquisition is ``-inf`` (:func:`jbo.escape.exclude`).
      log_feasibility: ``x -> log P[feasible]``, added to the log acquisition (constrained EI).
    Returns:
      ``(x (D,), score)``.
    """
    anchors = inputs.anchors if anchors is None else anchors
    best = inputs.best if best is None else best
    k_pending, key = jax.random.split(key)
    posteriors = jax.vmap(surrogate.condition, in_axes=(0, None))(params, inputs.data)
    if inputs.pending.x.shape[0]:
        if acquisition.pending == "fantasies" and "y" not in inspect.signature(surrogate.fantasize).parameters:
            raise ValueError(f"surrogate {surrogate.name!r} conditions pending points at its own mean only: "
                             "use pending='believer'")
        posteriors = acq.pending_posteriors(k_pending, surrogate, posteriors, *inputs.pending, acquisition.pending,
                                            acquisition.num_fantasies)
    if acquisition.name == "thompson":
        if log_feasibility is not None:
            raise ValueError("constraints discount EI, log-EI or PI (acquisition='ei', 'logei' or 'pi'), not Thompson sampling")
        index = acq.thompson_sample(key, surrogate.predict_joint, posteriors, anchors)
        return anchors[index], jnp.zeros((), anchors.dtype)
    fn, log_domain = pointwise(acquisition.name, inputs.ucb_beta)
    score = acq.integrate(surrogate.predict, posteriors, fn, log_domain, best)
    if log_feasibility is not None:
        score = acq.constrained(score, log_feasibility, log_domain)
    if exclusion is not None:
        score = escape.exclude(score, *exclusion)
    config = acquisition.maximize
    return maximize(score, anchors, config.top_k, config.num_steps, config.learning_rate)


def step(surrogate: Surrogate, config: StepConfig, acquisition: Acquisition, state: SampledState,
         inputs: Inputs, key, escape_config=None):
    """One suggestion of a sampled model (traceable).

    Args:
      surrogate: the model; config: its inference settings.
      acquisition: the acquisition and its search sizes.
      state: the last sample (warm start); inputs: this suggestion's arrays.
      key: PRNG key.
      escape_config: an :class:`jbo.escape.EscapeConfig` to leave a stalled basin (models with
        lengthscales only), or ``None``.
    Returns:
      ``(x (D,), state, info)`` with ``info`` holding the acquisition value and the inference's
      diagnostics.
    """
    k_fit, k_acq, k_escape, k_classify = jax.random.split(key, 4)
    start = inference.Start(state.z, state.restarts)
    samples = inference.fit(k_fit, surrogate, inputs.data, config.inference_config, start, inputs.first)
    info = dict(samples.info)
    plan = {}
    if escape_config:
        scale = escape.lengthscales(samples.params)
        data, search = inputs.data, acquisition.maximize
        route = escape.plan(k_escape, data.x, data.y, scale, inputs.anchors, inputs.best, escape_config,
                            search.num_local, search.local_scale, data.mask)
        plan = dict(anchors=route.anchors, best=route.best, exclusion=route.exclusion)
        info["escape"] = route.active
    terms = []
    if acquisition.classify:
        terms.append(classifier.fit_log_feasibility(jax.random.fold_in(k_classify, 0), inputs.labels,
                                                    classifier.default_classifier(config.classifier)))
    if acquisition.num_constraints:
        terms.append(classifier.fit_log_constraints(jax.random.fold_in(k_classify, 1), surrogate, inputs.constraints))
    if terms:
        plan["log_feasibility"] = lambda x: sum(term(x) for term in terms)
    x, score = propose(k_acq, surrogate, samples.params, inputs, acquisition, **plan)
    info["score"] = score
    return x, SampledState(samples.z[-1], state.restarts, samples.params), info
