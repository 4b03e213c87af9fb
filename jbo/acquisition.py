r"""Acquisition functions (minimisation convention) and their integration over hyperparameters.

A pointwise acquisition is ``acq(mean, var, best) -> score`` (higher is better) on the standardised
scale, elementwise over candidates. jbo's are named (:data:`ACQUISITIONS`: ``"ei"``, ``"logei"``, ``"pi"``,
``"ucb"``, and ``"thompson"``, which is not pointwise); one of your own is any such function, or a
:class:`Pointwise` that says whether its score is a log::

    def lower_confidence_bound(mean, var, best):
        return -(mean - 2.0 * jnp.sqrt(var))

    jbo.minimize(f, space, acquisition=lower_confidence_bound)
    jbo.minimize(f, space, acquisition=jbo.acquisition.Pointwise(my_log_score, log=True))

Every model integrates it over its hyperparameter samples, conditions on pending points first and, for
a log score, adds the log probability of feasibility under constraints (:func:`constrained`). The integrated acquisition of Snoek et al. (2012, eq. 6) averages it over the ``S``
hyperparameter samples, :math:`\hat a(x) = \frac1S \sum_s a(x; \theta_s)`, which :func:`integrate`
builds from a surrogate's ``predict`` with ``vmap``. For log-EI the average is taken in the linear
domain with a log-sum-exp, so the integrated log-EI is the log of the integrated EI.

Expected improvement below the incumbent :math:`f^*` with :math:`z = (f^* - \mu)/\sigma` is
:math:`\mathrm{EI} = \sigma\, h(z)`, :math:`h(z) = z\Phi(z) + \varphi(z)` (Jones et al., 1998). Far
from the incumbent :math:`h` underflows and gradient ascent stalls; :func:`log_h` evaluates
:math:`\log h` stably everywhere (Ament et al., 2023, "Unexpected improvements to expected
improvement", eq. 9), which is what makes log-EI optimisable from random starts.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax.scipy.special import erfcx, log_ndtr, ndtr

from jbo import checks
from jbo.types import Names

_LOG_2PI_HALF = 0.5 * math.log(2.0 * math.pi)
_LOG_PI_2_HALF = 0.5 * math.log(math.pi / 2.0)


def _log1mexp(x):
    """``log(1 - exp(x))`` for ``x < 0`` (Mächler, 2012)."""
    return jnp.where(x > -math.log(2.0), jnp.log(-jnp.expm1(x)), jnp.log1p(-jnp.exp(x)))


def log_h(z):
    r"""Stable :math:`\log(z\Phi(z) + \varphi(z))`.

    For :math:`z > -1` the direct form is accurate. Below, :math:`h(z) = \varphi(z)\,(1 - |z|
    \sqrt{\pi/2}\,\mathrm{erfcx}(|z|/\sqrt2))`, evaluated with ``log1mexp``; in the far tail
    (:math:`z < -30` in float64, :math:`-10` in float32, where that difference cancels) the
    asymptotic series of Mills' ratio takes over.
    """
    threshold = -30.0 if jnp.result_type(z, float) == jnp.float64 else -10.0
    # Each branch gets an input clamped into its own range so no branch makes a nan/inf gradient
    # that ``where`` would then propagate.
    # (``where`` rather than ``maximum``/``clip``: those split the gradient in half at a tie, which
    # would halve d log h / dz exactly at the branch points.)
    z_hi = jnp.where(z > -1.0, z, -1.0)
    z_mid = jnp.where(z > -1.0, -1.0, jnp.where(z > threshold, z, threshold))
    z_far = jnp.where(z > threshold, threshold, z)
    direct = jnp.log(z_hi * ndtr(z_hi) + jnp.exp(-0.5 * z_hi**2 - _LOG_2PI_HALF))
    mid = -0.5 * z_mid**2 - _LOG_2PI_HALF + _log1mexp(
        jnp.log(erfcx(-z_mid / math.sqrt(2.0)) * jnp.abs(z_mid)) + _LOG_PI_2_HALF)
    # Asymptotic series 1 - |z| Mills(|z|) = sum_k (-1)^k (2k-1)!! z^-(2k+2); eight terms reach
    # float64 round-off at |z| = 30 (JAX's erfcx gradient overflows beyond |z| ~ 37).
    w = 1.0 / z_far**2
    series = jnp.zeros_like(w)
    for coefficient in (2027025.0, 135135.0, 10395.0, 945.0, 105.0, 15.0, 3.0, 1.0):
        series = coefficient - w * series
    series = w * series
    far = -0.5 * z_far**2 - _LOG_2PI_HALF + jnp.log(series)
    return jnp.where(z > -1.0, direct, jnp.where(z > threshold, mid, far))


def expected_improvement(mean, var, best):
    """EI of a minimisation below ``best``: ``σ h((best - μ)/σ)``."""
    sigma = jnp.sqrt(var)
    z = (best - mean) / sigma
    return sigma * (z * ndtr(z) + jnp.exp(-0.5 * z**2 - _LOG_2PI_HALF))


def log_expected_improvement(mean, var, best):
    """``log EI = log σ + log h(z)``, finite for every finite input (see :func:`log_h`)."""
    sigma = jnp.sqrt(var)
    return jnp.log(sigma) + log_h((best - mean) / sigma)


def probability_of_improvement(mean, var, best):
    """``P(f < best) = Φ((best - μ)/σ)`` (reported in the log domain by :func:`log_probability_of_improvement`)."""
    return ndtr((best - mean) / jnp.sqrt(var))


def log_probability_of_improvement(mean, var, best):
    """``log Φ((best - μ)/σ)``, stable in the lower tail."""
    return log_ndtr((best - mean) / jnp.sqrt(var))


def upper_confidence_bound(mean, var, best=None, beta: float = 2.0):
    """Lower confidence bound of a minimisation, negated so that higher is better: ``-(μ - √β σ)``."""
    return -(mean - jnp.sqrt(beta * var))


# name -> (pointwise function, reduce over samples in the log domain?)
ACQUISITIONS = Names("jbo.acquisition.ACQUISITIONS", {
    "ei": (log_expected_improvement, True),  # optimised as log-EI; same argmax as EI
    "logei": (log_expected_improvement, True),
    "pi": (log_probability_of_improvement, True),
    "ucb": (upper_confidence_bound, False),
}, "pass a function acquisition(mean, var, best) -> score, or a jbo.acquisition.Pointwise")

#: Every built-in acquisition's name (Thompson sampling is not pointwise: it draws one function).
NAMES = (*ACQUISITIONS, "thompson")


@dataclasses.dataclass(frozen=True)
class Pointwise:
    """An acquisition of your own: ``score = fn(mean, var, best)``, elementwise over candidates, maximised.

    ``mean`` and ``var`` are the predictive moments of the standardised targets (noise excluded), ``best``
    the incumbent on the same scale (minimising); a model whose priors are stated in the objective's units
    (``BOCK(units="objective")``) passes them in those units, centred. Models integrate it over their hyperparameter samples
    (the mean of the scores, or of ``exp(score)`` for a ``log`` score), after conditioning on pending points.

    Attributes:
      fn: the pure, traceable function.
      log: the score is the log of a positive acquisition (like log-EI): samples are averaged in the
        linear domain, and constraints add ``log P[feasible]``. A score that is not a log cannot be
        discounted by a probability of feasibility (constraints raise).
    """

    fn: Callable
    log: bool = False

    def __post_init__(self):
        if not callable(self.fn) or isinstance(self.fn, type) or not _takes_three(self.fn):
            raise ValueError(f"acquisition: fn must be a function (mean, var, best) -> score, got {self.fn!r}")
        checks.boolean("acquisition: log", self.log)
        try:
            hash(self.fn)
        except TypeError:
            raise ValueError(f"acquisition: {self.fn!r} is not hashable (it becomes part of a compiled program); "
                             "pass a function") from None

    def __call__(self, mean, var, best):
        return self.fn(mean, var, best)

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", type(self.fn).__name__)


def _takes_three(fn) -> bool:
    try:
        inspect.signature(fn).bind(None, None, None)
    except TypeError:
        return False
    except ValueError:  # no signature to read (some builtins): let the call tell
        return True
    return True


def as_acquisition(value: Any) -> str | Pointwise | Choice | ConstraintAware:
    """``value`` as an acquisition: a built-in name (:data:`NAMES`), a :class:`Pointwise`, a :class:`Choice`
    (or :class:`Mixture`), a :class:`ConstraintAware`, or a function (wrapped as ``Pointwise(value)``); a
    ``ValueError`` naming ``acquisition`` otherwise."""
    if isinstance(value, (Choice, ConstraintAware)):
        return value
    if isinstance(value, str):
        if value not in NAMES:
            raise ValueError(f"unknown acquisition {value!r}; valid choices: {list(NAMES)} or a function "
                             "(mean, var, best) -> score")
        return value
    if isinstance(value, Pointwise):
        return value
    if callable(value) and not isinstance(value, type):
        return Pointwise(value)
    raise ValueError(f"acquisition must be one of {list(NAMES)} or a function (mean, var, best) -> score, "
                     f"got {value!r}")


@dataclasses.dataclass(frozen=True)
class Choice:
    """Several pointwise acquisitions in one compiled program, one of them picked at run time.

    A model's step scores candidates with option ``Inputs.choice`` (an integer array, so runs of one
    program can differ in it, e.g. the arms of :func:`jbo.study`): :func:`integrated` builds every
    option's integrated score and ``lax.switch``-es between them. Under ``vmap`` a switch computes every
    branch; run one after the other (``lax.map``, a host loop) it computes only the chosen one.

    Attributes:
      options: built-in names (not ``"thompson"``, which is not pointwise) or :class:`Pointwise` values.
    """

    options: tuple

    def __post_init__(self):
        options = tuple(as_acquisition(o) for o in (self.options if isinstance(self.options, (tuple, list))
                                                    else (self.options,)))
        if not options or any(o == "thompson" or isinstance(o, (Choice, ConstraintAware)) for o in options):
            raise ValueError(f"acquisition: a Choice takes one or more pointwise acquisitions (not thompson), "
                             f"got {self.options!r}")
        object.__setattr__(self, "options", options)

    def index(self, function) -> int:
        """Position of ``function`` (a name or :class:`Pointwise`) among the options."""
        return self.options.index(as_acquisition(function))

    @property
    def name(self) -> str:
        return "|".join(o if isinstance(o, str) else o.name for o in self.options)


@dataclasses.dataclass(frozen=True)
class Mixture(Choice):
    r"""A portfolio of pointwise acquisitions: each suggestion maximises one of them, drawn at random.

    Suggestion :math:`t` draws option :math:`k_t \sim \mathrm{Categorical}(w)` from its own key and maximises
    that option's integrated score, so over a run the acquisitions take turns in proportion to ``weights``
    (a randomised portfolio: Hoffman, Brochu & de Freitas, 2011, "Portfolio allocation for Bayesian
    optimization", keep a portfolio of EI, PI and UCB; their GP-Hedge adapts the weights from the nominees'
    posterior means, whereas these stay fixed). The program holds every option once, as a
    :class:`Choice` does; only the drawn one is computed. Under constraints (:func:`constrained`) a
    suggestion draws among the options scored as logs, the ones a probability of feasibility can discount
    (EI, PI, not UCB). ::

        jbo.minimize(f, space, acquisition=jbo.acquisition.Mixture(("ei", "ucb", "pi")))

    Attributes:
      options: built-in pointwise names or :class:`Pointwise` values (not ``"thompson"``).
      weights: the options' relative weights (positive; their :attr:`probabilities` are these normalised),
        equal when ``None``.
    """

    weights: tuple | None = None

    def __post_init__(self):
        super().__post_init__()
        weights = (1.0,) * len(self.options) if self.weights is None else self.weights
        if not isinstance(weights, (tuple, list)) or len(weights) != len(self.options):
            raise ValueError(f"acquisition: a Mixture's weights need one number per option ({len(self.options)}), "
                             f"got {self.weights!r}")
        weights = tuple(checks.positive("acquisition: each Mixture weight", w) for w in weights)
        object.__setattr__(self, "weights", weights)

    @property
    def probabilities(self) -> tuple:
        """The options' probabilities: the weights normalised."""
        return tuple(w / sum(self.weights) for w in self.weights)

    def log_options(self) -> tuple:
        """The options that are scored as logs (those a probability of feasibility can discount)."""
        return tuple(k for k, option in enumerate(self.options) if resolve(option)[1])

    def draw(self, key, constrained: bool = False):
        """The option of one suggestion: an ``int32`` index drawn with :attr:`probabilities`; ``constrained``:
        among the log-scored options only (:meth:`log_options`; a ``ValueError`` if there is none)."""
        weights = self.probabilities
        if constrained:
            allowed = self.log_options()
            if not allowed:
                raise ValueError(CONSTRAINED_NEEDS_LOG)
            weights = tuple(w if k in allowed else 0.0 for k, w in enumerate(weights))
        return jax.random.choice(key, len(self.options), p=jnp.asarray(weights) / sum(weights)).astype(jnp.int32)

    @property
    def name(self) -> str:
        return f"mixture({super().name})"


