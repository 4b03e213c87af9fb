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
They are computed once per data set in :math:`O(N M^2)`, together with the eigendecomposition
:math:`\Phi^\top\Phi = V\,\mathrm{diag}(s)\,V^\top`. In the rotated basis :math:`V^\top\phi(x)`,
:math:`K` is the diagonal :math:`\mathrm{diag}(\beta s + \alpha)` for every ``α, β``, so each
likelihood evaluation the sampler makes afterwards costs :math:`O(M D)` (no factorisation: the prior
on ``w`` is isotropic, so the rotation changes nothing else), and a prediction costs :math:`O(M)` per
hyperparameter sample once a point's basis is rotated (:func:`basis_inputs`, once per point). That is
what keeps DNGO linear in ``N`` and its integrated acquisition cheap in the number of samples.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpyro.distributions as dist

from jbo import priors
from jbo.types import Surrogate


class BasisStats(NamedTuple):
    """Sufficient statistics of masked data on a basis, in the eigenbasis of its Gram matrix.

    Attributes:
      spectrum: ``(M,)`` eigenvalues :math:`s` of :math:`\\Phi^\\top\\Phi` over the real rows (clipped at 0).
      rotation: ``(M, M)`` orthonormal eigenvectors :math:`V` (columns).
      cross: ``(M, 2 + 2D)`` :math:`V^\\top\\Phi^\\top B` with ``B = [y, 1, x, x**2]``.
      moments: ``(2 + 2D, 2 + 2D)`` :math:`B^\\top B`.
      n: number of real rows.
    """

    spectrum: jnp.ndarray
    rotation: jnp.ndarray
    cross: jnp.ndarray
    moments: jnp.ndarray
    n: jnp.ndarray

    @property
    def dim(self) -> int:
        """Input dimension ``D`` (static)."""
        return (self.moments.shape[-1] - 2) // 2


class BasisInputs(NamedTuple):
    """Points where the model is evaluated: unit-cube ``x (m, D)`` and their basis ``phi (m, M)``
    rotated into the eigenbasis of the data (:math:`\\Phi V`). Build them with :func:`basis_inputs`."""

    x: jnp.ndarray
    phi: jnp.ndarray


class BLRPosterior(NamedTuple):
    """Posterior of the weights for one hyperparameter sample, in the rotated basis.

    Attributes:
      scale: ``(M,)`` the diagonal of :math:`K^{-1}`, :math:`1/(\\beta s + \\alpha)` (eq. 7).
      mean: ``(M,)`` posterior mean ``m`` of the rotated weights (eq. 6).
      pending: ``(P, M)`` :math:`\\sqrt\\beta` times the rotated basis of fantasised points (``P = 0``
        without fantasies): they add :math:`U^\\top U` to ``K``.
      pending_chol: ``(P, P)`` Cholesky factor of :math:`I + U\\,\\mathrm{diag}(\\text{scale})\\,U^\\top`
        (the Woodbury capacitance matrix).
      params: the hyperparameters (``alpha``, ``noise`` = 1/β, ``offset``, and ``center``/``curvature``).
    """

    scale: jnp.ndarray
    mean: jnp.ndarray
    pending: jnp.ndarray
    pending_chol: jnp.ndarray
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
    spectrum, rotation = jnp.linalg.eigh(phi.T @ phi)
    return BasisStats(jnp.maximum(spectrum, 0.0), rotation, rotation.T @ (phi.T @ augmented),
                      augmented.T @ augmented, jnp.sum(mask).astype(phi.dtype))


def basis_inputs(stats: BasisStats, x, phi) -> BasisInputs:
    """The points ``x (m, D)`` with basis ``phi (m, M)``, rotated into ``stats``' eigenbasis."""
    return BasisInputs(x, phi.astype(stats.rotation.dtype) @ stats.rotation)


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


# Smallest noise variance (standardised units): caps β at 1e6 so that K = βΦᵀΦ + αI stays well
# conditioned when the horseshoe shrinks the noise of a noise-free objective towards zero (as the GP's floor).
NOISE_FLOOR = 1e-6


def _beta(params: dict):
    return 1.0 / (params["noise"] + NOISE_FLOOR)


def _eigenvalues_of_k(params: dict, stats: BasisStats):
    """``(β s + α, β)``: the eigenvalues of :math:`K = \\beta\\Phi^\\top\\Phi + \\alpha I` and β."""
    beta = _beta(params)
    return beta * stats.spectrum + params["alpha"], beta


def condition(params: dict, stats: BasisStats) -> BLRPosterior:
    """Eqs. (6)–(7) for one hyperparameter sample: :math:`K^{-1}` (diagonal) and ``m = βK⁻¹Φᵀỹ``."""
    eigenvalues, beta = _eigenvalues_of_k(params, stats)
    projection = stats.cross @ _residual_weights(params, stats.dim, stats.cross.dtype)
    m_dim, dtype = stats.spectrum.shape[-1], stats.cross.dtype
    return BLRPosterior(1.0 / eigenvalues, beta * projection / eigenvalues, jnp.zeros((0, m_dim), dtype),
                        jnp.zeros((0, 0), dtype), params)


