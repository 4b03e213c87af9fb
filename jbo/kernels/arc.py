"""The arc kernel for conditional spaces (Swersky, Duvenaud, Snoek, Hutter & Osborne, 2013)."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jbo import priors
from jbo.kernels.base import Kernel, matmul, safe_sqrt
from jbo.kernels.stationary import Matern52, Stationary


def all_relevant(x):
    """The relevance mask of an unconditional space: every coordinate is relevant."""
    return jnp.ones_like(x)


def arc_embedding(x, relevance, omega, rho):
    r"""The arc (cylindrical) embedding of Swersky et al. (2013), eq. (3), one 2-d block per dimension.

    .. math::
       g_i(x) = \delta_i(x)\, \omega_i\, [\sin(\pi \rho_i x_i), \cos(\pi \rho_i x_i)]^\top,

    and ``[0, 0]`` where ``δ_i(x)`` is false. jbo's inputs live in the unit cube, so the paper's
    ``x_i / (u_i - l_i)`` is ``x_i``.

    Args:
      x: ``(..., D)`` points in the unit cube.
      relevance: ``(..., D)`` relevance mask ``δ(x)`` (bool, or 0/1 floats).
      omega: ``(D,)`` positive scales ``ω``; rho: ``(D,)`` angles ``ρ`` in [0, 1].
    Returns:
      ``(..., D, 2)`` embedded coordinates.
    """
    angle = jnp.pi * rho * x
    delta = jnp.asarray(relevance, x.dtype)
    return (delta * omega)[..., None] * jnp.stack([jnp.sin(angle), jnp.cos(angle)], axis=-1)


def arc_distances(x1, x2, relevance1, relevance2, omega, rho):
    r"""Per-dimension distances :math:`d_i(x, x') = \lVert g_i(x) - g_i(x')\rVert_2` (eq. 4).

    Evaluated in closed form, :math:`d_i^2 = \omega_i^2 (\delta_i^2 + \delta_i'^2 - 2 \delta_i
    \delta_i' \cos(\pi \rho_i (x_i - x_i')))`, which for 0/1 flags is eq. (4): 0 when both are
    irrelevant, exactly :math:`\omega_i` when one is, :math:`\omega_i \sqrt2 \sqrt{1 - \cos(\pi
    \rho_i (x_i - x_i'))}` when both are. Written this way the distance between a relevant and an
    irrelevant value does not even round differently with the relevant value (desideratum 2).

    Args:
      x1, x2: ``(..., D)`` points; relevance1, relevance2: their masks ``δ``.
      omega, rho: ``(D,)`` arc parameters.
    Returns:
      ``(..., D)`` distances.
    """
    d1 = jnp.asarray(relevance1, x1.dtype)
    d2 = jnp.asarray(relevance2, x2.dtype)
    cos = jnp.cos(jnp.pi * rho * (x1 - x2))
    return omega * safe_sqrt(jnp.maximum(d1**2 + d2**2 - 2.0 * d1 * d2 * cos, 0.0))


@dataclasses.dataclass(frozen=True)
class Arc(Kernel):
    r"""The arc kernel for conditional spaces (Swersky, Duvenaud, Snoek, Hutter & Osborne, 2013).

    Each dimension is embedded in :math:`\mathbb R^2` by eq. (3) (:func:`arc_embedding`), and a
    kernel of the Euclidean distance in the :math:`2D`-dimensional embedding,
    :math:`\Delta^2 = \sum_i d_i(x, x')^2` with :math:`d_i` of eq. (4), gives the covariance
    ``amplitude * base.profile(Δ²)``. ``ω_i`` acts as an inverse lengthscale (so ``base``'s
    lengthscales are not used), and ``ρ_i`` sets how far a relevant value sits from "irrelevant"
    compared with how far relevant values spread. Because the inputs of ``base.profile`` are true
    Euclidean distances, every profile that is positive definite on every ``R^n`` (Matérn, SE, RQ)
    stays positive definite, and the desiderata hold: (1) values of dimensions irrelevant to both
    points never matter, (2) a dimension relevant to only one point contributes ``ω_i`` whatever
    its value.

    Params: ``{"omega": (D,), "rho": (D,), "amplitude": (), ...}`` plus ``base``'s profile params
    (``alpha`` for the rational quadratic).

    Attributes:
      base: the distance-based kernel whose ``profile`` is used (:class:`Matern52`, SE, RQ).
      relevance_fn: static, jnp-traceable ``(..., D) -> (..., D)`` relevance mask ``δ(x)`` of
        unit-cube points (e.g. ``Space.relevance``); default: every dimension relevant.
      omega_scale: standard deviation of the log-normal prior on ``ω``.
      rho_concentration: ``(a, b)`` of the Beta prior on ``ρ``; the paper only restricts ``ρ`` to
        [0, 1], and ``(1, 1)``, the uniform, is its neutral reading.
    """

    base: Stationary = dataclasses.field(default_factory=Matern52)
    relevance_fn: object = all_relevant
    omega_scale: float = 1.0
    rho_concentration: tuple = (1.0, 1.0)

    def __post_init__(self):
        if not isinstance(self.base, Stationary):
            raise ValueError(f"base must be a distance-based (Stationary) kernel, got {type(self.base).__name__}")
        if not callable(self.relevance_fn):
            raise ValueError(f"relevance_fn must be callable, got {type(self.relevance_fn).__name__}")
        if not self.omega_scale > 0:
            raise ValueError(f"omega_scale must be > 0, got {self.omega_scale!r}")
        a, b = self.rho_concentration
        if not (a > 0 and b > 0):
            raise ValueError(f"rho_concentration must be two positive numbers, got {self.rho_concentration!r}")

    def distances(self, params, x1, x2):
        """Per-dimension distances (eq. 4) between two points ``(D,)``."""
        return arc_distances(x1, x2, self.relevance_fn(x1), self.relevance_fn(x2), params["omega"], params["rho"])

    def __call__(self, params, x1, x2):
        r2 = jnp.sum(self.distances(params, x1, x2) ** 2)
        return params["amplitude"] * self.base.profile(params, r2)

    def gram(self, params, x1, x2):
        # Delta^2 = |g|^2 + |g'|^2 - 2 g.g' with |g|^2 = sum_i omega_i^2 delta_i^2 taken in closed
        # form (not as omega^2 (sin^2 + cos^2)), so that relevant-vs-irrelevant distances are exact.
        # One matrix product as in Stationary.gram instead of N1 * N2 * D cosines.
        d1 = jnp.asarray(self.relevance_fn(x1), x1.dtype)
        d2 = jnp.asarray(self.relevance_fn(x2), x2.dtype)
        g1 = arc_embedding(x1, d1, params["omega"], params["rho"]).reshape(x1.shape[0], -1)
        g2 = arc_embedding(x2, d2, params["omega"], params["rho"]).reshape(x2.shape[0], -1)
        w2 = params["omega"] ** 2
        r2 = jnp.sum(w2 * d1**2, -1)[:, None] + jnp.sum(w2 * d2**2, -1)[None, :] - 2.0 * matmul(g1, g2.T)
        return params["amplitude"] * self.base.profile(params, jnp.maximum(r2, 0.0))

    def diag(self, params, x):
        return jnp.broadcast_to(params["amplitude"] * self.base.profile(params, jnp.zeros((), x.dtype)), x.shape[:1])

    def sample_params(self, dim, prefix=""):
        return {
            "omega": priors.sample(prefix + "omega", priors.arc_omega_prior(dim, self.omega_scale), (dim,)),
            "rho": priors.sample(prefix + "rho", priors.arc_rho_prior(*self.rho_concentration), (dim,)),
            "amplitude": priors.sample(prefix + "amplitude", priors.amplitude_prior()),
            **self.base.profile_params(prefix),
        }
