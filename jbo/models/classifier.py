r"""Models of unknown constraints: the probability that an input is feasible (Snoek et al. 2015, §3.2).

Constrained EI discounts the expected improvement over the feasible observations by the probability
that ``x`` is feasible, :math:`\mathrm{EI}(x)\,P[c = 1 \mid x, \mathcal D]` (Gelbart et al. 2014). Three
binary classifiers give that probability:

* :func:`laplace_logistic`: Bayesian logistic regression on fixed features (DNGO's network basis, the
  paper's choice), :math:`P[c = 1 \mid x, w] = \sigma(\phi(x)^\top w)`, :math:`w \sim \mathcal N(0,
  \alpha^{-1} I)`, with a Laplace approximation;
* :func:`label_regression`: least-squares classification (R&W §6.5), the exact GP regression of the
  labels coded :math:`\pm 1`; the GP-type models' default (:func:`default_classifier`);
* :func:`gp_classifier`: a GP classifier, latent :math:`f \sim \mathcal{GP}(m, k)` with the logistic
  likelihood and a Laplace approximation (Rasmussen & Williams 2006, §3.4, Algorithms 3.1–3.2), its
  kernel hyperparameters the MAP of the approximate marginal likelihood (R&W eq. 3.32).

Each returns the latent predictive mean and variance; :func:`log_probability` turns them into
:math:`\log P[c = 1]`. For noiseless constraints (an evaluation that crashes at ``x`` always does)
the paper replaces the logistic by a step function, :math:`P[c = 1 \mid x] = P[f(x) > 0] =
\Phi(\mu / s)` under the Gaussian posterior of the latent: near an observed failure the latent
should be confidently negative and the probability go to zero (true of :func:`label_regression`,
not of the Laplace-logistic classifiers; see there). For noisy constraints the logistic
is averaged over the latent with MacKay's probit approximation, :math:`\int \sigma(f)\,\mathcal N(f;
\mu, s^2)\,df \approx \sigma\bigl(\mu / \sqrt{1 + \pi s^2 / 8}\bigr)` (R&W eq. 3.25), which stays
near 1/2 wherever the latent is uncertain; on a crashing objective constrained EI with the logistic
average then keeps sampling crashes (BENCHMARKS.md, design choices).
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import log_ndtr

import numpyro

from jbo import inference, linalg, priors
from jbo.kernels import Kernel, Matern52
from jbo.surrogates.gp import exact_gp
from jbo.types import Data, Surrogate

NEWTON_STEPS = 40


def log_probability(mean, var, noiseless: bool = True):
    """:math:`\\log P[c = 1]` from the latent's mean and variance: :math:`\\log\\Phi(\\mu / s)` for a
    noiseless constraint (the step function), :math:`\\log \\sigma(\\mu / \\sqrt{1 + \\pi s^2 / 8})` for a
    noisy one (the logistic averaged over the latent)."""
    if noiseless:
        return log_ndtr(mean / jnp.sqrt(var))
    return jax.nn.log_sigmoid(mean / jnp.sqrt(1.0 + math.pi * var / 8.0))


# ----------------------------------------------------------------------------- logistic regression


class LogisticPosterior(NamedTuple):
    """Laplace posterior of logistic-regression weights: mode ``mean`` ``(M,)`` and the lower Cholesky
    factor ``factor`` of the Hessian :math:`\\Phi^\\top W \\Phi + \\alpha I` at the mode."""

    mean: jnp.ndarray
    factor: jnp.ndarray


def laplace_logistic(phi, labels, mask, alpha: float = 1.0, steps: int = NEWTON_STEPS) -> LogisticPosterior:
    r"""Laplace approximation to Bayesian logistic regression (Newton's method, a fixed number of steps).

    Maximises :math:`\sum_n [c_n \log\sigma(\phi_n^\top w) + (1 - c_n)\log(1 - \sigma(\phi_n^\top w))]
    - \tfrac\alpha2 \lVert w\rVert^2` over the rows where ``mask``; the log posterior is concave, and
    Newton from ``w = 0`` converges in a few steps.

    Args:
      phi: ``(N, M)`` features; labels: ``(N,)`` 1 feasible, 0 infeasible; mask: ``(N,)`` real rows.
      alpha: prior precision of the weights.
      steps: Newton steps.
    Returns:
      A :class:`LogisticPosterior`.
    """
    weight = mask.astype(phi.dtype)
    labels = labels.astype(phi.dtype)
    eye = jnp.eye(phi.shape[-1], dtype=phi.dtype)

    def hessian(w):
        p = jax.nn.sigmoid(phi @ w)
        return (phi * (weight * p * (1 - p))[:, None]).T @ phi + alpha * eye

    def newton(_, w):
        p = jax.nn.sigmoid(phi @ w)
        grad = phi.T @ (weight * (labels - p)) - alpha * w
        return w + linalg.cho_solve(jnp.linalg.cholesky(hessian(w)), grad)

    w = jax.lax.fori_loop(0, steps, newton, jnp.zeros(phi.shape[-1], phi.dtype))
    return LogisticPosterior(w, jnp.linalg.cholesky(hessian(w)))


def logistic_predict(posterior: LogisticPosterior, phi):
    """Latent mean :math:`\\phi^\\top \\hat w` and variance :math:`\\phi^\\top H^{-1} \\phi` at features ``phi`` ``(m, M)``."""
    v = linalg.solve_triangular(posterior.factor, phi.T, lower=True)
    return phi @ posterior.mean, jnp.sum(v * v, axis=0)


# ----------------------------------------------------------------------------- GP classifier


class ClassifierPosterior(NamedTuple):
    """Laplace posterior of a GP classifier for one hyperparameter setting (R&W Algorithm 3.2's inputs).

    Attributes:
      params: kernel params and constant mean; data: the padded labelled inputs (``y`` holds the labels).
      gradient: :math:`\\nabla \\log p(c \\mid \\hat f)` at the mode, zero on padded rows.
      root_w: :math:`W^{1/2}` at the mode, zero on padded rows.
      factor: lower Cholesky factor of :math:`B = I + W^{1/2} K W^{1/2}`.
      log_marginal: the Laplace approximation to :math:`\\log p(c \\mid X)` (R&W eq. 3.32).
    """

    params: Any
    data: Data
    gradient: jnp.ndarray
    root_w: jnp.ndarray
    factor: jnp.ndarray
    log_marginal: jnp.ndarray


def _no_fantasies(*args, **kwargs):
    raise ValueError("a constraint classifier models a probability: it has no fantasies or joint predictions")


def _gram(kernel: Kernel, params, data: Data):
    both = data.mask[:, None] & data.mask[None, :]
    return jnp.where(both, kernel.gram(params["kernel"], data.x, data.x), 0.0)


def classifier_condition(kernel: Kernel, params, data: Data, steps: int = NEWTON_STEPS) -> ClassifierPosterior:
    r"""The Laplace mode of the latent function at the labelled rows (R&W Algorithm 3.1, logistic
    likelihood), in a fixed number of Newton steps so that it is differentiable and jits.

    Args:
      kernel: the latent GP's covariance; params: ``{"kernel", "mean"}``.
      data: ``x`` the inputs, ``y`` the labels (1 feasible, 0 infeasible), ``mask`` the real rows.
    Returns:
      A :class:`ClassifierPosterior`.
    """
    mean = params["mean"]
    gram = _gram(kernel, params, data)
    labels, real = data.y, data.mask
    eye = jnp.eye(gram.shape[0], dtype=gram.dtype)

    def terms(f):
        p = jax.nn.sigmoid(f + mean)
        grad = jnp.where(real, labels - p, 0.0)
        root_w = jnp.where(real, jnp.sqrt(p * (1 - p)), 0.0)
        factor = jnp.linalg.cholesky(eye + root_w[:, None] * gram * root_w[None, :])
        return grad, root_w, factor

    def newton(_, carry):
        # R&W Algorithm 3.1 for the zero-mean latent f (the constant mean sits in the likelihood).
        f, _ = carry
        grad, root_w, factor = terms(f)
        b = root_w**2 * f + grad
        a = b - root_w * linalg.cho_solve(factor, root_w * (gram @ b))
        return gram @ a, a

    zeros = jnp.zeros(gram.shape[0], gram.dtype)
    f, a = jax.lax.fori_loop(0, steps, newton, (zeros, zeros))
    grad, root_w, factor = terms(f)
    logp = jnp.sum(jnp.where(real, labels * jax.nn.log_sigmoid(f + mean) + (1 - labels) * jax.nn.log_sigmoid(-(f + mean)), 0.0))
    # R&W eq. 3.32 with a = K^{-1} f of the last iterate, not the mode's identity a = grad log p: that one
    # holds only at convergence, and where Newton had not converged it overstated the evidence by ~100
    # nats, which the MAP search of the hyperparameters then found. The first two terms are maximal at
    # the mode, so an unconverged iterate cannot look better through them.
    log_marginal = -0.5 * a @ f + logp - jnp.sum(jnp.log(jnp.diag(factor)))
    return ClassifierPosterior(params, data, grad, root_w, factor, jnp.where(jnp.isfinite(log_marginal), log_marginal, -jnp.inf))


def classifier_predict(kernel: Kernel, posterior: ClassifierPosterior, x):
    """Latent predictive mean and variance at ``x`` (R&W Algorithm 3.2, lines 4–6), the constant mean included."""
    params, data = posterior.params, posterior.data
    cross = jnp.where(data.mask[:, None], kernel.gram(params["kernel"], data.x, x), 0.0)
    mean = params["mean"] + cross.T @ posterior.gradient
    v = linalg.solve_triangular(posterior.factor, posterior.root_w[:, None] * cross, lower=True)
    var = kernel.diag(params["kernel"], x) - jnp.sum(v * v, axis=0)
    return mean, jnp.maximum(var, 1e-12)


def gp_classifier(kernel: Kernel) -> Surrogate:
    """The GP classifier as a :class:`~jbo.types.Surrogate` over labelled :class:`~jbo.data.Data`
    (``y`` holds the labels), so that :mod:`jbo.inference` fits its hyperparameters like any model's.

    Priors: the kernel's own (:mod:`jbo.priors`); the latent mean is zero, so far from any observation
    the probability of feasibility returns to 1/2. (With a fitted constant mean, a run whose first
    evaluations mostly failed learnt a strongly negative mean, every point looked infeasible, P[feasible]
    lost its say in the acquisition and constrained EI kept sampling the infeasible edges of Gelbart's
    constrained Branin.) ``fantasize`` and ``predict_joint`` are not defined.
    """

    def prior(data: Data):
        return {"kernel": kernel.sample_params(data.x.shape[-1]), "mean": jnp.zeros((), data.x.dtype)}

    return Surrogate(
        name="gp-classifier",
        prior=prior,
        log_likelihood=lambda params, data: classifier_condition(kernel, params, data).log_marginal,
        condition=lambda params, data: classifier_condition(kernel, params, data),
        predict=lambda posterior, x: classifier_predict(kernel, posterior, x),
        fantasize=_no_fantasies,
        predict_joint=_no_fantasies,
    )



def label_regression(kernel: Kernel, noise_scale: float = 0.1) -> Surrogate:
    r"""Least-squares classification (R&W §6.5): an exact GP regression of the labels coded
    :math:`\pm 1`, zero mean, the noise variance under the horseshoe (:mod:`jbo.priors`), its
    hyperparameters fitted by the regression's marginal likelihood (R&W eq. 2.30).

    With the step function of a noiseless constraint, :math:`P[c = 1 \mid x] = \Phi(\mu(x) / s(x))`
    (:func:`log_probability`), the latent interpolates the labels: at an observed crash
    :math:`\mu \approx -1` with :math:`s \to 0`, so the probability of feasibility vanishes there and
    in its neighbourhood, while far from every observation :math:`\mu \to 0` and the probability
    returns to 1/2. The Laplace-logistic classifier (:func:`gp_classifier`) cannot do this: the
    logistic likelihood's curvature :math:`\sigma(f)(1 - \sigma(f))` vanishes as the latent grows
    confident, so the latent's variance at a crash stays near its prior one and
    :math:`\Phi(\mu / s)` stayed near 0.1 at a corner that had crashed twice; constrained EI,
    whose EI is largest in the unexplored corners, then went back to the same corner five times
    (Gelbart's constrained Branin, seed 0: 37 of 40 evaluations crashed).
    ``fantasize`` and ``predict_joint`` are not defined.
    """
    regression = exact_gp(kernel, noise_scale=noise_scale)

    def signs(data: Data) -> Data:
        return Data(data.x, 2.0 * data.y - 1.0, data.mask)

    def prior(data: Data):
        return {"kernel": kernel.sample_params(data.x.shape[-1]),
                "noise": numpyro.sample("noise", priors.noise_prior(noise_scale)),
                "mean": jnp.zeros((), data.x.dtype)}

    return Surrogate(
        name="label-regression",
        prior=prior,
        log_likelihood=lambda params, data: regression.log_likelihood(params, signs(data)),
        condition=lambda params, data: regression.condition(params, signs(data)),
        predict=regression.predict,
        fantasize=_no_fantasies,
        predict_joint=_no_fantasies,
    )


CLASSIFIERS = ("least_squares", "laplace")


@functools.lru_cache(maxsize=4)
def default_classifier(kind: str = "least_squares") -> Surrogate:
    """A constraint classifier of the GP-type models on an ARD Matérn-5/2 (cached: compiled programs
    key on it): ``"least_squares"`` (:func:`label_regression`, the default) or ``"laplace"``
    (:func:`gp_classifier`)."""
    if kind not in CLASSIFIERS:
        raise ValueError(f"unknown classifier {kind!r}; valid choices: {list(CLASSIFIERS)}")
    return label_regression(Matern52()) if kind == "least_squares" else gp_classifier(Matern52())


def fit_log_feasibility(key, labels: Data, surrogate: Surrogate | None = None, restarts: int = 2,
                        noiseless: bool = True):
    """``x (m, D) -> log P[feasible]`` of a GP classifier fitted (MAP hyperparameters) to ``labels``.

    Args:
      key: PRNG key (the MAP search's prior draws).
      labels: every evaluated point, ``y`` 1 feasible / 0 infeasible (:func:`jbo.loop.feasibility`).
      surrogate: the classifier (default :func:`default_classifier`).
      restarts: prior draws the MAP search starts from.
      noiseless: the constraint is deterministic (:func:`log_probability`).
    """
    surrogate = surrogate or default_classifier()
    samples = inference.map_estimate(key, surrogate, labels, num_restarts=restarts)
    posterior = surrogate.condition(jax.tree_util.tree_map(lambda a: a[0], samples.params), labels)
    return lambda x: log_probability(*surrogate.predict(posterior, x), noiseless)


# ----------------------------------------------------------------------------- known constraint values


def fit_constraints(key, surrogate: Surrogate, constraints, restarts: int = 1, data_of=None):
    """Each constraint's values modelled by ``surrogate`` (MAP hyperparameters) on its known rows.

    Args:
      key: PRNG key (the MAP searches' prior draws).
      surrogate: the objective's surrogate.
      constraints: a :class:`jbo.types.Constraints`.
      restarts: prior draws each MAP search also starts from.
      data_of: ``(y, mask) -> data`` the surrogate conditions on (default: :class:`~jbo.types.Data` at
        ``constraints.x``; DNGO's BLR takes its basis statistics).
    Returns:
      ``(data, posteriors)``, each with a leading axis of the ``K`` constraints.
    """
    data_of = data_of or (lambda y, mask: Data(constraints.x, y, mask))

    def fit(k, y, mask):
        data = data_of(y, mask)
        samples = inference.map_estimate(k, surrogate, data, num_restarts=restarts)
        return data, surrogate.condition(jax.tree_util.tree_map(lambda a: a[0], samples.params), data)

    return jax.vmap(fit)(jax.random.split(key, constraints.y.shape[0]), constraints.y, constraints.mask)


def log_probability_feasible(surrogate: Surrogate, threshold, data, posteriors, x, inputs_of=None):
    r""":math:`\sum_k \log P[c_k(x) \le 0] = \sum_k \log\Phi((t_k - \mu_k(x)) / s_k(x))` under the constraint
    models of :func:`fit_constraints` (``inputs_of(data, x)``: what ``surrogate.predict`` takes at ``x``;
    default ``x``)."""
    inputs_of = inputs_of or (lambda _, points: points)
    mean, var = jax.vmap(lambda d, post: surrogate.predict(post, inputs_of(d, x)))(data, posteriors)  # (K, m)
    return jnp.sum(log_ndtr((threshold[:, None] - mean) / jnp.sqrt(var)), axis=0)


def fit_log_constraints(key, surrogate: Surrogate, constraints, restarts: int = 1):
    r"""``x -> \sum_k \log P[c_k(x) \le 0]``: each constraint value modelled by ``surrogate`` (MAP
    hyperparameters) on its known rows, :math:`P[c_k \le 0] = \Phi((t_k - \mu_k) / s_k)` with
    :math:`t_k` where 0 lies on its standardised scale (Gardner et al. 2014; Optuna's constraints).

    Args:
      key: PRNG key (the MAP searches' prior draws).
      surrogate: the objective's surrogate over :class:`~jbo.types.Data` (an exact GP, say).
      constraints: a :class:`jbo.types.Constraints`.
      restarts: prior draws each MAP search also starts from.
    """
    data, posteriors = fit_constraints(key, surrogate, constraints, restarts)
    return lambda x: log_probability_feasible(surrogate, constraints.threshold, data, posteriors, x)
