"""Search spaces: encode configurations to the unit cube ``[0, 1]^D`` and decode them back.

Every model in jbo works in the unit cube; user units (log scales, integers, categories)
exist only at this edge. Encoding and decoding to Python values are plain NumPy (they run once
per suggestion, outside jitted code); the functions called on encoded points inside jitted code
(``Space.relevance``, ``Space.leaf_index``, ``Space.tree_features``, ``Space.round_trip``,
``Space.decode_arrays``, ``Space.active_arrays``) also take JAX arrays and tracers, and import
JAX only then.

Package layout
--------------
:mod:`jbo.spaces.parameters`
    ``Real``, ``Integer``, ``Categorical`` (and ``PARAM_TYPES``): one parameter's domain, checks
    and encoding; its docstring describes each type's encoding.
:mod:`jbo.spaces.conditions`
    The ``when=`` conditions: their checks, parents-first order, and the static structures
    ``TreeNode`` and ``TreeStructure`` of Jenatton et al.'s tree-structured GP.
:mod:`jbo.spaces.space`
    ``Space``: composes the parameters (validate, encode/decode, round trip, traceable arrays,
    relevance mask, leaves, tree structure and features, random configurations,
    ``to_dict``/``from_dict``).

Errors
------
Every error in a definition or a configuration is a ``ValueError``; errors raised by
``Space`` name the parameter (``"parameter 'lr': value 2.0 out of bounds [0.0, 1.0]"``).
A parameter object does not know its own name, so ``Real(2, 1)`` itself raises
``"low (2.0) must be < high (1.0)"``; ``Space.from_dict`` prefixes such errors with the name.
"""

from jbo.spaces.conditions import TreeNode, TreeStructure
from jbo.spaces.parameters import PARAM_TYPES, Categorical, Integer, Real
from jbo.spaces.space import Space, snap

__all__ = ["Real", "Integer", "Categorical", "Space", "snap", "PARAM_TYPES", "TreeNode", "TreeStructure"]
