"""Priors on hyperparameters, as numpyro distributions and model fragments.

Every hyperparameter of a jbo surrogate is a numpyro sample site; a surrogate's numpyro model is its
prior fragment plus a ``numpyro.factor`` holding the marginal likelihood (numpyro's "priors as
models"). MAP, NUTS and the slice sampler then all act on that one model.

Defaults (data are standardised, inputs live in the unit cube):

* lengthscales: log-normal whose median grows as ``sqrt(D)`` (Hvarfner et al., 2024, "Vanilla
  Bayesian optimization performs great in high dimensions"), so the prior expected correlation of
  two random points does not collapse as the dimension grows;
* amplitude (signal variance): log-normal centred on 1, the variance of standardised targets;
* noise variance: the horseshoe of Carvalho et al. (2009), as in Spearmint (Snoek et al., 2012): a
  spike at zero for noise-free objectives with a heavy tail for noisy ones;
* constant mean: normal on the standardised scale;
* Kumaraswamy warping a, b: log-normal around 1 (the identity warp), as in Snoek et al. (2014);
* arc kernel (Swersky et al. 2013): log-normal on the scales ω, Beta (uniform by default) on the
  angles ρ ∈ [0, 1];
* linear, polynomial and constant kernels: log-normal variances of the size of standardised targets;
  periodic kernel: log-normal periods of a fraction of the cube's width.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro.distributions import constraints


class Horseshoe(dist.Distribution):
    r"""Horseshoe prior on a positive scalar (a noise variance), as used by Spearmint.

    The horseshoe density has no closed form; Carvalho et al. (2009, Thm. 1) bound it by
    :math:`\tfrac{K}{2}\log(1 + 4/t^2) < p(t) < K \log(1 + 2/t^2)`. Spearmint uses the middle,
    :math:`\log p(v) = \log\log(1 + 3 (s / v)^2) + \text{const}`, which is what ``log_prob`` returns
    (unnormalised: samplers and MAP need no constant). ``sample`` draws from the exact horseshoe,
    :math:`|\,\mathcal N(0, s^2\lambda^2)|` with :math:`\lambda \sim C^+(0, 1)`.

    Args:
      scale: the global shrinkage scale ``s``.
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.positive
    reparametrized_params = ["scale"]

    def __init__(self, scale=0.1, *, validate_args=None):
        self.scale = scale
        super().__init__(batch_shape=jnp.shape(scale), validate_args=validate_args)

    def sample(self, key, sample_shape=()):
        k1, k2 = jax.random.split(key)
        shape = sample_shape + self.batch_shape
        lam = jnp.abs(jax.random.cauchy(k1, shape))
        return jnp.abs(jax.random.normal(k2, shape)) * self.scale * lam + jnp.finfo(jnp.result_type(float)).tiny

    def log_prob(self, value):
        return jnp.log(jnp.log1p(3.0 * (self.scale / value) ** 2))


def lengthscale_prior(dim: int, scale: float = 1.0) -> dist.Distribution:
    """Log-normal on a unit-cube lengthscale with median ``0.5 * sqrt(dim)``.

    Args:
      dim: input dimension ``D`` (the median grows as ``sqrt(D)``).
      scale: standard deviation of the log-lengthscale.
    """
    return dist.LogNormal(math.log(0.5) + 0.5 * math.log(max(dim, 1)), scale)


def amplitude_prior() -> dist.Distribution:
    """Log-normal on the signal variance of standardised targets (median 1)."""
    return dist.LogNormal(0.0, 1.0)


def noise_prior(scale: float = 0.1) -> dist.Distribution:
    """Horseshoe on the noise variance (Spearmint's choice)."""
    return Horseshoe(scale)


def mean_prior() -> dist.Distribution:
    """Normal on the constant mean of standardised targets."""
    return dist.Normal(0.0, 1.0)


def warp_prior() -> dist.Distribution:
    """Log-normal on the Kumaraswamy shapes ``a`` and ``b`` (median 1: the identity warp)."""
    return dist.LogNormal(0.0, 0.75)


