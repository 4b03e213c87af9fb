r"""Covariance functions as pure functions ``k(params, x1, x2) -> scalar``.

A :class:`Kernel` is a small immutable object that knows three things: how to evaluate one pair of
points given a params PyTree, how to lift that to a Gram matrix (``vmap`` twice), and how to draw
its params inside a numpyro model (``sample_params``), which is where its priors live. Kernels
compose: ``k1 + k2``, ``k1 * k2`` and ``k * 2.0`` are kernels whose params are the tuple / the params
of their parts, and :class:`KumaraswamyWarp` wraps any kernel with an input transformation.
:class:`Arc` is the arc kernel for conditional spaces (Swersky et al., 2013): any of the profiles
below on the distance between cylindrical embeddings that know which dimensions are relevant.

Stationary kernels act on the ARD-scaled Euclidean distance
:math:`r = \lVert (x_1 - x_2) / \ell \rVert_2` with amplitude (signal variance) :math:`\sigma^2`:

* Matérn-5/2: :math:`\sigma^2 (1 + \sqrt5 r + \tfrac53 r^2) e^{-\sqrt5 r}`
* squared exponential: :math:`\sigma^2 e^{-r^2/2}`
* rational quadratic: :math:`\sigma^2 (1 + r^2 / (2\alpha))^{-\alpha}`
"""

from __future__ import annotations

import abc
import dataclasses

import jax
import jax.numpy as jnp
import numpyro.distributions as dist

from jbo import priors


def _matmul(a, b):
    """``a @ b`` in full float32 precision even where XLA would use TF32 (Hopper/Ampere GPUs run
    float32 products in TF32 by default: Gram matrices came out 5e-4 away from float64 ones).
    On CPUs and in float64 it is the plain product."""
    return jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)


def safe_sqrt(x):
    """``sqrt`` with a zero (not NaN) gradient at 0, for distances between identical points."""
    positive = x > 0.0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, x, 1.0)), 0.0)


class Kernel(abc.ABC):
    """Base class: subclasses implement ``__call__(params, x1, x2)`` and ``sample_params``."""

    @abc.abstractmethod
    def __call__(self, params, x1, x2):
        """``k(x1, x2)`` for two points ``(D,)``."""

    @abc.abstractmethod
    def sample_params(self, dim: int, prefix: str = ""):
        """Draw this kernel's params inside a numpyro model (site names start with ``prefix``)."""

    def gram(self, params, x1, x2):
        """Gram matrix ``K[i, j] = k(x1[i], x2[j])`` of shape ``(n1, n2)``."""
        row = jax.vmap(lambda a, b: self(params, a, b), in_axes=(None, 0))
        return jax.vmap(row, in_axes=(0, None))(x1, x2)

    def diag(self, params, x):
        """``k(x[i], x[i])`` for each row, shape ``(n,)``."""
        return jax.vmap(lambda a: self(params, a, a))(x)

    def __add__(self, other):
        return Sum(self, _as_kernel(other))

    def __radd__(self, other):
        return Sum(_as_kernel(other), self)

    def __mul__(self, other):
        if isinstance(other, (int, float)):
            return Scaled(self, float(other))
        return Product(self, _as_kernel(other))

    __rmul__ = __mul__


def _as_kernel(k):
    if isinstance(k, Kernel):
        return k
    if isinstance(k, (int, float)):
        return Constant(float(k))
    raise TypeError(f"cannot combine a kernel with {type(k).__name__}")


@dataclasses.dataclass(frozen=True)
class Stationary(Kernel):
    """A stationary kernel ``amplitude * profile(r^2)`` on the ARD-scaled squared distance.

    Params: ``{"lengthscale": (D,) or (), "amplitude": ()}``.

    Attributes:
      ard: one lengthscale per dimension (``True``) or a single shared one.
    """

    ard: bool = True

    @abc.abstractmethod
    def profile(self, params, r2):
        """The correlation as a function of the scaled squared distance ``r2``."""

    def __call__(self, params, x1, x2):
        r2 = jnp.sum(((x1 - x2) / params["lengthscale"]) ** 2)
        return params["amplitude"] * self.profile(params, r2)

    def gram(self, params, x1, x2):
        # ||a - b||^2 = |a|^2 + |b|^2 - 2 a.b on the scaled inputs: one matrix product instead of
        # N1 * N2 * D subtractions and divisions, 4x faster with its gradient on a CPU (N = 256). The
        # cancellation error is ~eps * |a|^2, far below any lengthscale a GP would fit in the cube.
        a, b = x1 / params["lengthscale"], x2 / params["lengthscale"]
        r2 = jnp.sum(a**2, -1)[:, None] + jnp.sum(b**2, -1)[None, :] - 2.0 * _matmul(a, b.T)
        return params["amplitude"] * self.profile(params, jnp.maximum(r2, 0.0))

    def diag(self, params, x):
        return jnp.broadcast_to(params["amplitude"] * self.profile(params, jnp.zeros((), x.dtype)), x.shape[:1])

    def sample_params(self, dim, prefix=""):
        shape = (dim,) if self.ard else ()
        return {
            "lengthscale": priors.sample(prefix + "lengthscale", priors.lengthscale_prior(dim), shape),
            "amplitude": priors.sample(prefix + "amplitude", priors.amplitude_prior()),
            **self.profile_params(prefix),
        }

    def profile_params(self, prefix=""):
        """Draw the params ``profile`` reads besides the distance (none by default)."""
        return {}


