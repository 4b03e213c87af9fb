"""The kernel interface and the algebra that composes kernels: sums, products, fixed scales, constants."""

from __future__ import annotations

import abc
import dataclasses

import jax
import jax.numpy as jnp

from jbo import priors, records


def matmul(a, b):
    """``a @ b`` in full float32 precision even where XLA would use TF32 (Hopper/Ampere GPUs run
    float32 products in TF32 by default, which moves Gram matrices visibly away from float64 ones).
    On CPUs and in float64 it is the plain product."""
    return jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)


def safe_sqrt(x):
    """``sqrt`` with a zero (not NaN) gradient at 0, for distances between identical points."""
    positive = x > 0.0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, x, 1.0)), 0.0)


class Kernel(abc.ABC):
    """A covariance function ``k(params, x1, x2)`` of two points ``(D,)``, and the priors of its params.

    Subclasses are frozen dataclasses (hashable: a kernel is part of a compiled program's static
    configuration, and equal kernels share programs) implementing :meth:`__call__` and
    :meth:`sample_params`; :meth:`gram` and :meth:`diag` lift the pair function with ``vmap`` and may be
    overridden with a faster closed form. Kernels compose: ``k1 + k2``, ``k1 * k2`` and ``2.0 * k`` are
    kernels; :func:`jbo.kernels.from_record` reads back the expression :meth:`to_record` writes.
    """

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

    def to_record(self):
        """The kernel as a JSON expression (:mod:`jbo.records`): its class and fields, recursively."""
        return records.to_record(self)

    def __add__(self, other):
        return Sum(self, as_kernel(other))

    def __radd__(self, other):
        return Sum(as_kernel(other), self)

    def __mul__(self, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return Scaled(self, float(other))
        return Product(self, as_kernel(other))

    __rmul__ = __mul__


def as_kernel(k) -> Kernel:
    """``k`` itself if it is a kernel; a number is the fixed :class:`Constant` of that value."""
    if isinstance(k, Kernel):
        return k
    if isinstance(k, (int, float)) and not isinstance(k, bool):
        return Constant(float(k))
    raise TypeError(f"cannot combine a kernel with {type(k).__name__}")


@dataclasses.dataclass(frozen=True)
class Constant(Kernel):
    r"""``k(x_1, x_2) = c``: a constant offset of the function (a bias).

    Attributes:
      value: the constant ``c``; ``None`` (default): ``c`` is a hyperparameter, ``params =
        {"variance": ()}`` under :func:`jbo.priors.offset_prior`; a number: fixed, no params (what
        ``k + 1.0`` adds).
    """

    value: float | None = None

    def __post_init__(self):
        if self.value is not None and not (isinstance(self.value, (int, float)) and self.value >= 0):
            raise ValueError(f"value must be a number >= 0 or None, got {self.value!r}")

    def _c(self, params):
        return params["variance"] if self.value is None else jnp.asarray(self.value)

    def __call__(self, params, x1, x2):
        return self._c(params)

    def gram(self, params, x1, x2):
        return jnp.full((x1.shape[0], x2.shape[0]), self._c(params), x1.dtype)

    def diag(self, params, x):
        return jnp.full(x.shape[:1], self._c(params), x.dtype)

    def sample_params(self, dim, prefix=""):
        if self.value is not None:
            return {}
        return {"variance": priors.sample(prefix + "variance", priors.offset_prior())}


@dataclasses.dataclass(frozen=True)
class Scaled(Kernel):
    """``factor * k`` for a fixed positive float ``factor``; params are those of ``k``."""

    kernel: Kernel
    factor: float

    def __post_init__(self):
        if not self.factor > 0:
            raise ValueError(f"factor must be > 0 (a covariance stays positive semi-definite), got {self.factor!r}")

    def __call__(self, params, x1, x2):
        return self.factor * self.kernel(params, x1, x2)

    def gram(self, params, x1, x2):
        return self.factor * self.kernel.gram(params, x1, x2)

    def diag(self, params, x):
        return self.factor * self.kernel.diag(params, x)

    def sample_params(self, dim, prefix=""):
        return self.kernel.sample_params(dim, prefix)


@dataclasses.dataclass(frozen=True)
class Sum(Kernel):
    """``k1 + k2``; params ``(params1, params2)``, sites prefixed ``sum0/`` and ``sum1/``."""

    k1: Kernel
    k2: Kernel

    def __call__(self, params, x1, x2):
        return self.k1(params[0], x1, x2) + self.k2(params[1], x1, x2)

    def gram(self, params, x1, x2):
        return self.k1.gram(params[0], x1, x2) + self.k2.gram(params[1], x1, x2)

    def diag(self, params, x):
        return self.k1.diag(params[0], x) + self.k2.diag(params[1], x)

    def sample_params(self, dim, prefix=""):
        return (self.k1.sample_params(dim, prefix + "sum0/"), self.k2.sample_params(dim, prefix + "sum1/"))


@dataclasses.dataclass(frozen=True)
class Product(Kernel):
    """``k1 * k2``; params ``(params1, params2)``, sites prefixed ``prod0/`` and ``prod1/``."""

    k1: Kernel
    k2: Kernel

    def __call__(self, params, x1, x2):
        return self.k1(params[0], x1, x2) * self.k2(params[1], x1, x2)

    def gram(self, params, x1, x2):
        return self.k1.gram(params[0], x1, x2) * self.k2.gram(params[1], x1, x2)

    def diag(self, params, x):
        return self.k1.diag(params[0], x) * self.k2.diag(params[1], x)

    def sample_params(self, dim, prefix=""):
        return (self.k1.sample_params(dim, prefix + "prod0/"), self.k2.sample_params(dim, prefix + "prod1/"))