def arc_omega_prior(dim: int, scale: float = 1.0) -> dist.Distribution:
    r"""Log-normal on the arc kernel's scales ``ω_i`` (Swersky et al. 2013, eq. 3: ``ω_i > 0``).

    For two relevant values a small step apart, eq. (4) gives ``d_i ≈ ω_i π ρ_i |x_i - x_i'|``, so
    ``ω_i π ρ_i`` plays the part of an inverse lengthscale. The median ``4 / (π sqrt(dim))`` makes it
    the inverse of the lengthscale prior's median ``0.5 sqrt(dim)`` at ``ρ``'s median 1/2, so both
    kernels start from the same notion of near. The paper leaves this prior open.

    Args:
      dim: input dimension ``D``.
      scale: standard deviation of ``log ω``.
    """
    return dist.LogNormal(math.log(4.0 / math.pi) - 0.5 * math.log(max(dim, 1)), scale)


def arc_rho_prior(a: float = 1.0, b: float = 1.0) -> dist.Distribution:
    """Beta prior on the arc kernel's angles ``ρ_i ∈ [0, 1]`` (eq. 3); the paper gives only the
    range, so the default ``Beta(1, 1)`` is the uniform on it."""
    return dist.Beta(a, b)


def slope_variance_prior(scale: float = 1.5) -> dist.Distribution:
    r"""Log-normal on the variance of a linear kernel's slopes (median 1).

    Standardised targets change by a few units across the unit cube when the objective is mostly
    linear, so slopes of order 1 are typical; ``scale`` lets the data move the variance by orders of
    magnitude either way.
    """
    return dist.LogNormal(0.0, scale)


def offset_prior() -> dist.Distribution:
    """Log-normal on a constant kernel's variance or a polynomial kernel's offset (median 1: the
    variance of standardised targets)."""
    return dist.LogNormal(0.0, 1.0)


def period_prior(median: float = 0.5, scale: float = 0.75) -> dist.Distribution:
    """Log-normal on a periodic kernel's period in unit-cube widths (median ``median``: two cycles across
    the cube; a period beyond the cube's width is indistinguishable from a smooth trend)."""
    return dist.LogNormal(math.log(median), scale)


def periodic_lengthscale_prior() -> dist.Distribution:
    r"""Log-normal on the lengthscale :math:`\ell` of :math:`\exp(-2 \sin^2(\pi d / p) / \ell^2)`
    (median 1: a smooth cycle)."""
    return dist.LogNormal(0.0, 0.75)


def sample(name: str, d: dist.Distribution, shape: tuple[int, ...] = ()):
    """``numpyro.sample`` with an explicit event shape (``shape`` i.i.d. copies of ``d``)."""
    if shape:
        d = d.expand(shape).to_event(len(shape))
    return numpyro.sample(name, d)


# ----------------------------------------------------------------------------------------------
# BOCK's cylindrical kernel (Oh, Gavves & Welling 2018), jbo.kernels.Cylindrical
# ----------------------------------------------------------------------------------------------
def angular_weight_prior(scale: float = 2.0) -> dist.Distribution:
    r"""Log-normal on each weight ``c_p`` of BOCK's angular kernel :math:`\sum_p c_p (a_1^\top a_2)^p`.

    The paper (eq. 7) only asks ``c_p ≥ 0``. The authors' code (HyperSphere, ``SphereRadialKernel``)
    samples ``log c_p`` under ``N(0, 2²)`` and uses the normalised weights ``c_p / Σ c``, so that the
    angular kernel is a correlation (``K_a(1) = 1``) and the radius kernel's amplitude alone sets the
    prior variance; :class:`jbo.kernels.Cylindrical` normalises the same way. On the simplex the
    normalised weights are logistic-normal: most prior mass on one or two dominant powers.

    Args:
      scale: standard deviation of ``log c_p``.
    """
    return dist.LogNormal(0.0, scale)


def radius_lengthscale_prior(dim: int, log_lower: float = -12.0) -> dist.Distribution:
    r"""Log-uniform prior on the lengthscale of BOCK's radius kernel, on the radius scaled to ``[0, 1]``.

    The authors' code puts a flat prior on ``log ℓ²`` over ``[-12, log 2R]`` (``Matern52(ndim=1,
    max_ls=2 * search_radius)``; its Matérn divides squared distances by ``exp(log_ls)``, i.e. by
    ``ℓ²``), for a radius that lives on ``[0, R]``, ``R = √d``. jbo's radius kernel sees the radius
    divided by ``R`` (``[0, 1]``), so the same prior is log-uniform on
    ``ℓ ∈ [e^{-6} / R, sqrt(2 / R)]``. The upper end shrinks as ``d^{-1/4}``: a long-range radius
    correlation between the centre and the boundary is allowed in low dimension only.

    Args:
      dim: input dimension ``d``.
      log_lower: lower end of ``log ℓ²`` on the authors' ``[0, R]`` scale.
    """
    radius = math.sqrt(max(dim, 1))
    return dist.LogUniform(math.exp(0.5 * log_lower) / radius, math.sqrt(2.0 / radius))


