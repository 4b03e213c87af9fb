r"""Exact Gaussian-process regression with a constant mean, on masked (padded) data.

With Gram matrix :math:`K_\theta`, noise variance :math:`\sigma_n^2` and constant mean :math:`m`,
the log marginal likelihood of the :math:`n` real rows is (Rasmussen & Williams, 2006, eq. 2.30)

.. math::
   \log p(y \mid X, \theta) = -\tfrac12 r^\top (K_\theta + \sigma_n^2 I)^{-1} r
   - \tfrac12 \log\lvert K_\theta + \sigma_n^2 I\rvert - \tfrac n2 \log 2\pi, \qquad r = y - m,

and the posterior of the latent function at :math:`x_*` has mean :math:`m + k_*^\top (K + \sigma_n^2
I)^{-1} r` and variance :math:`k_{**} - k_*^\top (K + \sigma_n^2 I)^{-1} k_*` (eqs. 2.25–2.26).

Padded rows (``mask = False``) get zero covariance with everything, unit variance and zero residual,
so they add exactly nothing to the likelihood or the posterior.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpyro

from jbo import linalg, priors
from jbo.kernels import Kernel, Matern52
from jbo.types import Data, Surrogate


class GPPosterior(NamedTuple):
    r"""Everything needed to predict: the data, the hyperparameters and the factorisation.

    ``factor_inverse`` is :math:`L^{-1}`, formed once per sample: the acquisition search then turns
    every predictive variance into a matrix product :math:`\lVert L^{-1} k_*\rVert^2` instead of a
    triangular solve, faster to run and to compile on a CPU (BENCHMARKS.md, design choices).
    """

    params: Any
    data: Data
    factor: jnp.ndarray  # lower Cholesky factor L of the masked K + noise I
    alpha: jnp.ndarray  # (K + noise I)^{-1} (y - mean), zero on padded rows
    factor_inverse: jnp.ndarray  # L^{-1}


def masked_covariance(kernel: Kernel, params, data: Data, noise_floor: float = 0.0):
    """``K + σ_n² I`` over the real rows, identity on the padded ones."""
    both = data.mask[:, None] & data.mask[None, :]
    gram = jnp.where(both, kernel.gram(params["kernel"], data.x, data.x), 0.0)
    noise = params["noise"] + noise_floor
    return gram + jnp.diag(jnp.where(data.mask, noise, 1.0))


def condition(kernel: Kernel, params, data: Data, jitter: float | None = None, noise_floor: float = 1e-6):
    """Factorise the covariance of ``data`` under ``params``.

    Args:
      kernel: the covariance function.
      params: ``{"kernel": ..., "noise": σ_n², "mean": m}``.
      data: padded observations.
      jitter: first Cholesky jitter (default by dtype, :func:`jbo.linalg.default_jitter`).
      noise_floor: added to the noise variance; keeps the factorisation well conditioned.
    Returns:
      A :class:`GPPosterior`.
    """
    factor, alpha = _factorize(kernel, params, data, jitter, noise_floor)
    inverse = linalg.solve_triangular(factor, jnp.eye(factor.shape[0], dtype=factor.dtype), lower=True)
    return GPPosterior(params, data, factor, alpha, inverse)


def _factorize(kernel: Kernel, params, data: Data, jitter, noise_floor):
    jitter = linalg.default_jitter(data.y.dtype) if jitter is None else jitter
    cov = masked_covariance(kernel, params, data, noise_floor)
    factor = linalg.cholesky(cov, jitter)
    residual = jnp.where(data.mask, data.y - params["mean"], 0.0)
    return factor, linalg.cho_solve(factor, residual)


def log_marginal_likelihood(kernel: Kernel, params, data: Data, jitter=None, noise_floor: float = 1e-6):
    """Log marginal likelihood of the real rows of ``data`` (R&W eq. 2.30); ``-inf`` if K is not PD."""
    factor, alpha = _factorize(kernel, params, data, jitter, noise_floor)
    residual = jnp.where(data.mask, data.y - params["mean"], 0.0)
    n = jnp.sum(data.mask)
    value = (
        -0.5 * jnp.dot(residual, alpha)
        - jnp.sum(jnp.log(jnp.diag(factor)))
        - 0.5 * n * math.log(2.0 * math.pi)
    )
    return jnp.where(jnp.isfinite(value), value, -jnp.inf)


def predict(kernel: Kernel, posterior: GPPosterior, x):
    """Posterior mean and variance of the latent function at ``x`` ``(m, D)`` (R&W eqs. 2.25–2.26)."""
    params, data = posterior.params, posterior.data
    cross = jnp.where(data.mask[:, None], kernel.gram(params["kernel"], data.x, x), 0.0)  # (N, m)
    mean = params["mean"] + cross.T @ posterior.alpha
    v = posterior.factor_inverse @ cross
    var = kernel.diag(params["kernel"], x) - jnp.sum(v**2, axis=0)
    return mean, jnp.maximum(var, 1e-12)


def predict_joint(kernel: Kernel, posterior: GPPosterior, x):
    """Joint posterior mean ``(m,)`` and covariance ``(m, m)`` of the latent function at ``x``."""
    params, data = posterior.params, posterior.data
    cross = jnp.where(data.mask[:, None], kernel.gram(params["kernel"], data.x, x), 0.0)
    mean = params["mean"] + cross.T @ posterior.alpha
    v = posterior.factor_inverse @ cross
    return mean, kernel.gram(params["kernel"], x, x) - v.T @ v


def fantasize(kernel: Kernel, posterior: GPPosterior, x, mask=None, y=None, jitter=None, noise_floor: float = 1e-6):
    r"""Condition additionally on ``x`` ``(p, D)`` observed at ``y`` ``(p,)`` (default: the current
    posterior mean, the kriging believer).

    ``mask`` ``(p,)`` marks which rows of ``x`` are real (pending points padded to a static size).

    A blocked Cholesky update, not a refactorisation: with :math:`B = L^{-1} K_{np}` and
    :math:`C = \mathrm{chol}(K_{pp} + \sigma_n^2 I - B^\top B)`, the factor of the extended covariance
    is :math:`\begin{pmatrix} L & 0 \\ B^\top & C \end{pmatrix}`, at :math:`O(N^2 p + p^3)` instead of
    :math:`O((N + p)^3)`, and it does not depend on ``y``: Monte Carlo fantasies (Snoek et al. 2015,
    eqs. 11–12) that ``vmap`` over many ``y`` share it. At the believer's ``y`` the mean is unchanged
    while the variance at and near ``x`` shrinks, which is what steers a batch's later points away
    from its earlier ones.
    """
    params, data = posterior.params, posterior.data
    mask = jnp.ones(x.shape[0], bool) if mask is None else mask
    x = x.astype(data.x.dtype)
    if y is None:
        y, _ = predict(kernel, posterior, x)
    jitter = linalg.default_jitter(data.y.dtype) if jitter is None else jitter
    both = data.mask[:, None] & mask[None, :]
    cross = jnp.where(both, kernel.gram(params["kernel"], data.x, x), 0.0)  # (N, p)
    pending = jnp.where(mask[:, None] & mask[None, :], kernel.gram(params["kernel"], x, x), 0.0)
    pending = pending + jnp.diag(jnp.where(mask, params["noise"] + noise_floor, 1.0))
    b = posterior.factor_inverse @ cross  # L^-1 K_np
    corner = linalg.cholesky(pending - b.T @ b, jitter)
    corner_inverse = linalg.solve_triangular(corner, jnp.eye(x.shape[0], dtype=corner.dtype), lower=True)
    n, p = data.x.shape[0], x.shape[0]
    factor = jnp.block([[posterior.factor, jnp.zeros((n, p), corner.dtype)], [b.T, corner]])
    inverse = jnp.block([[posterior.factor_inverse, jnp.zeros((n, p), corner.dtype)],
                         [-corner_inverse @ b.T @ posterior.factor_inverse, corner_inverse]])
    residual = jnp.concatenate([jnp.where(data.mask, data.y - params["mean"], 0.0),
                                jnp.where(mask, y.astype(data.y.dtype) - params["mean"], 0.0)])
    alpha = inverse.T @ (inverse @ residual)
    extended = Data(jnp.concatenate([data.x, x]), jnp.concatenate([data.y, jnp.where(mask, y, 0.0).astype(data.y.dtype)]),
                    jnp.concatenate([data.mask, mask]))
    return GPPosterior(params, extended, factor, alpha, inverse)


def _compiled(fn):
    return linalg.full_precision(jax.jit(fn))


def exact_gp(kernel: Kernel | None = None, noise_floor: float = 1e-6, jitter: float | None = None,
             noise_scale: float = 0.1) -> Surrogate:
    """The exact GP surrogate with priors from :mod:`jbo.priors`.

    Args:
      kernel: covariance function (default ARD Matérn-5/2).
      noise_floor: minimum noise variance added to the sampled one (standardised units).
      jitter: first Cholesky jitter (default by dtype).
      noise_scale: scale of the horseshoe prior on the noise variance.
    Returns:
      A :class:`~jbo.types.Surrogate` with params ``{"kernel", "noise", "mean"}``.
    """
    kernel = Matern52() if kernel is None else kernel

    def prior(data: Data):
        return {
            "kernel": kernel.sample_params(data.x.shape[-1]),
            "noise": numpyro.sample("noise", priors.noise_prior(noise_scale)),
            "mean": numpyro.sample("mean", priors.mean_prior()),
        }

    # Jitted, so that a script calling them outside any jit (``jax.vmap(surrogate.condition)(...)``)
    # runs one compiled program rather than hundreds of single operations; inside a jitted caller
    # they are inlined as usual.
    return Surrogate(
        name="gp",
        prior=prior,
        log_likelihood=_compiled(lambda params, data: log_marginal_likelihood(kernel, params, data, jitter, noise_floor)),
        condition=_compiled(lambda params, data: condition(kernel, params, data, jitter, noise_floor)),
        predict=_compiled(lambda posterior, x: predict(kernel, posterior, x)),
        fantasize=_compiled(lambda posterior, x, mask=None, y=None: fantasize(kernel, posterior, x, mask, y, jitter,
                                                                             noise_floor)),
        predict_joint=_compiled(lambda posterior, x: predict_joint(kernel, posterior, x)),
    )
