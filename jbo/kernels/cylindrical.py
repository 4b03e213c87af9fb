r"""BOCK's cylindrical transform and kernel (Oh, Gavves & Welling, 2018, eqs. 5–8).

The search space of BOCK is the ball :math:`B(0, R)`, :math:`R = \sqrt d`, that circumscribes the
cube :math:`[-1, 1]^d`. jbo's models see points ``u`` of the unit cube :math:`[0, 1]^d`, so everything
here first maps ``u`` to ``x = 2u - 1`` (:func:`cube_to_ball`); the centre of the unit cube,
``u = 1/2``, is the origin of the ball, and the cube's corners lie on its boundary sphere.

* :func:`to_cylinder` / :func:`from_cylinder`: the transform ``T`` of eq. (5) and its inverse.
* :class:`Cylindrical`: the kernel of eqs. (6)–(8), a Matérn-5/2 on the Kumaraswamy-warped radius
  times the continuous radial kernel :math:`\sum_p c_p (a_1^\top a_2)^p` on the sphere, with the
  pairwise form of the centre rule of §3.3 (the GP that handles observations at the origin is
  :mod:`jbo.surrogates.cylindrical`).
"""

from __future__ import annotations

import dataclasses
import math

import jax.numpy as jnp

from jbo import checks, priors
from jbo.kernels.base import Kernel, safe_sqrt
from jbo.kernels.warp import kumaraswamy_cdf

# Kumaraswamy shape ranges of the authors' code (HyperSphere ``Kumaraswamy``): a concave warp.
WARP_A_RANGE = (0.5, 1.0)
WARP_B_RANGE = (1.0, 2.0)


# ----------------------------------------------------------------------------- the transform
def search_radius(dim: int) -> float:
    """``R = √d``, the radius of the ball that circumscribes ``[-1, 1]^d`` (BOCK §4)."""
    return math.sqrt(dim)


def cube_to_ball(u):
    """Unit-cube points ``u ∈ [0, 1]^d`` to BOCK's coordinates ``x = 2u - 1 ∈ [-1, 1]^d ⊂ B(0, √d)``."""
    return 2.0 * u - 1.0


def ball_to_cube(x):
    """Inverse of :func:`cube_to_ball`."""
    return 0.5 * (x + 1.0)


def to_cylinder(x):
    r"""The cylindrical transform ``T`` of eq. (5): ``x ↦ (r, a) = (‖x‖, x / ‖x‖)``.

    ``x`` is in BOCK's coordinates (``[-1, 1]^d`` inside the ball of radius ``√d``), not in the unit
    cube (map with :func:`cube_to_ball` first). At ``x = 0`` the paper returns an arbitrary unit
    direction; here the direction is the zero vector, a marker that :class:`Cylindrical` resolves
    with the centre rule of §3.3 instead of a fixed arbitrary direction. The norm is a safe one:
    values and gradients are finite at the origin (the gradient of ``r`` there is 0).

    Args:
      x: ``(..., D)`` points.
    Returns:
      ``(r (...,), a (..., D))``.
    """
    r = safe_sqrt(jnp.sum(x**2, axis=-1))
    a = x / jnp.where(r > 0.0, r, 1.0)[..., None]
    return r, a


def from_cylinder(r, a):
    """``T⁻¹(r, a) = r a`` (eq. 5); ``r (...,)``, ``a (..., D)``."""
    return r[..., None] * a


# ----------------------------------------------------------------------------- the kernel
def _matern52(d2):
    """Matérn-5/2 correlation of the scaled squared distance ``d2`` (finite gradient at 0)."""
    r = math.sqrt(5.0) * safe_sqrt(d2)
    return (1.0 + r + r**2 / 3.0) * jnp.exp(-r)