# The bounds of the authors' code (HyperSphere ``GP/modules/gp_modules.py`` and
# ``GP/likelihoods/modules/gaussian.py``), in the objective's own units: log σ² ∈ [-12, 20] for the
# signal variance, log σ_n² ∈ [-12, 16] for the noise variance.
REFERENCE_AMPLITUDE_BOUNDS = (math.exp(-12.0), math.exp(20.0))
REFERENCE_NOISE_BOUNDS = (math.exp(-12.0), math.exp(16.0))


class BoundedHorseshoe(Horseshoe):
    r"""The :class:`Horseshoe` restricted to ``[low, high]`` (log density unnormalised, as the horseshoe's).

    ``sample`` draws from the horseshoe and moves a draw that falls outside just inside the bounds:
    prior draws only start jbo's chains and MAP restarts, which need a point of the support.

    Args:
      scale: the horseshoe's global scale ``s``.
      low, high: the bounds (``0 < low < high``).
    """

    arg_constraints = {"scale": constraints.positive}

    def __init__(self, scale=0.1, low=REFERENCE_NOISE_BOUNDS[0], high=REFERENCE_NOISE_BOUNDS[1], *,
                 validate_args=None):
        self.low, self.high = low, high
        super().__init__(scale, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def sample(self, key, sample_shape=()):
        inside = (1.0 + 1e-3) * self.low, (1.0 - 1e-3) * self.high
        return jnp.clip(super().sample(key, sample_shape), *inside)


def reference_amplitude_prior() -> dist.Distribution:
    """The authors' prior on BOCK's signal variance, in the objective's units: flat in ``log σ²`` on
    ``[-12, 20]`` (log-uniform on ``[e⁻¹², e²⁰]``)."""
    return dist.LogUniform(*REFERENCE_AMPLITUDE_BOUNDS)


def reference_noise_prior(scale: float = 0.1) -> dist.Distribution:
    """The authors' prior on BOCK's noise variance, in the objective's units: Spearmint's horseshoe
    with scale ``0.1`` on ``[e⁻¹², e¹⁶]``."""
    return BoundedHorseshoe(scale, *REFERENCE_NOISE_BOUNDS)


def reference_mean_prior(y, mask) -> dist.Distribution:
    """The authors' prior on BOCK's constant mean: uniform between the smallest and the largest observed
    value (their ``stable_parameters``); ``y`` ``(N,)`` in any units, ``mask`` its real rows. A
    range of zero width (one value) is widened by ``1e-6 (1 + |y|)`` on each side."""
    low = jnp.min(jnp.where(mask, y, jnp.inf))
    high = jnp.max(jnp.where(mask, y, -jnp.inf))
    pad = jnp.where(high - low > 0.0, 0.0, 1e-6 * (1.0 + jnp.abs(low)))
    return dist.Uniform(low - pad, high + pad)


def radius_warp_prior(low: float, high: float) -> dist.Distribution:
    r"""Log-uniform prior on a shape parameter of BOCK's Kumaraswamy radius warp (eq. 8).

    The paper wants the warp "concave and non-decreasing" so that the kernel focuses on small radii.
    The Kumaraswamy CDF :math:`1 - (1 - t^\alpha)^\beta` is concave on ``[0, 1]`` when ``α ≤ 1`` and
    ``β ≥ 1``, and the authors' code bounds ``α ∈ [1/2, 1]`` and ``β ∈ [1, 2]``, with a prior on
    ``log α`` (``log β``) that is half a narrow spike (``N(0, 0.01²)``) at the identity warp and half
    uniform on the bounded range. jbo keeps the uniform part, i.e. log-uniform on ``[low, high]``
    (use ``(0.5, 1)`` for ``α`` and ``(1, 2)`` for ``β``), and drops the spike: a point mass is
    hostile to gradient-based samplers and MAP, and the identity warp is BOCK-W
    (``Cylindrical(warp=False)``), the limit ``α = β = 1`` of this range.
    """
    return dist.LogUniform(low, high)
