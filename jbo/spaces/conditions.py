"""Conditional parameters: the ``when=`` rules of a :class:`~jbo.spaces.Space` and its tree structure.

Conditional parameters
----------------------
Every parameter takes ``when={"parent": [allowed values], ...}``: it is *active* only when every
listed parent is active and takes one of the allowed values. Parents must be ``Categorical`` or
``Integer`` parameters of the same space; they are the *decision* parameters (the inner nodes of
Jenatton et al. 2017, Fig. 1). A parent may itself be conditional, so the conditions form a tree
(more generally a DAG). A *leaf* is one full assignment of the active decision parameters; it
fixes the set of active parameters. The encoding stays one vector in ``[0, 1]^dim`` over all
parameters, inactive columns holding a fill value (0.5, or uniform noise: the "irrelevant
dimensions filled randomly" baseline of Swersky et al. 2014), and ``Space.relevance`` gives the
0/1 mask delta of Swersky et al. Sec. 2 from the decision columns alone, traceable by JAX.
``Space.tree`` gives the static structure of Jenatton's tree-structured GP (Sec. 2.1, 2.4).

This module checks and normalises the conditions of a space (``_build_conditions``: parents exist,
are decision parameters, the allowed values are in their domains, no cycle), orders the parameters
parents-first (``_topological_order``) and defines the static structures ``_Conditions`` (held by a
conditional ``Space``), ``TreeNode`` and ``TreeStructure`` (returned by ``Space.tree``). Enumerating
the leaves, the relevance mask and the tree features need the parameters' encodings and live on
``Space`` (:mod:`jbo.spaces.space`).
"""

from __future__ import annotations

import difflib
from typing import Any, NamedTuple

import numpy as np

from jbo.spaces.parameters import Categorical, Integer, _Param

__all__ = ["TreeNode", "TreeStructure"]

# Leaves are enumerated eagerly by tree() and friends; a decision parameter with a huge domain
# (an Integer 0..10**6 as a parent) would make that enumeration blow up.
_MAX_LEAVES = 100_000


class TreeNode(NamedTuple):
    """An inner node ``v`` of the tree with its random linear function ``c_v^T r_v`` (Jenatton et al. 2017, Sec. 2.4).

    Attributes:
      leaves: the leaves ``p`` whose path contains ``v``: ``z_p`` includes ``r_v`` iff ``p in leaves``.
      columns: encoded columns of the shared parameters attached to ``v`` (the varying part of
        ``r_v``), possibly ``()``.
      bias: ``True`` if ``r_v`` also holds a constant feature 1 (the scalar ``c_v`` of Sec. 2.1).
    """

    leaves: tuple[int, ...]
    columns: tuple[int, ...]
    bias: bool

    @property
    def width(self) -> int:
        """``d_v``, the length of ``r_v``."""
        return int(self.bias) + len(self.columns)


class TreeStructure(NamedTuple):
    """Static (hashable) structure of Jenatton et al.'s tree-structured GP; see :meth:`Space.tree`.

    Attributes:
      leaves: each leaf's decision assignment, as items sorted by name.
      leaf_columns: encoded columns that leaf ``p``'s own GP ``g_p`` sees.
      nodes: the inner nodes, in the order their features appear in :meth:`Space.tree_features`.
    """

    leaves: tuple[tuple[tuple[str, Any], ...], ...]
    leaf_columns: tuple[tuple[int, ...], ...]
    nodes: tuple[TreeNode, ...]

    @property
    def n_leaves(self) -> int:
        return len(self.leaves)

    @property
    def feature_dim(self) -> int:
        """``d = sum_v d_v``, the length of ``z_p`` and of ``c``."""
        return sum(node.width for node in self.nodes)

    def feature_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """``(d,)`` column of each feature (``-1``: the constant 1 of a node's bias) and the ``(P, d)`` bool
        table of the features on each leaf's path; nodes in order, each node's bias before its columns."""
        columns, on_path = [], []
        for node in self.nodes:
            on = np.isin(np.arange(self.n_leaves), node.leaves)
            for c in ((-1,) if node.bias else ()) + tuple(node.columns):
                columns.append(c)
                on_path.append(on)
        on_path = np.stack(on_path, axis=1) if on_path else np.zeros((self.n_leaves, 0), bool)
        return np.asarray(columns, np.int64), on_path

    def features(self, x, leaf, xp=np):
        """Jenatton et al.'s features :math:`z_p(x) = [r_v(x)]_v` (Sec. 2.4), zero on the nodes off leaf
        ``p``'s path, so that ``c^T z`` is the inner-node term of the row's leaf.

        Args:
          x: ``(..., D)`` encoded points; leaf: ``(...)`` (or scalar) integer leaf of each row.
          xp: ``numpy``, or ``jax.numpy`` inside traced code.
        Returns:
          ``(..., d)``, in the dtype of ``x``.
        """
        columns, on_path = self.feature_tables()
        values = xp.where(xp.asarray(columns) >= 0, x[..., np.maximum(columns, 0)], xp.ones((), x.dtype))
        on = xp.asarray(on_path)[xp.broadcast_to(xp.asarray(leaf), x.shape[:-1])]
        return xp.where(on, values, xp.zeros((), x.dtype))