@dataclasses.dataclass(frozen=True)
class ConstraintAware:
    r"""One acquisition for runs without constraints, another for runs with them.

    A constrained run maximises :math:`a(x)\,P[\text{feasible} \mid x]` (:func:`constrained`), which needs
    an acquisition scored as a log; UCB, Thompson sampling and scores that are not logs have none
    (:data:`CONSTRAINED_NEEDS_LOG`). A run is constrained when it models feasibility: failures counted
    as infeasible (``failures="constraint"``) or evaluations told ``feasible`` or ``constraints``. Its
    suggestions then maximise ``constrained``, the others ``free``. The GP's default is
    ``ConstraintAware("ucb", "ei")`` (:meth:`jbo.models.GP.default_acquisition`). ::

        jbo.minimize(f, space, acquisition=jbo.acquisition.ConstraintAware("ucb", "pi"))

    Attributes:
      free: the acquisition of an unconstrained run: anything ``acquisition=`` takes but another
        :class:`ConstraintAware`.
      constrained: that of a constrained run: one scored as a log (``"ei"``, ``"logei"``, ``"pi"``, a
        :class:`Pointwise` with ``log=True``, a :class:`Choice` of those, a :class:`Mixture` with one).
    """

    free: Any
    constrained: Any = "ei"

    def __post_init__(self):
        free, constrained = as_acquisition(self.free), as_acquisition(self.constrained)
        if isinstance(free, ConstraintAware) or isinstance(constrained, ConstraintAware):
            raise ValueError("acquisition: a ConstraintAware's options cannot be ConstraintAware themselves")
        if not _scored_as_log(constrained):
            raise ValueError(f"acquisition: ConstraintAware(constrained={self.constrained!r}): "
                             + CONSTRAINED_NEEDS_LOG)
        object.__setattr__(self, "free", free)
        object.__setattr__(self, "constrained", constrained)

    def pick(self, constrained: bool):
        """The acquisition of a run: ``constrained`` if it models feasibility, ``free`` otherwise."""
        return self.constrained if constrained else self.free

    @property
    def name(self) -> str:
        return f"{_name(self.free)} ({_name(self.constrained)} under constraints)"


