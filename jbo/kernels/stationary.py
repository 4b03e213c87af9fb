r"""Stationary kernels: functions of the difference of two points.

The distance kernels act on the ARD-scaled squared distance :math:`r^2 = \lVert (x_1 - x_2) / \ell \rVert^2`
with amplitude (signal variance) :math:`\sigma^2`:

* Matérn-5/2: :math:`\sigma^2 (1 + \sqrt5 r + \tfrac53 r^2) e^{-\sqrt5 r}`
* squared exponential: :math:`\sigma^2 e^{-r^2/2}`
* rational quadratic: :math:`\sigma^2 (1 + r^2 / (2\alpha))^{-\alpha}`

and the periodic kernel on the per-dimension differences (MacKay 1998; Rasmussen & Williams 2006, eq. 4.31):
:math:`\sigma^2 \exp(-2 \sum_d \sin^2(\pi (x_{1d} - x_{2d}) / p_d) / \ell_d^2)`.
"""

from __future__ import annotations

import abc
import dataclasses

import jax.numpy as jnp
import numpyro.distributions as dist

from jbo import checks, priors
from jbo.kernels.base import Kernel, matmul, safe_sqrt


@dataclasses.dataclass(frozen=True)
class Stationary(Kernel):
    """A stationary kernel ``amplitude * profile(r^2)`` on the ARD-scaled squared distance.

    A new distance kernel subclasses this and writes :meth:`profile` (and :meth:`profile_params` if its
    profile has params of its own); the Gram matrix, the ARD lengthscales and their priors come with it.

    Params: ``{"lengthscale": (D,) or (), "amplitude": ()}``.

    Attributes:
      ard: one lengthscale per dimension (``True``) or a single shared one.
    """

    ard: bool = True

    def __post_init__(self):
        checks.boolean("ard", self.ard)

    @abc.abstractmethod
    def profile(self, params, r2):
        """The correlation as a function of the scaled squared distance ``r2``."""

    def __call__(self, params, x1, x2):
        r2 = jnp.sum(((x1 - x2) / params["lengthscale"]) ** 2)
        return params["amplitude"] * self.profile(params, r2)

    def gram(self, params, x1, x2):
        # ||a - b||^2 = |a|^2 + |b|^2 - 2 a.b on the scaled inputs: one matrix product instead of
        # N1 * N2 * D subtractions and divisions. The cancellation error is ~eps * |a|^2, far below
        # any lengthscale a GP would fit in the cube.
        a, b = x1 / params["lengthscale"], x2 / params["lengthscale"]
        r2 = jnp.sum(a**2, -1)[:, None] + jnp.sum(b**2, -1)[None, :] - 2.0 * matmul(a, b.T)
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


@dataclasses.dataclass(frozen=True)
class Matern52(Stationary):
    """Matérn-5/2 (the default of Spearmint and of the DNGO/BOCK papers' GP baselines)."""

    def profile(self, params, r2):
        r = jnp.sqrt(5.0) * safe_sqrt(r2)
        return (1.0 + r + r**2 / 3.0) * jnp.exp(-r)


@dataclasses.dataclass(frozen=True)
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
class Periodic(Kernel):
    r"""The periodic kernel (MacKay 1998; Rasmussen & Williams 2006, eq. 4.31), one period per dimension:

    .. math::
       k(x_1, x_2) = \sigma^2 \exp\Big(-2 \sum_d \frac{\sin^2(\pi (x_{1d} - x_{2d}) / p_d)}{\ell_d^2}\Big).

    Params: ``{"amplitude": (), "lengthscale": (D,) or (), "period": (D,) or ()}``, priors
    :func:`jbo.priors.amplitude_prior`, :func:`jbo.priors.periodic_lengthscale_prior` and
    :func:`jbo.priors.period_prior` (periods in unit-cube widths). Multiply by a distance kernel for a
    locally periodic function.

    Attributes:
      ard: a lengthscale and a period per dimension (``True``) or one of each shared by all.
    """

    ard: bool = True

    def __post_init__(self):
        checks.boolean("ard", self.ard)

    def __call__(self, params, x1, x2):
        s = jnp.sin(jnp.pi * (x1 - x2) / params["period"]) / params["lengthscale"]
        return params["amplitude"] * jnp.exp(-2.0 * jnp.sum(s**2))

    def diag(self, params, x):
        return jnp.broadcast_to(params["amplitude"], x.shape[:1]).astype(x.dtype)

    def sample_params(self, dim, prefix=""):
        shape = (dim,) if self.ard else ()
        return {
            "amplitude": priors.sample(prefix + "amplitude", priors.amplitude_prior()),
            "lengthscale": priors.sample(prefix + "periodic_lengthscale", priors.periodic_lengthscale_prior(), shape),
            "period": priors.sample(prefix + "period", priors.period_prior(), shape),
        }
