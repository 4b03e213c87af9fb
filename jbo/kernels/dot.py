r"""Dot-product kernels on inputs centred in the unit cube: linear and polynomial trends.

With :math:`\tilde x = x - c` (``c = 1/2`` by default, the centre of the cube, so that the prior is
symmetric over it) and per-dimension slope variances :math:`v_d`,

* linear: :math:`k(x_1, x_2) = \sum_d v_d \tilde x_{1d} \tilde x_{2d}` (Bayesian linear regression
  through the centre: Rasmussen & Williams 2006, §2.1 and eq. 4.22);
* polynomial: :math:`k(x_1, x_2) = (b + \sum_d v_d \tilde x_{1d} \tilde x_{2d})^P` (R&W eq. 4.22 with an
  offset :math:`b`).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jbo import checks, priors
from jbo.kernels.base import Kernel, matmul


def _check(kernel) -> None:
    checks.boolean("ard", kernel.ard)
    if not isinstance(kernel.centre, (int, float)) or isinstance(kernel.centre, bool):
        raise ValueError(f"centre must be a number, got {kernel.centre!r}")


def _dot(params, centre, x1, x2):
    """``Σ_d v_d (x1_d - c)(x2_d - c)`` for every pair of rows."""
    return matmul((x1 - centre) * params["variance"], (x2 - centre).T)


def _slope_variances(dim, ard, prefix):
    return priors.sample(prefix + "variance", priors.slope_variance_prior(), (dim,) if ard else ())


@dataclasses.dataclass(frozen=True)
class Linear(Kernel):
    """The linear kernel ``Σ_d v_d (x1_d - c)(x2_d - c)``; params ``{"variance": (D,) or ()}``.

    Attributes:
      ard: a slope variance per dimension (``True``) or one shared.
      centre: where every slope's line is anchored in the unit cube (a fixed value, not a param).
    """

    ard: bool = True
    centre: float = 0.5

    def __post_init__(self):
        _check(self)

    def __call__(self, params, x1, x2):
        return jnp.sum(params["variance"] * (x1 - self.centre) * (x2 - self.centre))

    def gram(self, params, x1, x2):
        return _dot(params, self.centre, x1, x2)

    def diag(self, params, x):
        return jnp.sum(params["variance"] * (x - self.centre) ** 2, axis=-1)

    def sample_params(self, dim, prefix=""):
        return {"variance": _slope_variances(dim, self.ard, prefix)}


@dataclasses.dataclass(frozen=True)
class Polynomial(Kernel):
    """The polynomial kernel ``(b + Σ_d v_d (x1_d - c)(x2_d - c))^degree``;
    params ``{"offset": (), "variance": (D,) or ()}``.

    Attributes:
      degree: the power ``P >= 1`` (static).
      ard: a variance per dimension (``True``) or one shared.
      centre: the anchor of the products in the unit cube (fixed).
    """

    degree: int = 2
    ard: bool = True
    centre: float = 0.5

    def __post_init__(self):
        _check(self)
        object.__setattr__(self, "degree", checks.integer("degree", self.degree, 1))

    def __call__(self, params, x1, x2):
        dot = jnp.sum(params["variance"] * (x1 - self.centre) * (x2 - self.centre))
        return (params["offset"] + dot) ** self.degree

    def gram(self, params, x1, x2):
        return (params["offset"] + _dot(params, self.centre, x1, x2)) ** self.degree

    def diag(self, params, x):
        return (params["offset"] + jnp.sum(params["variance"] * (x - self.centre) ** 2, axis=-1)) ** self.degree

    def sample_params(self, dim, prefix=""):
        return {"offset": priors.sample(prefix + "offset", priors.offset_prior()),
                "variance": _slope_variances(dim, self.ard, prefix)}
