"""Input warping: a kernel of warped inputs, ``k(w(x1), w(x2))``."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jbo import priors
from jbo.kernels.base import Kernel


def _log1mexp(z):
    r""":math:`\log(1 - e^z)` for :math:`z < 0`, accurate at both ends (Mächler, 2012: ``expm1`` above
    :math:`-\log 2`, ``log1p`` below)."""
    return jnp.where(z > -0.6931471805599453, jnp.log(-jnp.expm1(jnp.minimum(z, -1e-300))),
                     jnp.log1p(-jnp.exp(jnp.minimum(z, -0.6931471805599453))))


def kumaraswamy_cdf(x, a, b, eps=1e-6):
    r"""Kumaraswamy CDF :math:`w(x) = 1 - (1 - x^a)^b` on ``[0, 1]`` (Snoek et al., 2014, eq. 3).

    Computed as :math:`-\operatorname{expm1}(b \log(1 - e^{a \log x}))`: near :math:`x = 1` (the
    sphere BOCK's cube corners lie on) and near :math:`w = 0` the direct form subtracts numbers close
    to one and loses digits. Inputs are clipped to ``[eps, 1 - eps]`` so that gradients in ``a``,
    ``b`` stay finite at the cube's faces.
    """
    x = jnp.clip(x, eps, 1.0 - eps)
    return -jnp.expm1(b * _log1mexp(a * jnp.log(x)))


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