def _name(function) -> str:
    return function if isinstance(function, str) else function.name


def _scored_as_log(function) -> bool:
    """``function`` can be discounted by a probability of feasibility (under constraints, a Mixture
    draws among its log options)."""
    if isinstance(function, Mixture):
        return bool(function.log_options())
    if isinstance(function, Choice):
        return all(_scored_as_log(option) for option in function.options)
    return function != "thompson" and resolve(function)[1]


def for_suggestion(function, key, constrained: bool):
    """The acquisition one suggestion maximises, and the option it drew.

    A :class:`ConstraintAware` gives its option for the run; a :class:`Mixture` draws its option from
    ``key`` (:meth:`Mixture.draw`); any other acquisition is the suggestion's as it is.

    Args:
      function: the run's acquisition (:func:`as_acquisition`).
      key: the PRNG key of a Mixture's draw.
      constrained: the run models feasibility (static).
    Returns:
      ``(acquisition, option)``: ``option`` the drawn index (an ``int32`` array) for a Mixture, else ``None``.
    """
    if isinstance(function, ConstraintAware):
        function = function.pick(constrained)
    if isinstance(function, Mixture):
        return function, function.draw(key, constrained)
    return function, None


def integrated(function, score_of: Callable, ucb_beta=2.0, choice=None, log_feasibility: Callable | None = None):
    """The integrated score ``x (m, D) -> (m,)`` of an acquisition, from a model's ``score_of``.

    Args:
      function: a pointwise built-in name, a :class:`Pointwise` or a :class:`Choice`.
      score_of: ``(pointwise, log_domain) -> score``: the model's integration over its samples
        (:func:`integrate`, or an ensemble's).
      ucb_beta: UCB's weight (may be traced).
      choice: the option of a :class:`Choice` (an integer array, may be traced); ignored otherwise.
      log_feasibility: ``x -> log P[feasible]`` added to each (log) score (:func:`constrained`), or ``None``.
    """
    def scored(fn, log_domain):
        score = score_of(fn, log_domain)
        return score if log_feasibility is None else constrained(score, log_feasibility, log_domain)

    if isinstance(function, Mixture) and log_feasibility is not None:
        # A constrained Mixture draws among its log options only (Mixture.draw): keep those, re-indexed.
        kept = function.log_options()
        if not kept:
            raise ValueError(CONSTRAINED_NEEDS_LOG)
        choice = jnp.asarray([kept.index(k) if k in kept else 0 for k in range(len(function.options))],
                             jnp.int32)[jnp.asarray(0 if choice is None else choice, jnp.int32)]
        function = Choice(tuple(function.options[k] for k in kept)) if len(kept) > 1 else function.options[kept[0]]
    if not isinstance(function, Choice):
        return scored(*resolve(function, ucb_beta))
    # The model integrates over its samples once, not once per option: one score whose pointwise function
    # switches, so the predictions are made (and compiled) once. Where the options' domains differ, the
    # domain is an array too; a model whose integration takes only a fixed domain gets one score per domain.
    index = jnp.asarray(0 if choice is None else choice, jnp.int32)
    resolved = [resolve(f, ucb_beta) for f in function.options]
    logs = [log_domain for _, log_domain in resolved]
    if len(set(logs)) > 1 and log_feasibility is None:
        pointwise = functools.partial(_switched, index, [fn for fn, _ in resolved])
        try:
            return score_of(pointwise, jnp.asarray(logs)[index])
        except jax.errors.ConcretizationTypeError:
            pass
    domains = sorted({log_domain for _, log_domain in resolved})
    scores = []
    for domain in domains:
        members = [k for k, (_, log_domain) in enumerate(resolved) if log_domain == domain]
        local = jnp.asarray([members.index(k) if k in members else 0 for k in range(len(resolved))], jnp.int32)[index]
        fns = [resolved[k][0] for k in members]
        pointwise = fns[0] if len(fns) == 1 else functools.partial(_switched, local, fns)
        scores.append(scored(pointwise, domain))
    if len(scores) == 1:
        return scores[0]
    is_log = jnp.asarray([log_domain for _, log_domain in resolved])[index]
    return lambda x: jax.lax.cond(is_log, scores[1], scores[0], x)