class _Conditions(NamedTuple):
    """The static condition structure of a conditional space.

    Attributes:
      order: parameter names, parents before children (definition order where free).
      rules: name -> ``((parent, allowed codes), ...)``; a code is the position of a value in
        the parent's domain (choice index, or ``value - low`` for an Integer).
      decisions: the parameters that are a parent of some parameter, in definition order.
    """

    order: tuple[str, ...]
    rules: dict
    decisions: tuple[str, ...]



def _fmt_rule(when: tuple) -> str:
    return " and ".join(f"{parent} in {list(values)!r}" for parent, values in when)


def _build_conditions(params: dict[str, _Param]) -> tuple[dict[str, _Param], _Conditions]:
    """Check the conditions of a space and normalise them (``ValueError`` naming the parameter).

    Returns the parameters with canonical conditions (parents in definition order, allowed values
    normalised, deduplicated, in domain order) and the static structure.
    """
    names = list(params)
    position = {n: i for i, n in enumerate(names)}
    rules: dict[str, tuple] = {}
    normalised: dict[str, _Param] = {}
    for name, p in params.items():
        entries = []
        for parent, values in p.when:
            if parent not in params:
                close = difflib.get_close_matches(parent, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; valid parameters: {names}"
                raise ValueError(f"parameter {name!r}: condition on unknown parameter {parent!r}{hint}")
            q = params[parent]
            if not isinstance(q, (Categorical, Integer)):
                raise ValueError(
                    f"parameter {name!r}: condition on {parent!r}, a {type(q).__name__}; a parent must "
                    f"be a Categorical or Integer (decision) parameter"
                )
            if len(values) == 0:
                raise ValueError(f"parameter {name!r}: when[{parent!r}] lists no allowed value")
            codes = set()
            for v in values:
                try:
                    codes.add(q._code(v))
                except ValueError as e:
                    raise ValueError(f"parameter {name!r}: when[{parent!r}]: {e}") from None
            entries.append((parent, tuple(sorted(codes))))
        entries.sort(key=lambda e: position[e[0]])
        rules[name] = tuple(entries)
        normalised[name] = p._with_when(
            {parent: [params[parent]._value_of_code(c) for c in codes] for parent, codes in entries}
        ) if entries else p
    order = _topological_order(names, rules)
    parents = {parent for entries in rules.values() for parent, _ in entries}
    decisions = tuple(n for n in names if n in parents)
    return normalised, _Conditions(order, rules, decisions)


def _topological_order(names: list[str], rules: dict) -> tuple[str, ...]:
    """Parents before children, definition order where free; ``ValueError`` naming a cycle."""
    placed: set = set()
    order: list[str] = []
    remaining = list(names)
    while remaining:
        ready = next((n for n in remaining if all(parent in placed for parent, _ in rules[n])), None)
        if ready is None:
            # every remaining parameter waits on another remaining one: follow parents to a cycle
            path = [remaining[0]]
            while True:
                nxt = next(parent for parent, _ in rules[path[-1]] if parent not in placed)
                if nxt in path:
                    cycle = path[path.index(nxt):] + [nxt]
                    break
                path.append(nxt)
            chain = " -> ".join(repr(n) for n in cycle)
            raise ValueError(
                f"parameter {cycle[0]!r}: conditions form a cycle ({chain}, each conditioned on the next)"
            )
        order.append(ready)
        placed.add(ready)
        remaining.remove(ready)
    return tuple(order)