class Matern52(Stationary):
    """Matérn-5/2 (the default of Spearmint and of the DNGO/BOCK papers' GP baselines)."""

    def profile(self, params, r2):
        r = jnp.sqrt(5.0) * safe_sqrt(r2)
        return (1.0 + r + r**2 / 3.0) * jnp.exp(-r)


class SquaredExponential(Stationary):
    """Squared exponential (RBF)."""

    def profile(self, params, r2):
        return jnp.exp(-0.5 * r2)


@dataclasses.dataclass(frozen=True)
class RationalQuadratic(Stationary):
    """Rational quadratic, a scale mixture of squared exponentials; adds the param ``alpha``."""

    def profile(self, params, r2):
        alpha = params["alpha"]
        return (1.0 + r2 / (2.0 * alpha)) ** (-alpha)

    def profile_params(self, prefix=""):
        return {"alpha": priors.sample(prefix + "alpha", dist.LogNormal(0.0, 1.0))}


@dataclasses.dataclass(frozen=True)
class Constant(Kernel):
    """``k(x1, x2) = value`` (no params)."""

    value: float = 1.0

    def __call__(self, params, x1, x2):
        return jnp.asarray(self.value)

    def sample_params(self, dim, prefix=""):
        return {}


@dataclasses.dataclass(frozen=True)
class Scaled(Kernel):
    """``factor * k`` for a fixed positive float ``factor``; params are those of ``k``."""

    kernel: Kernel
    factor: float

    def __call__(self, params, x1, x2):
        return self.factor * self.kernel(params, x1, x2)

    def sample_params(self, dim, prefix=""):
        return self.kernel.sample_params(dim, prefix)


@dataclasses.dataclass(frozen=True)
class Sum(Kernel):
    """``k1 + k2``; params ``(params1, params2)``, sites prefixed ``sum0/`` and ``sum1/``."""

    k1: Kernel
    k2: Kernel

    def __call__(self, params, x1, x2):
        return self.k1(params[0], x1, x2) + self.k2(params[1], x1, x2)

    def sample_params(self, dim, prefix=""):
        return (self.k1.sample_params(dim, prefix + "sum0/"), self.k2.sample_params(dim, prefix + "sum1/"))


@dataclasses.dataclass(frozen=True)
class Product(Kernel):
    """``k1 * k2``; params ``(params1, params2)``, sites prefixed ``prod0/`` and ``prod1/``."""

    k1: Kernel
    k2: Kernel

    def __call__(self, params, x1, x2):
        return self.k1(params[0], x1, x2) * self.k2(params[1], x1, x2)

    def sample_params(self, dim, prefix=""):
        return (self.k1.sample_params(dim, prefix + "prod0/"), self.k2.sample_params(dim, prefix + "prod1/"))


def kumaraswamy_cdf(x, a, b, eps=1e-6):
    r"""Kumaraswamy CDF :math:`w(x) = 1 - (1 - x^a)^b` on ``[0, 1]`` (Snoek et al., 2014, eq. 3).

    Inputs are clipped to ``[eps, 1 - eps]`` so that gradients in ``a``, ``b`` stay finite at the
    cube's faces.
    """
    x = jnp.clip(x, eps, 1.0 - eps)
    return 1.0 - (1.0 - x**a) ** b


@dataclasses.dataclass(frozen=True)
class KumaraswamyWarp(Kernel):
    """Input warping (Snoek et al., 2014): ``k(w(x1), w(x2))`` with a Kumaraswamy CDF per dimension.

    Params: ``{"warp_a": (D,), "warp_b": (D,), "base": params of the wrapped kernel}``.
    """

    kernel: Kernel

    def __call__(self, params, x1, x2):
        warp = lambda x: kumaraswamy_cdf(x, params["warp_a"], params["warp_b"])
        return self.kernel(params["base"], warp(x1), warp(x2))

    def sample_params(self, dim, prefix=""):
        return {
            "warp_a": priors.sample(prefix + "warp_a", priors.warp_prior(), (dim,)),
            "warp_b": priors.sample(prefix + "warp_b", priors.warp_prior(), (dim,)),
            "base": self.kernel.sample_params(dim, prefix),
        }


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
        r2 = jnp.sum(w2 * d1**2, -1)[:, None] + jnp.sum(w2 * d2**2, -1)[None, :] - 2.0 * _matmul(g1, g2.T)
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


KERNELS = {"matern52": Matern52, "se": SquaredExponential, "rq": RationalQuadratic}


def make_kernel(name: str = "matern52", ard: bool = True, warp: bool = False) -> Kernel:
    """Build a kernel by name (``matern52``, ``se``, ``rq``), optionally Kumaraswamy-warped."""
    if name not in KERNELS:
        raise ValueError(f"unknown kernel {name!r}; valid choices: {sorted(KERNELS)}")
    kernel = KERNELS[name](ard=ard)
    return KumaraswamyWarp(kernel) if warp else kernel


def make_arc_kernel(name: str = "matern52", relevance_fn=all_relevant) -> Arc:
    """The arc kernel on the profile of kernel ``name`` (``matern52``, ``se``, ``rq``)."""
    if name not in KERNELS:
        raise ValueError(f"unknown kernel {name!r}; valid choices: {sorted(KERNELS)}")
    return Arc(KERNELS[name](), relevance_fn)