def _switched(index, fns, mean, var, best):
    return jax.lax.switch(index, fns, mean, var, best)


def is_pointwise(function) -> bool:
    """``function`` scores candidates one by one (a built-in name of :data:`ACQUISITIONS`, a :class:`Pointwise`
    or a :class:`Choice` of them): arms of a study that use it can share one :class:`Choice`. A
    :class:`Mixture` picks its option itself, and a :class:`ConstraintAware` picks one per run, so neither is."""
    if isinstance(function, (Mixture, ConstraintAware)):
        return False
    return isinstance(function, (Pointwise, Choice)) or function in ACQUISITIONS


def resolve(function: str | Pointwise, ucb_beta=2.0) -> tuple[Callable, bool]:
    """The pointwise function ``(mean, var, best) -> score`` of an acquisition and whether it is a log.

    Args:
      function: a built-in name other than ``"thompson"``, or a :class:`Pointwise`.
      ucb_beta: UCB's weight (may be traced).
    """
    if isinstance(function, Pointwise):
        return function.fn, function.log
    if isinstance(function, Choice):
        raise ValueError(f"acquisition {function.name!r} is a Choice: build its score with "
                         "jbo.acquisition.integrated (the option is picked at run time)")
    if function == "thompson" or function not in ACQUISITIONS:
        raise ValueError(f"acquisition {function!r} is not pointwise; pointwise: {list(ACQUISITIONS)} or a function")
    fn, log_domain = ACQUISITIONS[function]
    if function == "ucb":
        fn = functools.partial(fn, beta=ucb_beta)
    return fn, log_domain


