r"""BOCK: Bayesian optimisation with cylindrical kernels (Oh, Gavves & Welling, 2018).

The search space of BOCK is the ball :math:`B(0, R)`, :math:`R = \sqrt d`, that circumscribes the
cube :math:`[-1, 1]^d`. jbo's models see points ``u`` of the unit cube :math:`[0, 1]^d`, so everything
here first maps ``u`` to ``x = 2u - 1`` (:func:`jbo.kernels.cylindrical.cube_to_ball`); the centre of the unit cube,
``u = 1/2``, is the origin of the ball, and the cube's corners lie on its boundary sphere.

* :func:`bock_surrogate`: the exact GP over the cylindrical kernel (:mod:`jbo.kernels.cylindrical`:
  the transform ``T`` of eq. 5 and the kernel of eqs. 6–8) for BOCK, BOCK-W and BOCK+B, with the
  paper's centre handling in the posterior and BOCK+B's "fake" boundary point (§4, footnote 4).

The centre (§3.3)
-----------------
The origin has no direction. The paper gives it the direction of the *test point* ``x*`` under
consideration, so that it favours no fixed direction; if the origin is among the observations, "the
Gram matrix needed for computing the predictive density now depends on the angular location of the
test point". Two levels implement that:

* the kernel, a function of two points, uses the pairwise form of the rule: at ``r = 0`` the
  angular part takes the direction of the other point, so ``k(0, x) = K_r(0, r_x) K_a(1)`` and
  ``k(0, 0) = K_r(0, 0) K_a(1)``. This is exactly the covariance between an observed origin and the
  test point, and between a test point at the origin and anything. It is *not* a positive
  semi-definite kernel on sets that hold the origin and two or more other points (the origin would
  need a different direction for each of them: with two points near the origin in opposite
  directions the 3 × 3 Gram matrix has a negative eigenvalue); on sets without the origin it is
  PSD (a product of PSD kernels of the cylinder coordinates).
* :func:`bock_surrogate` therefore never builds such a Gram matrix: as the authors' code does
  (HyperSphere, ``inference_sphere_origin.ShadowInference``, used by all of BOCK, BOCK-W and
  BOCK+B), observations at the origin take the direction of the test point in every covariance,
  which is a proper kernel evaluation on the cylinder, so each prediction is an ordinary GP
  posterior (:func:`predict`). The likelihood, which has no test point, averages over the
  directions of the other observations, as the authors' code does (:func:`log_marginal_likelihood`);
  pending points are value-less observations so that the kriging believer keeps the mean
  (:func:`fantasize`); a joint prediction takes its correlations from a valid kernel
  (:func:`predict_joint`). A test point *at* the origin has no direction; it gets the pairwise rule.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpyro

from jbo import linalg, priors
from jbo.kernels.cylindrical import Cylindrical
from jbo.surrogates.gp import exact_gp
from jbo.types import Data, Surrogate


# ----------------------------------------------------------------------------- the GP
class BockPosterior(NamedTuple):
    """What BOCK's predictions need: the factorisation of the observations off the origin and the
    summary of those at the origin, whose direction is chosen per test point.

    Attributes:
      params: ``{"kernel", "noise", "mean"}`` (as :func:`jbo.surrogates.exact_gp`).
      data: the padded observations.
      factor: lower Cholesky factor of ``K + σ_n² I`` over the real rows off the origin (identity on
        the others).
      white: ``factor⁻¹ (y - m)`` on those rows, zero on the others.
      centre_count: number ``k`` of real rows at the origin.
      centre_residual: mean of ``y - m`` over them (0 when ``k = 0``).
      believed: after :func:`fantasize`, the posterior before the fantasies, which gives the mean
        (``None`` otherwise).
    """

    params: Any
    data: Data
    factor: jnp.ndarray
    white: jnp.ndarray
    centre_count: jnp.ndarray
    centre_residual: jnp.ndarray
    believed: Any = None


def _split(kernel: Cylindrical, params, data: Data):
    w, a, centre = kernel.features(params["kernel"], data.x)
    return w, a, data.mask & ~centre, data.mask & centre


def condition(kernel: Cylindrical, params, data: Data, jitter: float | None = None, noise_floor: float = 1e-6):
    """Factorise the observations off the origin; summarise those at the origin.

    ``k`` observations at the origin share one cylinder point once a direction is chosen, and ``k``
    noisy observations of one value carry the same information about ``f`` as their mean observed
    with noise ``σ_n² / k``; :func:`predict` adds that one pseudo-observation per test point.
    """
    jitter = linalg.default_jitter(data.y.dtype) if jitter is None else jitter
    kp = params["kernel"]
    w, a, off, on = _split(kernel, params, data)
    gram = kernel.radius_kernel(kp, w[:, None], w[None, :]) * kernel.angular_kernel(kp, a @ a.T)
    noise = params["noise"] + noise_floor
    cov = jnp.where(off[:, None] & off[None, :], gram, 0.0) + jnp.diag(jnp.where(off, noise, 1.0))
    factor = linalg.cholesky(cov, jitter)
    residual = data.y - params["mean"]
    white = linalg.solve_triangular(factor, jnp.where(off, residual, 0.0), lower=True)
    count = jnp.sum(on)
    centre_residual = jnp.sum(jnp.where(on, residual, 0.0)) / jnp.maximum(count, 1)
    return BockPosterior(params, data, factor, white, count, centre_residual)


def _centre_variance(post: BockPosterior, jitter, noise_floor):
    """Prior variance plus noise of the pseudo-observation at the origin: ``σ² + σ_n² / k + jitter``."""
    noise = post.params["noise"] + noise_floor
    return post.params["kernel"]["amplitude"] + noise / jnp.maximum(post.centre_count, 1) + jitter


def predict(kernel: Cylindrical, post: BockPosterior, x, boundary: bool = False, jitter: float | None = None,
            noise_floor: float = 1e-6):
    r"""Posterior mean and variance of ``f`` at unit-cube points ``x`` ``(m, D)`` (BOCK §3.3, §4).

    For a test point ``x*`` with direction ``a*``, observations at the origin take the direction
    ``a*`` (the paper's centre rule, as the authors' ``inference_sphere_origin`` computes it): the
    Gram matrix of the observations then depends on ``a*`` only through the origin's row, so the
    posterior is the one given the observations off the origin (one Cholesky factor for all test
    points) updated by one block elimination for the origin's pseudo-observation. A test point at the
    origin takes the pairwise rule of :class:`Cylindrical` (every observation sees it in its own
    direction); the authors' code never predicts there. That column is not a valid covariance with
    the observations, so the variance there can fall below its limit along every direction (it is
    clamped at ``1e-12``); measured on fitted models it stays within a few percent of those limits.

    ``boundary`` (BOCK+B, footnote 4): the variance is that of
    :math:`\sigma^2(x_* \mid \mathcal D \cup \{(R\, x_*/\lVert x_*\rVert, \sim)\})`, one fake
    observation on the boundary sphere in the direction of ``x*``, with the same noise as the real
    ones and no value: the mean is that of ``D`` alone (as in the authors'
    ``inference_sphere_origin_satellite``, where the fake point enters the variance only). A test
    point at the origin has no direction and gets no fake point.

    After :func:`fantasize` the mean is that of the posterior before the fantasies and the
    variance that of the posterior after them.
    """
    if post.believed is not None:
        return predict(kernel, post.believed, x, boundary, jitter, noise_floor)[0], \
            predict(kernel, post._replace(believed=None), x, boundary, jitter, noise_floor)[1]

    jitter = linalg.default_jitter(post.data.y.dtype) if jitter is None else jitter
    params, kp = post.params, post.params["kernel"]
    w, a, off, _ = _split(kernel, params, post.data)
    ws, as_, cs = kernel.features(kp, x)
    angular = kernel.angular_kernel(kp, jnp.where(cs[None, :], 1.0, a @ as_.T))  # (N, m)
    w0 = kernel.warped_radius(kp, jnp.zeros((), ws.dtype))  # the origin's warped radius
    blocks = [
        kernel.radius_kernel(kp, w[:, None], ws[None, :]) * angular,  # k(data, x*)
        kernel.radius_kernel(kp, w, w0)[:, None] * angular,  # k(data, origin in the direction of x*)
    ]
    if boundary:
        w1 = kernel.warped_radius(kp, jnp.ones((), ws.dtype))  # the boundary sphere r = R
        blocks.append(kernel.radius_kernel(kp, w, w1)[:, None] * angular)  # k(data, R a*)
    rhs = jnp.where(off[:, None], jnp.concatenate(blocks, axis=1), 0.0)
    solved = linalg.solve_triangular(post.factor, rhs, lower=True)
    m = x.shape[0]
    v, q = solved[:, :m], solved[:, m:2 * m]

    amplitude = kp["amplitude"]
    mean = params["mean"] + v.T @ post.white
    var = amplitude - jnp.sum(v**2, axis=0)
    # the origin's pseudo-observation, eliminated after the others (p: its conditional std)
    has = post.centre_count > 0
    tiny = jnp.finfo(var.dtype).tiny ** 0.5
    p = jnp.sqrt(jnp.maximum(_centre_variance(post, jitter, noise_floor) - jnp.sum(q**2, axis=0), tiny))
    k_bar = jnp.where(has, (kernel.radius_kernel(kp, w0, ws) - jnp.sum(q * v, axis=0)) / p, 0.0)
    y_bar = jnp.where(has, (post.centre_residual - q.T @ post.white) / p, 0.0)
    mean = mean + k_bar * y_bar
    var = var - k_bar**2
    if boundary:
        q0 = solved[:, 2 * m:]
        noise = params["noise"] + noise_floor
        q1 = jnp.where(has, (kernel.radius_kernel(kp, w0, w1) - jnp.sum(q * q0, axis=0)) / p, 0.0)
        p_bar = jnp.sqrt(jnp.maximum(amplitude + noise + jitter - jnp.sum(q0**2, axis=0) - q1**2, tiny))
        k_tilde = (kernel.radius_kernel(kp, w1, ws) - jnp.sum(q0 * v, axis=0) - k_bar * q1) / p_bar
        var = jnp.where(cs, var, var - k_tilde**2)
    return mean, jnp.maximum(var, 1e-12)


def log_marginal_likelihood(kernel: Cylindrical, params, data: Data, jitter: float | None = None,
                            noise_floor: float = 1e-6):
    r"""Log marginal likelihood of BOCK, with the authors' treatment of observations at the origin.

    Without observations at the origin this is the exact GP's (R&W eq. 2.30). With them, their
    direction is undefined until a test point is given, and the authors' code
    (``inference_sphere_origin.negative_log_likelihood``) averages over the directions of the
    observations off the origin: with ``O`` the rows at the origin and ``a_j`` the direction of row
    ``j ∉ O``,

    .. math::
       \log p(y_{\bar O}) + \frac{1}{|\bar O|} \sum_{j \notin O} \log p(y_O \mid y_{\bar O};\, a_j)
       = \frac{1}{|\bar O|} \sum_{j \notin O} \log \mathcal N(y;\, m, K(a_j) + \sigma_n^2 I),

    ``K(a_j)`` the Gram matrix in which the origin points along ``a_j`` (:meth:`Cylindrical.gram_centred`).
    (The authors' code has exactly one observation at the origin; several are handled as one of
    their mean with noise ``σ_n²/k``, plus the exact density of their spread about it.) ``-inf``
    when a factorisation fails.
    """
    jitter = linalg.default_jitter(data.y.dtype) if jitter is None else jitter
    post = condition(kernel, params, data, jitter, noise_floor)
    kp = params["kernel"]
    w, a, off, on = _split(kernel, params, data)
    n_off = jnp.sum(off)
    log2pi = math.log(2.0 * math.pi)
    value = -0.5 * jnp.sum(post.white**2) - jnp.sum(jnp.log(jnp.diag(post.factor))) - 0.5 * n_off * log2pi

    def centre_term(_):
        k = jnp.maximum(post.centre_count, 1).astype(value.dtype)
        noise = params["noise"] + noise_floor
        variance = _centre_variance(post, jitter, noise_floor)
        # column j: covariances of the rows off the origin with the origin pointing along a_j
        w0 = kernel.warped_radius(kp, jnp.zeros((), w.dtype))
        cross = kernel.radius_kernel(kp, w, w0)[:, None] * kernel.angular_kernel(kp, a @ a.T)
        q = linalg.solve_triangular(post.factor, jnp.where(off[:, None] & off[None, :], cross, 0.0), lower=True)
        p2 = jnp.maximum(variance - jnp.sum(q**2, axis=0), jnp.finfo(w.dtype).tiny ** 0.5)
        z = (post.centre_residual - q.T @ post.white) ** 2 / p2
        conditional = -0.5 * (z + jnp.log(p2) + log2pi)  # (N,) one per direction; all equal if n_off = 0
        mean_conditional = jnp.where(n_off > 0, jnp.sum(jnp.where(off, conditional, 0.0)) / jnp.maximum(n_off, 1),
                                     conditional[0])
        residual = jnp.where(on, data.y - params["mean"] - post.centre_residual, 0.0)
        spread = -0.5 * jnp.sum(residual**2) / noise - 0.5 * (k - 1) * jnp.log(2.0 * math.pi * noise) - 0.5 * jnp.log(k)
        return (mean_conditional + spread).astype(value.dtype)

    value = value + jax.lax.cond(post.centre_count > 0, centre_term, lambda _: jnp.zeros((), value.dtype), None)
    return jnp.where(jnp.isfinite(value), value, -jnp.inf)


def fantasize(kernel: Cylindrical, post: BockPosterior, x, mask=None, jitter=None, noise_floor: float = 1e-6):
    """Condition additionally on pending points ``x`` ``(p, D)`` (rows where ``mask``) as the kriging
    believer does: the mean stays that of ``post``, the variance becomes that of the posterior with
    ``x`` observed (at their predicted means; a pending point at the origin joins the origin's
    observations).

    For one GP, observing points at their own posterior mean leaves the mean unchanged, which is
    what the kriging believer relies on. Under BOCK's centre rule the posterior of each test point
    is that of a different Gram matrix (the origin along its direction), so a fantasised value
    predicted along one direction would move the mean along another; keeping the mean of ``post``
    (fantasies as value-less observations, like BOCK+B's fake point) restores the property.
    """
    base = post if post.believed is None else post.believed
    mean, _ = predict(kernel, base, x, False, jitter, noise_floor)
    data = post.data
    extended = Data(
        jnp.concatenate([data.x, x.astype(data.x.dtype)]),
        jnp.concatenate([data.y, mean.astype(data.y.dtype)]),
        jnp.concatenate([data.mask, jnp.ones(x.shape[0], bool) if mask is None else mask]),
    )
    return condition(kernel, post.params, extended, jitter, noise_floor)._replace(believed=base)


def predict_joint(kernel: Cylindrical, post: BockPosterior, x, boundary: bool = False, jitter=None,
                  noise_floor: float = 1e-6):
    """Joint posterior mean ``(m,)`` and covariance ``(m, m)`` at ``x`` (Thompson sampling).

    The paper's centre rule defines one prediction at a time (the origin follows each test point's
    direction), not a joint over test points in different directions. The mean and the variances
    here are those of :func:`predict`; the correlations are those of the posterior given the
    observations off the origin under the kernel with a direction-free origin (``a = 0``, the
    authors' raw ``RadializationKernel``, a valid kernel), so the matrix is a covariance. Without
    observations or test points at the origin (and without ``boundary``) this is the exact GP's
    joint posterior.
    """
    mean, var = predict(kernel, post, x, boundary, jitter, noise_floor)
    kp = post.params["kernel"]
    w, a, off, _ = _split(kernel, post.params, post.data)
    ws, as_, _ = kernel.features(kp, x)
    cross = kernel.radius_kernel(kp, w[:, None], ws[None, :]) * kernel.angular_kernel(kp, a @ as_.T)
    v = linalg.solve_triangular(post.factor, jnp.where(off[:, None], cross, 0.0), lower=True)
    cov = kernel.radius_kernel(kp, ws[:, None], ws[None, :]) * kernel.angular_kernel(kp, as_ @ as_.T) - v.T @ v
    scale = jnp.sqrt(jnp.maximum(jnp.diag(cov), 1e-12))
    std = jnp.sqrt(var)
    return mean, cov * (std / scale)[:, None] * (std / scale)[None, :]


def bock_surrogate(warp: bool = True, boundary: bool = False, degree: int = 3, noise_scale: float = 0.1,
                   noise_floor: float = 1e-6, authors_priors: bool = False):
    """BOCK's surrogate: the exact GP with constant mean over :class:`Cylindrical`.

    The priors are those of :func:`jbo.surrogates.exact_gp` (horseshoe on the noise variance, normal
    on the constant mean) and of :meth:`Cylindrical.sample_params`, for standardised targets. With
    ``authors_priors`` they are the authors' (HyperSphere), stated for targets in the objective's own units
    (centred), whatever units the targets are passed in: signal variance log-uniform on ``[e⁻¹², e²⁰]``,
    noise variance a horseshoe with scale 0.1 on ``[e⁻¹², e¹⁶]``, constant mean uniform between the
    smallest and largest observed value (:func:`jbo.priors.reference_amplitude_prior` and its
    neighbours), and no noise floor beyond the prior's lower bound (``noise_floor`` is then ignored).
    ``log_likelihood``,
    ``condition``, ``predict``, ``fantasize`` and ``predict_joint`` handle observations at the
    origin by the paper's centre rule (:func:`predict`, :func:`log_marginal_likelihood`). Without
    such observations they coincide with the exact GP's.

    Cached: equal arguments, however spelled (positional or keyword), return the same object, so
    jitted programs keyed on the surrogate do not recompile.

    Args:
      warp: Kumaraswamy warp of the radius (``False``: BOCK-W).
      boundary: BOCK+B, one fake observation on the boundary sphere in the direction of each test
        point, in the predictive variance only (§4, footnote 4); the likelihood is unchanged.
      degree: ``P`` of the angular kernel (eq. 7).
      noise_scale: scale of the horseshoe prior on the noise variance.
      noise_floor: added to the sampled noise variance (standardised units; as
        :func:`jbo.surrogates.exact_gp`'s). The Cholesky factorisations add a jitter of ``1e-8``
        (float64) on top.
      authors_priors: the authors' priors (see above).
    Returns:
      A :class:`~jbo.types.Surrogate` named ``"bock"`` with params ``{"kernel", "noise", "mean"}``.
    """
    if not isinstance(boundary, bool):
        raise ValueError(f"boundary must be true or false, got {boundary!r}")
    if not isinstance(authors_priors, bool):
        raise ValueError(f"authors_priors must be true or false, got {authors_priors!r}")
    return _bock_surrogate(warp, boundary, degree, float(noise_scale), 0.0 if authors_priors else float(noise_floor),
                           authors_priors)


@functools.lru_cache(maxsize=None)
def _bock_surrogate(warp: bool, boundary: bool, degree: int, noise_scale: float, noise_floor: float = 1e-6,
                    authors_priors: bool = False):
    kernel = Cylindrical(degree=degree, warp=warp, authors_priors=authors_priors)
    gp = exact_gp(kernel, noise_floor=noise_floor, noise_scale=noise_scale)

    def reference_prior(data: Data):
        return {
            "kernel": kernel.sample_params(data.x.shape[-1]),
            "noise": numpyro.sample("noise", priors.reference_noise_prior(noise_scale)),
            "mean": numpyro.sample("mean", priors.reference_mean_prior(data.y, data.mask)),
        }

    return Surrogate(
        name="bock",
        prior=reference_prior if authors_priors else gp.prior,
        log_likelihood=lambda params, data: log_marginal_likelihood(kernel, params, data, None, noise_floor),
        condition=lambda params, data: condition(kernel, params, data, None, noise_floor),
        predict=lambda post, x: predict(kernel, post, x, boundary, None, noise_floor),
        fantasize=lambda post, x, mask=None: fantasize(kernel, post, x, mask, None, noise_floor),
        predict_joint=lambda post, x: predict_joint(kernel, post, x, boundary, None, noise_floor),
    )
