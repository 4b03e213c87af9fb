"""What a benchmark problem is: :class:`Problem` (a box-bounded test function with its known optimum) and
:class:`ConditionalProblem` (a tree-structured space), and the helpers the problem modules share.

``Problem`` is a ``NamedTuple`` and therefore a JAX pytree whose leaves include a ``str``: close
over a problem (or over ``problem.fn``) inside jitted code rather than passing it as an argument.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbo import precision
from jbo.spaces import Real, Space

__all__ = ["Problem", "ConditionalProblem"]


class Problem(NamedTuple):
    """A minimisation problem in user units.

    Attributes:
      name: registry name.
      fn: pure, vectorised ``(n, dim) -> (n,)`` (any leading axes work), in the dtype of its
        input. It is already wrapped in ``jax.jit`` (one shared object per function, so its
        compile cache is shared) and composes with ``jit``, ``vmap`` and ``grad``.
      bounds: ``(dim, 2)`` array of ``[low, high]`` per coordinate.
      optimum: the known global minimum value.
      argmins: ``(k, dim)`` known global minimisers (see the module docstring for problems with
        very many).
    """

    name: str
    fn: Callable
    bounds: np.ndarray
    optimum: float
    argmins: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.bounds.shape[0])

    @property
    def names(self) -> list[str]:
        """Coordinate names used by :meth:`space` and :meth:`evaluate`: ``x1 ... x{dim}``."""
        return [f"x{i + 1}" for i in range(self.dim)]

    def space(self) -> "Space":
        """The search space ``Space({"x1": Real(low, high), ...})`` of this problem."""
        return Space(
            {n: Real(float(lo), float(hi)) for n, (lo, hi) in zip(self.names, self.bounds)}
        )

    def __call__(self, x):
        """``fn`` on ``jnp.atleast_2d(x)``: a single point ``(dim,)`` gives shape ``(1,)``; in float64 for host
        values (NumPy arrays, numbers), in the dtype of JAX arrays."""
        if isinstance(x, jax.Array):
            return self.fn(jnp.atleast_2d(x))
        with precision.scope():
            return self.fn(jnp.atleast_2d(jnp.asarray(x, jnp.float64)))

    def evaluate(self, config: Mapping[str, float]):
        """Value at a configuration ``{"x1": ..., "x2": ...}`` in user units.

        A Python float for Python numbers; for JAX values (inside ``jit``, e.g. the configurations
        :func:`jbo.minimize_many` decodes) a JAX scalar, so the same method serves both drivers.
        """
        names = self.names
        missing = [n for n in names if n not in config]
        extra = sorted(set(config) - set(names))
        if missing or extra:
            raise ValueError(
                f"{self.name} expects keys {names}; missing {missing}, unexpected {extra}"
            )
        if any(isinstance(config[n], jax.Array) for n in names):
            return self.fn(jnp.stack([jnp.asarray(config[n]) for n in names])[None])[0]
        x = np.asarray([[float(config[n]) for n in names]])
        with precision.scope():  # a benchmark's value in float64, whatever the caller's JAX precision
            return float(self.fn(jnp.asarray(x))[0])


class ConditionalProblem(NamedTuple):
    """A minimisation problem over a conditional (tree-structured) :class:`~jbo.spaces.Space`.

    A box :class:`Problem` is a vectorised function of a point; here a configuration holds only
    its active parameters, so the objective is a function of a configuration.

    Attributes:
      name: registry name.
      search_space: the conditional space (see :meth:`space`).
      objective: ``config -> float`` on a validated configuration, in user units.
      optimum: the known global minimum value.
      best_config: a global minimiser (its active parameters only).
      jax_objective: the objective on JAX values (traceable), taking every parameter as
        :meth:`jbo.spaces.Space.decode_arrays` gives them; ``None`` if the problem has none.
    """

    name: str
    search_space: "Space"
    objective: Callable[[dict], float]
    optimum: float
    best_config: dict
    jax_objective: Callable | None = None

    @property
    def dim(self) -> int:
        """Number of parameters of the space (active or not)."""
        return len(self.search_space.names)

    @property
    def n_leaves(self) -> int:
        """Number of leaves (decision paths) of the space."""
        return len(self.search_space.leaves())

    def space(self) -> "Space":
        """The conditional search space."""
        return self.search_space

    def evaluate(self, config: Mapping):
        """Value at a configuration holding exactly its active parameters, as a Python float.

        Raises ``ValueError`` naming the parameter for a missing active or a stray inactive one.
        For JAX values (inside ``jit``: every parameter, as :func:`jbo.minimize_many` decodes them)
        it is :attr:`jax_objective`, a JAX scalar.
        """
        if any(isinstance(v, jax.Array) for v in config.values()):
            if self.jax_objective is None:
                raise ValueError(f"{self.name} has no JAX objective: it runs through jbo.minimize, not minimize_many")
            return self.jax_objective(config)
        return float(self.objective(self.search_space.validate(config)))


def _fixed_dim(name: str, native: int, dim) -> None:
    if dim is not None and _as_int(name, dim) != native:
        raise ValueError(f"{name} is a fixed-dimension problem (dim={native}); got dim={dim}")


def _as_int(name: str, dim) -> int:
    if isinstance(dim, bool):
        raise TypeError(f"{name}: dim must be an int, got {dim!r}")
    try:
        return operator.index(dim)
    except TypeError:
        raise TypeError(f"{name}: dim must be an int, got {dim!r}") from None


def _var_dim(name: str, dim, default: int, minimum: int = 1, multiple: int = 1) -> int:
    d = default if dim is None else _as_int(name, dim)
    if d < minimum or d % multiple:
        what = f"a multiple of {multiple} " if multiple > 1 else ""
        raise ValueError(f"{name}: dim must be {what}>= {minimum}, got {d}")
    return d


def _box(low, high, dim: int) -> np.ndarray:
    return np.tile(np.asarray([[low, high]], dtype=np.float64), (dim, 1))