def log_mean_exp(values, axis: int = 0):
    """``log mean exp(values)`` along ``axis``: the mean of positive quantities given as logs."""
    return jax.nn.logsumexp(values, axis=axis) - math.log(values.shape[axis])


@dataclasses.dataclass(frozen=True)
class IntegratedScore:
    """``(posteriors, best, x) -> (m,)``: a pointwise acquisition averaged over stacked posteriors.

    A frozen dataclass of functions, equal when its functions are: as the static part of a
    :class:`jax.tree_util.Partial` it lets :func:`jbo.optimize.maximize` reuse its compiled program
    from one iteration to the next (a new closure every iteration would recompile).
    """

    predict: Callable
    pointwise: Callable
    log_domain: bool

    def __call__(self, posteriors, best, x):
        return reduce_samples(self.values(posteriors, best, x), self.log_domain)

    def values(self, posteriors, best, x):
        """``(S, m)``: the pointwise acquisition under each sample."""
        mean, var = jax.vmap(self.predict, in_axes=(0, None))(posteriors, x)
        return self.pointwise(mean, var, best)


@dataclasses.dataclass(frozen=True)
class RuntimeDomainScore(IntegratedScore):
    """An :class:`IntegratedScore` whose domain (log or not) is an array argument: ``(posteriors, best,
    log_domain, x) -> (m,)``."""

    def __call__(self, posteriors, best, log_domain, x):
        return reduce_samples(self.values(posteriors, best, x), log_domain)


