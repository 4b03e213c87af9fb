"""The step shared by models whose hyperparameters are all inferred: exact GPs (ARD, arc, BOCK, ...).

One suggestion is :func:`step`: infer ``S`` hyperparameter samples (warm-started from the last one),
condition the surrogate on the data under each, fantasise the pending points, and maximise the
integrated acquisition (:func:`propose`). Every model built on a :class:`~jbo.types.Surrogate`
whose parameters are all sampled reuses it: a config class derived from :class:`StepConfig` adds only
its options and :meth:`StepConfig.surrogate_for`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from jbo import acquisition as acq
from jbo import escape, inference, warping
from jbo.models import classifier
from jbo.models.base import ModelConfig, check_bool, check_choice
from jbo.optimize import maximize
from jbo.types import Acquisition, Inputs, Start, Surrogate


@dataclasses.dataclass(frozen=True)
class SampledConfig(ModelConfig):
    """Fields of every model whose hyperparameters are inferred (see :class:`jbo.inference.InferenceConfig`).

    Attributes:
      inference: ``"slice"`` (default, as in Snoek et al. 2012), ``"elliptical"`` (:mod:`jbo.elliptical`), ``"nuts"``
        or ``"map"``.
      num_samples: hyperparameter samples ``S`` per suggestion (MCMC methods).
      num_burnin: sweeps/steps discarded on the first fit (chain started from the prior).
      num_warmup: sweeps/steps discarded on later fits (chain warm-started from the last sample);
        ``None`` (default): 5, or 0 for the slice sampler of a model whose class sets
        ``continued_chain`` (the exact GP): its chain simply goes on from the last sample, as
        Spearmint's does (Snoek et al. 2012): as good for the GP at less cost, worse for BOCK
        (BENCHMARKS.md, design choices), so BOCK and the models not measured keep 5. NUTS adapts
        its step size on every fit: 5.
      thin: MCMC steps between kept samples.
      map_restarts: prior draws the first MAP fit also starts from.
      num_chains: slice sampling in ``C`` independent chains of ``num_samples / C`` samples each, every
        one continued at the next fit (:class:`jbo.inference.InferenceConfig`); side by side on
        accelerators, one after another on a CPU. Every chain discards ``num_burnin`` sweeps on the first
        fit and ``num_warmup`` on later ones, so on a CPU a fit costs ``C·warmup + S`` sweeps, not
        ``warmup + S`` (the same for the GP, whose warm chains discard none).
    """

    inference: str = "slice"
    num_samples: int = 10
    num_burnin: int = 50
    num_warmup: int | None = None
    thin: int = 1
    map_restarts: int = 4
    num_chains: int = 1
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
                                         self.thin, self.map_restarts, self.num_chains)

    def validate(self) -> None:
        self.inference_config.validate()


@dataclasses.dataclass(frozen=True)
class StepConfig(SampledConfig):
    """Base of the models whose suggestion is :func:`step` on a surrogate (exact GPs: ARD, arc, BOCK; a
    :class:`~jbo.models.SurrogateModel`): a subclass says which surrogate (:meth:`surrogate_for`).

    Attributes:
      classifier: the model of where evaluations are feasible (constrained EI):
        ``"least_squares"`` (default: GP regression of the ±1 labels,
        :func:`jbo.models.classifier.label_regression`) or ``"laplace"`` (the GP classifier with the
        logistic likelihood and a Laplace approximation, :func:`jbo.models.classifier.gp_classifier`;
        measured worse: BENCHMARKS.md, constrained).
      evidence_warp: at each suggestion, fit the model to the standardised targets and to their Yeo-Johnson warp
        and keep the one of larger evidence (:func:`warp_evidence`): the warp chosen by what the model can fit,
        not by the targets' marginal normality alone. Fits twice per suggestion; the run's ``output_warping``
        must be ``"none"`` (the model warps).
    """

    classifier: str = "least_squares"
    evidence_warp: bool = False

    def validate(self) -> None:
        super().validate()
        check_choice("classifier", self.classifier, classifier.CLASSIFIERS)
        check_bool(self, "evidence_warp")

    def check_output_warping(self, name: str) -> None:
        if self.evidence_warp and name != "none":
            raise ValueError(f"output_warping={name!r} with evidence_warp=True: the model chooses its own warp of "
                             "the targets; pass output_warping='none', or evidence_warp=False to fix the warp")

    def surrogate_for(self, space) -> Surrogate:
        """The surrogate this model fits on ``space`` (the same object for equal arguments: compiled
        programs key on it)."""
        raise TypeError(f"model {self.name!r} ({type(self).__name__}) defines no surrogate_for(space)")

    def init(self, space, dtype, key) -> "SampledState":
        """Prior draws the first fit starts from (:func:`init`; with ``evidence_warp``, the same for both fits)."""
        state = init(self.surrogate_for(space), inference.example_data(space.dim, dtype), self, key)
        return state._replace(z=jnp.stack([state.z, state.z])) if self.evidence_warp else state

    def step(self, space, acquisition, state, inputs, key):
        """One suggestion (:func:`step` on :meth:`surrogate_for`)."""
        return step(self.surrogate_for(space), self, acquisition, state, inputs, key)


class SampledState(NamedTuple):
    """What a sampled model carries between suggestions.

    Attributes:
      z: ``(P,)`` where the next fit starts: a prior draw before the first fit, then the last
        unconstrained sample (a warm start); ``(C, P)``, one per chain, with ``num_chains = C > 1``; with
        ``evidence_warp``, one such start per candidate targets on a leading axis of 2 (unwarped, warped).
      restarts: ``(R, P)`` prior draws the first MAP fit also starts from (``R = 0`` for MCMC).
      params: the last fit's samples, constrained (the surrogate's params PyTree, leading axis ``S``); with
        ``evidence_warp``, those of the targets chosen.
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
    shape = jax.ShapeDtypeStruct((config.kept_samples,) + start.z.shape[-1:], dtype)
    params = jax.eval_shape(lambda z: jax.vmap(inference.to_params(surrogate, data))(z), shape)
    return SampledState(start.z, start.restarts, jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), params))


