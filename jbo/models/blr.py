r"""Bayesian linear regression on a fixed basis, with DNGO's quadratic prior mean (Snoek et al. 2015).

Given basis functions :math:`\phi(x) \in \mathbb R^M` (the last hidden layer of a trained network,
:mod:`jbo.models.dngo`) and a prior mean :math:`\eta(x)`, the model is

.. math::
    y = \eta(x) + w^\top \phi(x) + \varepsilon,\quad w \sim \mathcal N(0, \alpha^{-1} I),\quad
    \varepsilon \sim \mathcal N(0, \beta^{-1}),

with the posterior of eqs. (4)–(7) of the paper, :math:`K = \beta\Phi^\top\Phi + \alpha I`,
:math:`m = \beta K^{-1}\Phi^\top\tilde y`, :math:`\tilde y = y - \eta(X)`, and the log marginal
likelihood of eq. (8).

The prior mean is the convex quadratic of eq. (9), :math:`\eta(x) = \lambda + (x - c)^\top\Lambda(x - c)`
with :math:`\Lambda` diagonal; ``quadratic=False`` keeps only the offset :math:`\lambda` (what Pethick
2018 ran). Because :math:`\eta` is linear in the augmented inputs :math:`b(x) = [y, 1, x, x^2]`,
:math:`\tilde y = B\,w(\lambda, c, \Lambda)` for a weight vector ``w`` and every quantity of eq. (8)
follows from the sufficient statistics :math:`\Phi^\top\Phi`, :math:`\Phi^\top B` and :math:`B^\top B`.
They are computed once per data set in :math:`O(N M^2)`; every likelihood evaluation the sampler makes
afterwards costs :math:`O(M^3)` whatever ``N`` is. That is what keeps DNGO linear in ``N``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpyro.distributions as dist

from jbo import priors
from jbo.linalg import cho_solve, cholesky
from jbo.models.base import Surrogate


class BasisStats(NamedTuple):
    """Sufficient statistics of masked data on a basis (the "data" the BLR surrogate conditions on).

    Attributes:
      gram: ``(M, M)`` :math:`\\Phi^\\top\\Phi` over the real rows.
      cross: ``(M, 2 + 2D)`` :math:`\\Phi^\\top B` with ``B = [y, 1, x, x**2]``.
      moments: ``(2 + 2D, 2 + 2D)`` :math:`B^\\top B`.
      n: number of real rows.
    """

    gram: jnp.ndarray
    cross: jnp.ndarray
    moments: jnp.ndarray
    n: jnp.ndarray

    @property
    def dim(self) -> int:
        """Input dimension ``D`` (static)."""
        return (self.moments.shape[-1] - 2) // 2


class BasisInputs(NamedTuple):
    """Points where the model is evaluated: unit-cube ``x (m, D)`` and their basis ``phi (m, M)``."""

    x: jnp.ndarray
    phi: jnp.ndarray


class BLRPosterior(NamedTuple):
    """Posterior of the weights for one hyperparameter sample.

    Attributes:
      chol: ``(M, M)`` lower Cholesky factor of ``K`` (eq. 7).
      mean: ``(M,)`` posterior mean ``m`` of the weights (eq. 6).
      gram, projection: :math:`\\Phi^\\top\\Phi` and :math:`\\Phi^\\top\\tilde y` (kept for fantasies).
      params: the hyperparameters (``alpha``, ``noise`` = 1/β, ``offset``, and ``center``/``curvature``).
    """

    chol: jnp.ndarray
    mean: jnp.ndarray
    gram: jnp.ndarray
    projection: jnp.ndarray
    params: dict


def basis_stats(phi, x, y, mask) -> BasisStats:
    """Sufficient statistics of the real rows (``mask``) of a padded data set.

    Args:
      phi: ``(N, M)`` basis at the inputs; x: ``(N, D)`` inputs; y: ``(N,)`` targets; mask: ``(N,)``.
    """
    w = mask.astype(phi.dtype)[:, None]
    phi = phi * w
    x = x.astype(phi.dtype)
    augmented = jnp.concatenate([y.astype(phi.dtype)[:, None], jnp.ones_like(y, dtype=phi.dtype)[:, None], x, x * x],
                                axis=1) * w
    return BasisStats(phi.T @ phi, phi.T @ augmented, augmented.T @ augmented, jnp.sum(mask).astype(phi.dtype))


def prior_mean(params: dict, x):
    """Eq. (9): :math:`\\eta(x) = \\lambda + \\sum_k \\Lambda_{kk}(x_k - c_k)^2` (just ``λ`` without a quadratic)."""
    value = params["offset"] * jnp.ones(x.shape[:-1], x.dtype)
    if "curvature" in params:
        value = value + jnp.sum(params["curvature"] * (x - params["center"]) ** 2, axis=-1)
    return value


def _residual_weights(params: dict, dim: int, dtype):
    """``w`` with ``y - eta(X) = B w`` for ``B = [y, 1, x, x**2]``."""
    if "curvature" in params:
        lam, c = params["curvature"], params["center"]
        const = -params["offset"] - jnp.sum(lam * c * c)
        return jnp.concatenate([jnp.ones(1, dtype), const[None], 2.0 * lam * c, -lam]).astype(dtype)
    zeros = jnp.zeros(dim, dtype)
    return jnp.concatenate([jnp.ones(1, dtype), -params["offset"][None].astype(dtype), zeros, zeros])


# Smallest noise variance (standardised units): caps β at 1e6 so that K = βΦᵀΦ + αI stays factorable
# when the horseshoe shrinks the noise of a noise-free objective towards zero (as the GP's floor).
NOISE_FLOOR = 1e-6


def _factor(params: dict, gram):
    beta = 1.0 / (params["noise"] + NOISE_FLOOR)
    eye = jnp.eye(gram.shape[0], dtype=gram.dtype)
    return cholesky(beta * gram + params["alpha"] * eye), beta


def condition(params: dict, stats: BasisStats) -> BLRPosterior:
    """Eqs. (6)–(7): Cholesky of ``K`` and the posterior mean ``m`` for one hyperparameter sample."""
    w = _residual_weights(params, stats.dim, stats.gram.dtype)
    projection = stats.cross @ w
    chol, beta = _factor(params, stats.gram)
    return BLRPosterior(chol, beta * cho_solve(chol, projection), stats.gram, projection, params)


def log_marginal_likelihood(params: dict, stats: BasisStats):
    r"""Eq. (8), through the sufficient statistics.

    Uses :math:`\beta\|\tilde y - \Phi m\|^2 + \alpha m^\top m = \beta\tilde y^\top\tilde y -
    \beta^2\|L^{-1}\Phi^\top\tilde y\|^2` (with :math:`K = LL^\top`), which needs no ``N``-sized array.
    """
    m_dim = stats.gram.shape[0]
    w = _residual_weights(params, stats.dim, stats.gram.dtype)
    projection = stats.cross @ w
    residual_sq = w @ stats.moments @ w
    chol, beta = _factor(params, stats.gram)
    v = jax.scipy.linalg.solve_triangular(chol, projection, lower=True)
    fit = beta * residual_sq - beta**2 * jnp.sum(v * v)
    log_det = 2.0 * jnp.sum(jnp.log(jnp.diag(chol)))
    n = stats.n
    return (0.5 * m_dim * jnp.log(params["alpha"]) + 0.5 * n * jnp.log(beta) - 0.5 * n * math.log(2 * math.pi)
            - 0.5 * fit - 0.5 * log_det)


def predict(posterior: BLRPosterior, inputs: BasisInputs, observation_noise: bool = False):
    """Eqs. (4)–(5): predictive mean and variance at ``inputs``.

    Args:
      posterior: one sample's posterior.
      inputs: the points and their basis.
      observation_noise: add ``1/β`` to the variance (eq. 5 as printed); ``False`` gives the variance
        of the latent function, the convention of every jbo surrogate.
    Returns:
      ``(mean (m,), var (m,))``.
    """
    phi = inputs.phi.astype(posterior.mean.dtype)
    mean = phi @ posterior.mean + prior_mean(posterior.params, inputs.x.astype(phi.dtype))
    v = jax.scipy.linalg.solve_triangular(posterior.chol, phi.T, lower=True)
    var = jnp.sum(v * v, axis=0)
    if observation_noise:
        var = var + posterior.params["noise"] + NOISE_FLOOR
    return mean, var


def predict_joint(posterior: BLRPosterior, inputs: BasisInputs):
    """Joint latent posterior at ``inputs``: ``(mean (m,), cov (m, m))``, cov = ΦK⁻¹Φᵀ."""
    phi = inputs.phi.astype(posterior.mean.dtype)
    mean, _ = predict(posterior, inputs)
    v = jax.scipy.linalg.solve_triangular(posterior.chol, phi.T, lower=True)
    return mean, v.T @ v


def fantasize(posterior: BLRPosterior, inputs: BasisInputs, mask=None) -> BLRPosterior:
    """Condition on extra points observed at their own predictive mean (kriging believer).

    The residual target of a fantasy is :math:`m^\\top\\phi(x)`, so the sufficient statistics grow by
    :math:`\\phi\\phi^\\top` and :math:`\\phi\\,\\phi^\\top m`; ``K`` and ``m`` are then recomputed.
    """
    phi = inputs.phi.astype(posterior.mean.dtype)
    if mask is not None:
        phi = phi * mask.astype(phi.dtype)[:, None]
    gram = posterior.gram + phi.T @ phi
    projection = posterior.projection + phi.T @ (phi @ posterior.mean)
    chol, beta = _factor(posterior.params, gram)
    return BLRPosterior(chol, beta * cho_solve(chol, projection), gram, projection, posterior.params)


def blr_prior(stats: BasisStats, quadratic: bool = True, center_scale: float = 0.5, curvature_scale: float = 1.0):
    """Priors of the BLR hyperparameters as numpyro sites.

    * ``alpha`` (weight precision): log-normal(0, 1) (Pethick 2018, eq. 32);
    * ``noise`` = 1/β: the horseshoe(0.1) of the GP's noise (Spearmint), which lets a noise-free
      objective shrink the noise to ~0;
    * ``offset`` λ: normal(0, 2) on the standardised scale, wide enough to leave it essentially free;
    * ``center`` c: normal(0.5, ``center_scale``) per dimension (eq. 9: centred in the unit cube);
    * ``curvature`` diag(Λ): horseshoe(``curvature_scale``) per dimension (eq. 9), positive, so the mean
      is convex, with a spike at zero so the quadratic can vanish into the offset.
    """
    params = {
        "alpha": priors.sample("alpha", dist.LogNormal(0.0, 1.0)),
        "noise": priors.sample("noise", priors.noise_prior()),
        "offset": priors.sample("offset", dist.Normal(0.0, 2.0)),
    }
    if quadratic:
        dim = stats.dim
        params["center"] = priors.sample("center", dist.Normal(0.5, center_scale), (dim,))
        params["curvature"] = priors.sample("curvature", priors.Horseshoe(curvature_scale), (dim,))
    return params


def blr_surrogate(quadratic: bool = True, observation_noise: bool = False, center_scale: float = 0.5,
                  curvature_scale: float = 1.0) -> Surrogate:
    """BLR on a basis as a :class:`~jbo.models.base.Surrogate`.

    Its "data" is :class:`BasisStats` and its inputs are :class:`BasisInputs`, so the same inference
    (:func:`jbo.inference.infer`) and acquisition code serves it; the basis itself (a network) is
    trained elsewhere (:mod:`jbo.models.dngo`).

    Args:
      quadratic: use the quadratic prior mean of eq. (9) (``False``: a constant offset only).
      observation_noise: predictive variance with ``1/β`` (eq. 5) instead of the latent variance.
      center_scale, curvature_scale: prior scales of ``c`` and ``diag(Λ)``.
    """
    return Surrogate(
        name="blr",
        prior=lambda stats: blr_prior(stats, quadratic, center_scale, curvature_scale),
        log_likelihood=log_marginal_likelihood,
        condition=condition,
        predict=lambda posterior, inputs: predict(posterior, inputs, observation_noise),
        fantasize=fantasize,
        predict_joint=predict_joint,
    )