def reduce_samples(values, log_domain, axis: int = 0):
    """The mean over samples of an acquisition given as ``values``: of ``exp(values)`` (as a log) for a log
    score; ``log_domain`` may be an array (a :class:`Choice` of scores of both kinds, picked at run time)."""
    if isinstance(log_domain, bool):
        return log_mean_exp(values, axis) if log_domain else jnp.mean(values, axis=axis)
    return jnp.where(log_domain, log_mean_exp(values, axis), jnp.mean(values, axis=axis))


def integrate(surrogate_predict: Callable, posteriors, pointwise: Callable, log_domain: bool, best):
    """Integrated acquisition ``x (m, D) -> (m,)`` averaged over the stacked ``posteriors``.

    Args:
      surrogate_predict: ``predict(posterior, x) -> (mean, var)``.
      posteriors: posterior PyTree with a leading sample axis ``S``.
      pointwise: ``acq(mean, var, best)`` (the functions of :data:`ACQUISITIONS`, or any pure function;
        pass the same function object every iteration, not a new lambda: it is part of the program).
      log_domain: the pointwise values are logs of a positive acquisition; average with log-sum-exp.
      best: incumbent (standardised).
    Returns:
      A :class:`jax.tree_util.Partial` of :class:`IntegratedScore`: a function of ``x`` whose arrays
      (``posteriors``, ``best``) are PyTree leaves, so it can be passed to jitted functions as an
      argument.
    """
    if not isinstance(log_domain, bool):  # an array: the domain is picked at run time (a Choice)
        return jax.tree_util.Partial(RuntimeDomainScore(surrogate_predict, pointwise, True), posteriors,
                                     jnp.asarray(best), jnp.asarray(log_domain))
    return jax.tree_util.Partial(IntegratedScore(surrogate_predict, pointwise, log_domain), posteriors,
                                 jnp.asarray(best))


def thompson_sample(key, surrogate_predict_joint: Callable, posteriors, candidates):
    """Thompson sampling on a finite candidate set.

    Picks one hyperparameter sample at random, draws one joint posterior function over
    ``candidates`` from it and returns the index of its minimiser.

    Args:
      key: PRNG key.
      surrogate_predict_joint: ``(posterior, x) -> (mean (m,), cov (m, m))``.
      posteriors: stacked posteriors (leading axis ``S``).
      candidates: ``(m, D)`` points.
    Returns:
      Index into ``candidates``.
    """
    k_sample, k_draw = jax.random.split(key)
    num = jax.tree_util.tree_leaves(posteriors)[0].shape[0]
    s = jax.random.randint(k_sample, (), 0, num)
    posterior = jax.tree_util.tree_map(lambda a: a[s], posteriors)
    mean, cov = surrogate_predict_joint(posterior, candidates)
    jitter = 1e-9 if mean.dtype == jnp.float64 else 1e-5
    chol = jnp.linalg.cholesky(cov + jitter * jnp.eye(cov.shape[0], dtype=cov.dtype))
    draw = mean + chol @ jax.random.normal(k_draw, mean.shape, mean.dtype)
    return jnp.argmin(draw)