def check_pending(surrogate: Surrogate, mode: str) -> None:
    """``ValueError`` unless ``surrogate`` can condition on pending points the way ``mode`` asks."""
    if surrogate.fantasize is None:
        raise ValueError(f"surrogate {surrogate.name!r} has no fantasize: it cannot condition on pending points")
    if mode == "fantasies" and ("y" not in inspect.signature(surrogate.fantasize).parameters
                                or surrogate.predict_joint is None):
        raise ValueError(f"surrogate {surrogate.name!r} conditions pending points at its own mean only: "
                         "use pending='believer'")


def propose(key, surrogate: Surrogate, params, inputs: Inputs, acquisition: Acquisition, anchors=None,
            best=None, exclusion=None, log_feasibility=None):
    """Condition every sample, fantasise the pending points, maximise the integrated acquisition.

    Args:
      key: PRNG key (Thompson sampling).
      surrogate: the model; params: stacked hyperparameter samples (leading axis ``S``).
      inputs: the suggestion's data, pending points, anchors, incumbent and UCB weight.
      acquisition: what to maximise (:class:`~jbo.types.Acquisition`) and the search sizes.
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
        check_pending(surrogate, acquisition.pending)
        posteriors = acq.pending_posteriors(k_pending, surrogate, posteriors, *inputs.pending, acquisition.pending,
                                            acquisition.num_fantasies)

    def thompson(k):
        if surrogate.predict_joint is None:
            raise ValueError(f"surrogate {surrogate.name!r} has no predict_joint: Thompson sampling needs one")
        return acq.thompson_sample(k, surrogate.predict_joint, posteriors, anchors)

    def score(fn, log_domain, posteriors=posteriors):
        return acq.integrate(surrogate.predict, posteriors, fn, log_domain, best)

    def screen(fn, log_domain):  # the anchors' first scoring, under the first sample (MaximizeConfig.screen)
        return score(fn, log_domain, jax.tree_util.tree_map(lambda a: a[:1], posteriors))

    return search(key, acquisition, inputs.ucb_beta, anchors, score, thompson, log_feasibility, exclusion,
                  inputs.choice, inputs.region, screen)


def hyperparameter_means(params) -> dict:
    """``{"hyperparameters.<path>": mean over samples}`` of stacked hyperparameter samples (diagnostics)."""
    leaves = jax.tree_util.tree_leaves_with_path(params)
    return {"hyperparameters." + ".".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path): jnp.mean(leaf, 0)
            for path, leaf in leaves}


def search(key, acquisition: Acquisition, ucb_beta, anchors, score_of, thompson, log_feasibility=None,
           exclusion=None, choice=None, region=None, screen_of=None):
    """What every proposal ends with: Thompson sampling on the anchors, or the acquisition's score
    maximised from them (:func:`jbo.optimize.maximize`), discounted by the probability of feasibility.

    Args:
      key: PRNG key (Thompson sampling).
      acquisition: the acquisition and the search sizes; ucb_beta: UCB's weight.
      anchors: ``(A, D)`` starting candidates.
      score_of: ``(pointwise, log_domain) -> (x (m, D) -> (m,))``, the model's integrated score of a
        pointwise acquisition (:func:`jbo.acquisition.resolve`).
      thompson: ``key -> index`` into ``anchors`` of a Thompson draw's minimiser.
      log_feasibility: ``x -> log P[feasible]``, added to a log score (constrained EI), or ``None``.
      exclusion: region where the score is ``-inf`` (:func:`jbo.escape.exclude`), or ``None``.
      choice: which option of a :class:`jbo.acquisition.Choice` (``Inputs.choice``).
      region: ``(lower, upper)`` the search keeps to (``Inputs.region``), or ``None``: the unit cube.
      screen_of: as ``score_of`` under one hyperparameter sample, for :attr:`jbo.optimize.MaximizeConfig.screen`,
        or ``None``.
    Returns:
      ``(x (D,), score)``.
    """
    if acquisition.function == "thompson":
        if log_feasibility is not None:
            raise ValueError(acq.CONSTRAINED_NEEDS_LOG)
        return anchors[thompson(key)], jnp.zeros((), anchors.dtype)
    config = acquisition.maximize

    def scored(of):
        score = acq.integrated(acquisition.function, of, ucb_beta, choice, log_feasibility)
        return score if exclusion is None else escape.exclude(score, *exclusion)

    screen = (scored(screen_of), config.screen) if screen_of is not None and config.screen else None
    return maximize(scored(score_of), anchors, config.top_k, config.num_steps, config.learning_rate, region, screen,
                    config.schedule, config.eps)


def warp_evidence(surrogate: Surrogate, params, data, log_jacobian=0.0, num_fitted: int = 0):
    r"""A model's evidence for the targets ``y`` it was fitted to, through a warp ``z = w(y)``:

    .. math:: E = \frac{1}{S} \sum_s \log p(w(y) \mid θ_s) + \log |\partial w / \partial y|
       - \frac{k}{2} \log n,

    the posterior mean of the (warped GP's) log marginal likelihood, a density of ``y`` whatever the warp
    (Snelson, Rasmussen & Ghahramani 2004), less BIC's penalty for the ``k`` parameters the warp fitted to the
    same data (Yeo-Johnson's λ: ``k = 1``). Under MAP (``S = 1``) it is the type-II likelihood at the optimum.

    Args:
      surrogate: the model; params: its samples (leading axis ``S``) fitted to ``data`` (the warped targets).
      log_jacobian: ``log |∂w/∂y|`` (:func:`jbo.warping.yeo_johnson_with_log_jacobian`; 0 for no warp).
      num_fitted: ``k``.
    Returns:
      The scalar ``E``.
    """
    log_likelihood = jax.vmap(surrogate.log_likelihood, in_axes=(0, None))(params, data)
    n = jnp.maximum(jnp.sum(data.mask), 1)
    return jnp.mean(log_likelihood) + log_jacobian - 0.5 * num_fitted * jnp.log(n)


def fit_choosing_warp(key, surrogate: Surrogate, config: StepConfig, state: SampledState, inputs: Inputs):
    """Fit the model to the standardised targets and to their Yeo-Johnson warp; keep the one of larger
    evidence (:func:`warp_evidence`; ``StepConfig.evidence_warp``).

    Returns:
      ``(samples, inputs, z, info)``: the chosen fit's samples, ``inputs`` with its targets and incumbent, both
      fits' next starts ``(2, ...)``, and ``info`` (``warped``: 1 where the warp was kept; ``warp_evidence``:
      the warped targets' evidence less the unwarped ones'; ``warp_lambda``: the warp's exponent).
    """
    data = inputs.data
    warped_y, log_jacobian, lam = warping.yeo_johnson_with_log_jacobian(data.y, data.mask)
    warped_data = data._replace(y=warped_y)
    starts = [Start(state.z[i], state.restarts) for i in range(2)]
    fits = [inference.fit(jax.random.fold_in(key, i), surrogate, d, config.inference_config, start, inputs.first)
            for i, (d, start) in enumerate(zip((data, warped_data), starts))]
    gain = (warp_evidence(surrogate, fits[1].params, warped_data, log_jacobian, num_fitted=1)
            - warp_evidence(surrogate, fits[0].params, data))
    warped = jnp.isfinite(gain) & (gain > 0)
    samples = jax.tree_util.tree_map(lambda a, b: jnp.where(warped, b, a), fits[0], fits[1])
    best = jnp.min(jnp.where(data.mask, warped_y, jnp.inf))
    inputs = inputs._replace(data=data._replace(y=jnp.where(warped, warped_y, data.y)),
                             best=jnp.where(warped, best, inputs.best))
    z = jnp.stack([inference.next_start(f, config.inference_config) for f in fits])
    return samples, inputs, z, dict(warped=warped.astype(jnp.int32), warp_evidence=gain, warp_lambda=lam)


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
    if config.evidence_warp:
        samples, inputs, z, warp_info = fit_choosing_warp(k_fit, surrogate, config, state, inputs)
    else:
        samples = inference.fit(k_fit, surrogate, inputs.data, config.inference_config,
                                Start(state.z, state.restarts), inputs.first)
        z, warp_info = inference.next_start(samples, config.inference_config), {}
    info = {**samples.info, **warp_info}
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
    info.update(hyperparameter_means(samples.params))
    return x, SampledState(z, state.restarts, samples.params), info