def log_marginal_likelihood(params: dict, stats: BasisStats):
    r"""Eq. (8), through the sufficient statistics.

    Uses :math:`\beta\|\tilde y - \Phi m\|^2 + \alpha m^\top m = \beta\tilde y^\top\tilde y -
    \beta^2\,\tilde y^\top\Phi K^{-1}\Phi^\top\tilde y` and :math:`\log|K| = \sum_i\log(\beta s_i + \alpha)`,
    both diagonal sums in the rotated basis: :math:`O(M D)`, no ``N``-sized array and no factorisation.
    """
    m_dim = stats.spectrum.shape[-1]
    w = _residual_weights(params, stats.dim, stats.cross.dtype)
    projection = stats.cross @ w
    eigenvalues, beta = _eigenvalues_of_k(params, stats)
    fit = beta * (w @ stats.moments @ w) - beta**2 * jnp.sum(projection * projection / eigenvalues)
    n = stats.n
    return (0.5 * m_dim * jnp.log(params["alpha"]) + 0.5 * n * jnp.log(beta) - 0.5 * n * math.log(2 * math.pi)
            - 0.5 * fit - 0.5 * jnp.sum(jnp.log(eigenvalues)))


def _pending_solve(posterior: BLRPosterior, phi):
    """:math:`L^{-1} U\\,\\mathrm{diag}(\\text{scale})\\,\\phi^\\top` ``(P, m)``: the Woodbury correction's factor."""
    scaled = posterior.pending @ (posterior.scale[:, None] * phi.T)
    return jax.scipy.linalg.solve_triangular(posterior.pending_chol, scaled, lower=True)


def _mean(posterior: BLRPosterior, inputs: BasisInputs, phi):
    """Eq. (4)'s mean :math:`m^\\top\\phi(x) + \\eta(x)` (``phi``: the rotated basis in the posterior's dtype)."""
    return phi @ posterior.mean + prior_mean(posterior.params, inputs.x.astype(phi.dtype))


def predict(posterior: BLRPosterior, inputs: BasisInputs, observation_noise: bool = False):
    """Eqs. (4)–(5): predictive mean and variance at ``inputs`` (from :func:`basis_inputs`).

    The variance :math:`\\phi^\\top K^{-1}\\phi` is a diagonal sum in the rotated basis, minus the
    Woodbury term of fantasised points if there are any.

    Args:
      posterior: one sample's posterior.
      inputs: the points and their rotated basis.
      observation_noise: add ``1/β`` to the variance (eq. 5 as printed); ``False`` gives the variance
        of the latent function, the convention of every jbo surrogate.
    Returns:
      ``(mean (m,), var (m,))``.
    """
    phi = inputs.phi.astype(posterior.mean.dtype)
    mean = _mean(posterior, inputs, phi)
    var = (phi * phi) @ posterior.scale
    if posterior.pending.shape[-2]:
        v = _pending_solve(posterior, phi)
        var = var - jnp.sum(v * v, axis=0)
    # Rounding in the Woodbury difference can dip below zero where the variance vanishes.
    var = jnp.maximum(var, 1e-12)
    if observation_noise:
        var = var + posterior.params["noise"] + NOISE_FLOOR
    return mean, var


def predict_joint(posterior: BLRPosterior, inputs: BasisInputs):
    """Joint latent posterior at ``inputs``: ``(mean (m,), cov (m, m))``, cov = ΦK⁻¹Φᵀ."""
    phi = inputs.phi.astype(posterior.mean.dtype)
    mean = _mean(posterior, inputs, phi)
    cov = (phi * posterior.scale) @ phi.T
    if posterior.pending.shape[-2]:
        v = _pending_solve(posterior, phi)
        cov = cov - v.T @ v
    return mean, cov


def fantasize(posterior: BLRPosterior, inputs: BasisInputs, mask=None, y=None) -> BLRPosterior:
    r"""Condition on extra points observed at ``y`` (default: their predictive mean, the kriging believer).

    The points add :math:`U^\top U` to ``K`` (:math:`U = \sqrt\beta\,\phi`, masked rows zero), which
    the posterior keeps as a low-rank term: :math:`(D + U^\top U)^{-1} = D^{-1} - D^{-1}U^\top
    (I + U D^{-1} U^\top)^{-1} U D^{-1}` (Woodbury): a rank-``p`` update, ``O(M p^2 + p^3)``, whatever
    ``N``. The mean moves by :math:`K'^{-1} U^\top (t - U m)` with :math:`t = \sqrt\beta\,(y -
    \eta(x))`; at the believer's ``y`` that is zero and the mean is unchanged.
    """
    phi = inputs.phi.astype(posterior.mean.dtype)
    root_beta = jnp.sqrt(_beta(posterior.params))
    u = phi * root_beta
    if mask is not None:
        u = u * mask.astype(u.dtype)[:, None]
    pending = jnp.concatenate([posterior.pending, u])
    capacitance = jnp.eye(pending.shape[0], dtype=u.dtype) + (pending * posterior.scale) @ pending.T
    updated = posterior._replace(pending=pending, pending_chol=jnp.linalg.cholesky(capacitance))
    if y is None:
        return updated
    target = root_beta * (y.astype(u.dtype) - prior_mean(posterior.params, inputs.x.astype(u.dtype)))
    v = u.T @ (target - u @ posterior.mean)  # U^T (t - U m), masked rows add nothing
    # K'^{-1} v by Woodbury over every fantasised row (earlier ones included)
    w = jax.scipy.linalg.cho_solve((updated.pending_chol, True), pending @ (posterior.scale * v))
    return updated._replace(mean=posterior.mean + posterior.scale * (v - pending.T @ w))


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
    """BLR on a basis as a :class:`~jbo.types.Surrogate`.

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
