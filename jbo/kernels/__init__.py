r"""Covariance functions as values: ``k(params, x1, x2) -> scalar``, composable, with their priors.

A :class:`Kernel` is a small frozen dataclass that knows three things: how to evaluate one pair of
points given a params PyTree, how to lift that to a Gram matrix (``vmap`` twice, or a closed form), and
how to draw its params inside a numpyro model (:meth:`Kernel.sample_params`), which is where its priors
live (:mod:`jbo.priors`). Kernels compose (tinygp-style): ``k1 + k2``, ``k1 * k2`` and ``2.0 * k`` are
kernels whose params are the tuple of their parts' params, :class:`KumaraswamyWarp` wraps any kernel
with an input warping, and ``ard=`` gives a stationary or dot-product kernel one scale per dimension::

    kernel = jbo.kernels.Matern52() + jbo.kernels.Linear()
    model = jbo.models.GP(kernel=kernel)

What is here:

* distance kernels (:mod:`.stationary`): :class:`Matern52`, :class:`SquaredExponential`,
  :class:`RationalQuadratic`, and :class:`Periodic`; a new distance kernel subclasses :class:`Stationary`;
* dot-product kernels (:mod:`.dot`): :class:`Linear`, :class:`Polynomial`;
* :class:`Constant` (a learned or fixed offset) and the algebra (:class:`Sum`, :class:`Product`,
  :class:`Scaled`);
* :class:`KumaraswamyWarp` (Snoek et al. 2014); :class:`Arc`, the arc kernel of conditional spaces
  (Swersky et al. 2013); :class:`Cylindrical`, BOCK's kernel (Oh et al. 2018), with its transform.

A kernel is recorded in a run's journal as an expression (:meth:`Kernel.to_record`) and read back by
:func:`from_record`. :data:`KERNELS` names the kernels a model accepts by name (``kernel="matern52"``);
it cannot be changed: a kernel of your own is passed as an object.
"""

from __future__ import annotations

from jbo import records
from jbo.kernels.arc import Arc, all_relevant, arc_distances, arc_embedding
from jbo.kernels.base import Constant, Kernel, Product, Scaled, Sum, as_kernel, matmul, safe_sqrt
from jbo.kernels.cylindrical import Cylindrical, cube_to_ball, from_cylinder, to_cylinder
from jbo.kernels.dot import Linear, Polynomial
from jbo.kernels.stationary import Matern52, Periodic, RationalQuadratic, SquaredExponential, Stationary
from jbo.kernels.warp import KumaraswamyWarp, kumaraswamy_cdf
from jbo.types import Names

__all__ = ["Kernel", "Stationary", "Matern52", "SquaredExponential", "RationalQuadratic", "Periodic", "Linear",
           "Polynomial", "Constant", "Sum", "Product", "Scaled", "KumaraswamyWarp", "Arc", "Cylindrical", "KERNELS",
           "make_kernel", "make_arc_kernel", "from_record", "check", "resolve", "kumaraswamy_cdf", "safe_sqrt", "as_kernel",
           "arc_embedding", "arc_distances", "all_relevant", "to_cylinder", "from_cylinder", "cube_to_ball", "matmul"]


KERNELS = Names("jbo.kernels.KERNELS", {"matern52": Matern52, "se": SquaredExponential, "rq": RationalQuadratic},
                 "pass a kernel object instead of a name, e.g. jbo.models.GP(kernel=jbo.kernels.Matern52() + "
                 "jbo.kernels.Linear())")


def make_kernel(name: str = "matern52", ard: bool = True, warp: bool = False) -> Kernel:
    """Build a kernel by name (``matern52``, ``se``, ``rq``), optionally Kumaraswamy-warped."""
    if name not in KERNELS:
        raise ValueError(f"unknown kernel {name!r}; valid choices: {sorted(KERNELS)}")
    kernel = KERNELS[name](ard=ard)
    return KumaraswamyWarp(kernel) if warp else kernel


def check(kernel, field: str = "kernel") -> None:
    """``ValueError`` naming ``field`` unless ``kernel`` is a name of :data:`KERNELS` or a hashable :class:`Kernel`."""
    if isinstance(kernel, str):
        if kernel not in KERNELS:
            raise ValueError(f"unknown {field} {kernel!r}; valid choices: {sorted(KERNELS)} or a jbo.kernels.Kernel")
    elif isinstance(kernel, Kernel):
        try:
            hash(kernel)
        except TypeError:
            raise ValueError(f"{field} must be hashable (a frozen dataclass): {kernel!r}") from None
    else:
        raise ValueError(f"{field} must be one of {sorted(KERNELS)} or a jbo.kernels.Kernel, got {kernel!r}")


def resolve(kernel: str | Kernel, ard: bool = True, warp: bool = False) -> Kernel:
    """The kernel object a model's ``kernel``, ``ard`` and ``warp`` options stand for (a name is
    :func:`make_kernel`'s; an object is itself, Kumaraswamy-warped with ``warp``)."""
    if isinstance(kernel, str):
        return make_kernel(kernel, ard=ard, warp=warp)
    return KumaraswamyWarp(kernel) if warp else kernel


def make_arc_kernel(name: str | Stationary = "matern52", relevance_fn=all_relevant) -> Arc:
    """The arc kernel on the profile of kernel ``name`` (``matern52``, ``se``, ``rq``, or a
    :class:`Stationary` kernel object)."""
    if isinstance(name, Stationary):
        return Arc(name, relevance_fn)
    if name not in KERNELS:
        raise ValueError(f"unknown kernel {name!r}; valid choices: {sorted(KERNELS)}")
    return Arc(KERNELS[name](), relevance_fn)


def from_record(record) -> Kernel:
    """The kernel a :meth:`Kernel.to_record` expression (or a name of :data:`KERNELS`) stands for."""
    if isinstance(record, str):
        return make_kernel(record)
    kernel = records.from_record(record)
    if not isinstance(kernel, Kernel):
        raise ValueError(f"not a kernel expression: {record!r}")
    return kernel