PENDING = ("believer", "fantasies")


def pending_posteriors(key, surrogate, posteriors, x, mask, mode: str = "believer", num_fantasies: int = 16):
    r"""Stacked posteriors conditioned on pending evaluations at ``x`` (rows where ``mask``).

    ``"believer"``: each posterior observes the pending points at its own predictive mean (the kriging
    believer; one posterior per sample). ``"fantasies"``: Monte Carlo EI (Snoek et al. 2015,
    eqs. 11–12): from each posterior, ``num_fantasies`` joint draws of the latent function at the
    pending points, and one conditioned posterior per draw; averaging the acquisition over the
    ``S × F`` posteriors (:func:`integrate`) integrates over the pending outcomes and the
    hyperparameters at once. The conditioning is the surrogate's ``fantasize`` (a blocked Cholesky
    update for the exact GP, a rank-``p`` update for BLR), whose ``y``-independent part ``vmap``
    computes once per sample.

    Args:
      key: PRNG key of the draws.
      surrogate: provides ``predict_joint`` and ``fantasize``.
      posteriors: stacked posteriors (leading axis ``S``).
      x: the pending points as the surrogate takes them; mask: ``(p,)`` real rows.
      mode: :data:`PENDING`.
      num_fantasies: ``F``.
    Returns:
      Stacked posteriors, leading axis ``S`` (believer) or ``S * F`` (fantasies).
    """
    if mode == "believer":
        return jax.vmap(surrogate.fantasize, in_axes=(0, None, None))(posteriors, x, mask)
    if mode != "fantasies":
        raise ValueError(f"unknown pending {mode!r}; valid choices: {list(PENDING)}")

    def draws(posterior, k):
        mean, cov = surrogate.predict_joint(posterior, x)
        both = mask[:, None] & mask[None, :]
        cov = jnp.where(both, cov, jnp.eye(cov.shape[0], dtype=cov.dtype))  # padded rows: independent, unit
        jitter = 1e-9 if cov.dtype == jnp.float64 else 1e-5
        chol = jnp.linalg.cholesky(cov + jitter * jnp.eye(cov.shape[0], dtype=cov.dtype))
        ys = mean + jax.random.normal(k, (num_fantasies, mean.shape[0]), mean.dtype) @ chol.T
        return jax.vmap(lambda y: surrogate.fantasize(posterior, x, mask, y))(ys)

    num = jax.tree_util.tree_leaves(posteriors)[0].shape[0]
    conditioned = jax.vmap(draws)(posteriors, jax.random.split(key, num))
    return jax.tree_util.tree_map(lambda a: a.reshape((-1,) + a.shape[2:]), conditioned)


#: Why an acquisition cannot be discounted by the probability of feasibility.
CONSTRAINED_NEEDS_LOG = ("constraints multiply an acquisition by P[feasible], which needs a positive acquisition "
                         "given as a log: acquisition='ei', 'logei', 'pi' or jbo.acquisition.Pointwise(fn, log=True); "
                         "UCB, Thompson sampling and scores that are not logs have no such product")


def constrained(score_fn: Callable, log_feasibility: Callable, log_domain: bool):
    r"""Constrained acquisition :math:`a(x)\,P[\text{feasible} \mid x]` (Gelbart et al. 2014; Snoek et
    al. 2015, eq. 10), as ``log a + log P`` for acquisitions maximised in the log domain (EI, log-EI,
    PI, a :class:`Pointwise` with ``log=True``). UCB and Thompson sampling are not probabilities of
    improvement; they have no such product.

    Args:
      score_fn: the (integrated) acquisition ``x -> (m,)``; log_feasibility: ``x -> (m,)`` log P.
      log_domain: ``score_fn`` returns logs.
    """
    if not log_domain:
        raise ValueError(CONSTRAINED_NEEDS_LOG)

    def score(x):
        return score_fn(x) + log_feasibility(x)

    return score
