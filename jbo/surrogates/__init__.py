"""Surrogates: probabilistic models as tuples of pure functions (:class:`jbo.types.Surrogate`).

* :func:`exact_gp`: exact GP regression with a constant mean on any kernel (:mod:`.gp`);
* :func:`blr_surrogate`: Bayesian linear regression on a basis, DNGO's output layer (:mod:`.blr`);
* :func:`bock_surrogate`: BOCK's GP over the cylindrical kernel with the centre rule (:mod:`.cylindrical`);
* :func:`tree_gp`: Jenatton et al.'s tree-structured GP over per-leaf blocks of a conditional space (:mod:`.tree`).

The models of :mod:`jbo.models` fit them (MAP, slice sampling or NUTS) and maximise an acquisition over
them; a surrogate of your own runs through the same machinery as :class:`jbo.models.SurrogateModel`.
"""

from jbo.surrogates.blr import blr_surrogate
from jbo.surrogates.cylindrical import bock_surrogate
from jbo.surrogates.gp import GPPosterior, exact_gp
from jbo.surrogates.tree import tree_gp

__all__ = ["exact_gp", "GPPosterior", "blr_surrogate", "bock_surrogate", "tree_gp"]