@dataclasses.dataclass(frozen=True)
class Cylindrical(Kernel):
    r"""BOCK's cylindrical kernel (eqs. 6–8) on unit-cube points.

    .. math::
       K((r_1, a_1), (r_2, a_2)) = \sigma^2\, M_{5/2}\!\Big(\frac{|w(r_1/R) - w(r_2/R)|}{\ell}\Big)
       \cdot \frac{\sum_{p=0}^P c_p (a_1^\top a_2)^p}{\sum_{p=0}^P c_p},

    with ``(r, a) = T(2u - 1)`` (:func:`to_cylinder`), ``R = √d``, ``w(t) = 1 - (1 - t^α)^β`` the
    Kumaraswamy CDF (eq. 8; the identity for BOCK-W) and ``M_{5/2}`` the Matérn-5/2 correlation,
    the paper's (non-ARD, one-dimensional) base kernel. The radius is scaled to ``[0, 1]`` before
    the warp, so ``ℓ`` is a lengthscale on that scale. The centre rule of §3.3 (pairwise form, see
    the module docstring): when either point is the origin the angular factor is ``K_a(1) = 1``.

    The angular weights are normalised as in the authors' code, so ``K_a(1) = 1``: ``c_p`` and the
    amplitude ``σ²`` would otherwise trade off along a ridge of equal likelihood. The kernel has
    ``P + 5`` parameters (``P + 3`` without the warp), whatever the dimension (the paper's point
    against ARD kernels).

    Params: ``{"amplitude": (), "lengthscale": (), "angular": (P + 1,)}`` plus ``"warp_a"``,
    ``"warp_b"`` (both ``()``) when ``warp``. Priors (:meth:`sample_params`, :mod:`jbo.priors`):

    * ``angular``: ``c_p`` i.i.d. log-normal, ``log c_p ~ N(0, 2²)``: the authors' prior
      (:func:`jbo.priors.angular_weight_prior`);
    * ``warp_a`` ``α`` log-uniform on ``[1/2, 1]``, ``warp_b`` ``β`` log-uniform on ``[1, 2]``: the
      authors' ranges, which make the warp concave and non-decreasing as §3.2 asks, with the uniform
      half of their spike-and-slab prior (:func:`jbo.priors.radius_warp_prior`);
    * ``lengthscale``: log-uniform on ``[e^{-6}/R, sqrt(2/R)]``: the authors' flat prior on
      ``log ℓ²`` over ``[-12, log 2R]`` on their radius scale ``[0, R]``, rescaled
      (:func:`jbo.priors.radius_lengthscale_prior`);
    * ``amplitude``: jbo's log-normal with median 1 (:func:`jbo.priors.amplitude_prior`) on standardised
      targets. The authors' code leaves ``log σ²`` flat on ``[-12, 20]`` in the objective's own units;
      that prior is ``authors_priors=True`` (:func:`jbo.priors.reference_amplitude_prior`, for
      ``BOCK(units="objective")`` and ``BOCK(priors="authors")``).

    The numpyro sites are ``amplitude``, ``radius_lengthscale``, ``angular_weights`` (a vector),
    ``radius_warp_a`` and ``radius_warp_b``, after ``prefix``.

    Attributes:
      degree: ``P``, the highest power of the angular kernel (eq. 7; the paper uses 3).
      warp: Kumaraswamy warp of the radius (``False``: BOCK-W).
      authors_priors: the amplitude prior is the authors' (HyperSphere's, stated for the objective's units).
    """

    degree: int = 3
    warp: bool = True
    authors_priors: bool = False

    def __post_init__(self):
        object.__setattr__(self, "degree", checks.integer("degree", self.degree, 0))
        checks.boolean("warp", self.warp)
        checks.boolean("authors_priors", self.authors_priors)

    # -- pieces ---------------------------------------------------------------------------
    def warped_radius(self, params, t):
        """``w(t)`` for the radius ``t = r / R ∈ [0, 1]`` (identity for BOCK-W)."""
        if self.warp:
            return kumaraswamy_cdf(t, params["warp_a"], params["warp_b"])
        return t

    def features(self, params, u):
        """Cylinder coordinates of unit-cube points ``u`` ``(..., D)``.

        Returns:
          ``(w (...,), a (..., D), centre (...,))``: the warped scaled radius, the direction (zero at
          the origin) and whether the point is the origin (``r = 0``: ``u = 1/2`` up to underflow).
        """
        r, a = to_cylinder(cube_to_ball(u))
        t = r / math.sqrt(u.shape[-1])
        return self.warped_radius(params, t), a, r == 0.0

    def radius_kernel(self, params, w1, w2):
        """``σ² M_{5/2}(|w1 - w2| / ℓ)``, broadcasting ``w1`` against ``w2``."""
        return params["amplitude"] * _matern52(((w1 - w2) / params["lengthscale"]) ** 2)

    def angular_kernel(self, params, t):
        r"""``K_a(t) = Σ_p c_p t^p / Σ_p c_p`` (eq. 7, normalised) by Horner's rule."""
        c = params["angular"]
        t = jnp.clip(t, -1.0, 1.0)
        value = jnp.zeros_like(t) + c[self.degree]
        for p in range(self.degree - 1, -1, -1):
            value = value * t + c[p]
        return value / jnp.sum(c)

    def cosines(self, a1, c1, a2, c2):
        """``a1ᵀa2`` for every pair, ``1`` where either point is the origin (centre rule, pairwise)."""
        return jnp.where(c1[:, None] | c2[None, :], 1.0, a1 @ a2.T)

    # -- the Kernel interface -------------------------------------------------------------
    def __call__(self, params, x1, x2):
        w1, a1, c1 = self.features(params, x1)
        w2, a2, c2 = self.features(params, x2)
        cos = jnp.where(c1 | c2, 1.0, jnp.dot(a1, a2))
        return self.radius_kernel(params, w1, w2) * self.angular_kernel(params, cos)

    def gram(self, params, x1, x2):
        # One (n1, D) @ (D, n2) product for the cosine table; the radius part is one-dimensional.
        w1, a1, c1 = self.features(params, x1)
        w2, a2, c2 = self.features(params, x2)
        radius = self.radius_kernel(params, w1[:, None], w2[None, :])
        return radius * self.angular_kernel(params, self.cosines(a1, c1, a2, c2))

    def gram_centred(self, params, x1, x2, direction):
        """Gram matrix in which every origin point takes the unit ``direction`` ``(D,)``.

        This is the paper's centre rule for a test point in that direction (§3.3): a proper kernel
        evaluation at points of the cylinder, hence PSD on any set, origin included. (Where both
        points are the origin, or one is the origin and the other points along ``direction``, it
        agrees with :meth:`gram`.)
        """
        w1, a1, c1 = self.features(params, x1)
        w2, a2, c2 = self.features(params, x2)
        a1 = jnp.where(c1[:, None], direction, a1)
        a2 = jnp.where(c2[:, None], direction, a2)
        radius = self.radius_kernel(params, w1[:, None], w2[None, :])
        return radius * self.angular_kernel(params, a1 @ a2.T)

    def diag(self, params, x):
        return jnp.broadcast_to(params["amplitude"], x.shape[:1]).astype(x.dtype)

    def sample_params(self, dim, prefix=""):
        params = {
            "amplitude": priors.sample(prefix + "amplitude", priors.reference_amplitude_prior() if self.authors_priors
                                       else priors.amplitude_prior()),
            "lengthscale": priors.sample(prefix + "radius_lengthscale", priors.radius_lengthscale_prior(dim)),
            "angular": priors.sample(prefix + "angular_weights", priors.angular_weight_prior(), (self.degree + 1,)),
        }
        if self.warp:
            params["warp_a"] = priors.sample(prefix + "radius_warp_a", priors.radius_warp_prior(*WARP_A_RANGE))
            params["warp_b"] = priors.sample(prefix + "radius_warp_b", priors.radius_warp_prior(*WARP_B_RANGE))
        return params
