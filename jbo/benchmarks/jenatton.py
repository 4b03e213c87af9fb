r"""The synthetic tree-structured functions of Jenatton et al. (2017, Sec. 4.1 and Fig. 1).

"The functions we consider are defined over binary trees: each inner node, including the root,
corresponds to a binary variable. A path in this tree thus represents successive binary
decisions. The leaves contain univariate quadratic functions that are shifted by different
constant terms." With ``L`` levels of decisions (a tree of depth ``L + 1`` counting the leaves):

* decisions ``x1 .. x{2^L - 1}`` in heap order, each ``Categorical([0, 1])``: ``x1`` is the
  root and ``x{k}`` (``k >= 2``) is active when its parent ``x{k // 2}`` equals ``k % 2`` (0: left,
  1: right), exactly the numbering of Fig. 1;
* one continuous variable per leaf, ``x{2^L} .. x{2^(L+1) - 1}`` on ``[-1, 1]``, the leaf variable
  ``x{m}`` hanging below decision ``x{m // 2} = m % 2``;
* leaf ``a = 1 .. 2^L`` (left to right) computes ``x_leaf^2 + 0.1 a``, "shifts {a x 0.1}";
* with shared variables, one continuous variable on ``[0, 1]`` per child of the root,
  ``r{2^(L+1)}`` (active when ``x1 = 0``) and ``r{2^(L+1) + 1}`` (when ``x1 = 1``), added linearly
  to the leaves of its subtree (Fig. 1, bottom: "r8 and r9 are shared variables that are common
  to the functions at the leaves of their respective subtrees ... a linear dependency").

The minimum is 0.1 at the leftmost leaf with its leaf variable and shared variable at 0.

* ``jenatton_small`` / ``jenatton_small_shared``: Fig. 1 top / bottom, ``L = 2`` (4 leaves,
  3 + 4 (+ 2) parameters).
* ``jenatton_large_shared``: the "large balanced" tree, depth 4 with 8 leaves, ``L = 3``: "7
  categorical and 10 continuous parameters, 2 of which being shared". ``jenatton_large`` is the same
  tree without the shared variables (Fig. 2, bottom, shows both settings).

The paper does not say which inner nodes carry the shared variables of the large tree; jbo
attaches them, as in the small tree, to the two children of the root.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from jbo.benchmarks.problem import ConditionalProblem, _fixed_dim
from jbo.spaces import Categorical, Real, Space

__all__ = ["balanced_tree", "tree_value", "jenatton_small", "jenatton_small_shared",
           "jenatton_large", "jenatton_large_shared", "OPTIMUM", "PROBLEMS"]

#: Global minimum of every function here: the shift 0.1 of the leftmost leaf.
OPTIMUM = 0.1


def _shared_names(levels: int) -> tuple[str, str]:
    first = 2 ** (levels + 1)
    return f"r{first}", f"r{first + 1}"


def tree_space(levels: int, shared: bool) -> Space:
    """The conditional space of a balanced binary tree with ``levels`` levels of decisions.

    Args:
      levels: number of decision levels ``L >= 1`` (``2^L`` leaves).
      shared: add the two shared variables of the root's subtrees.
    Returns:
      the :class:`~jbo.spaces.Space`; definition order: decisions, leaf variables, shared ones.
    """
    if isinstance(levels, bool) or not isinstance(levels, int) or levels < 1:
        raise ValueError(f"levels must be an integer >= 1, got {levels!r}")
    n_leaves = 2**levels
    params = {"x1": Categorical([0, 1])}
    for k in range(2, n_leaves):
        params[f"x{k}"] = Categorical([0, 1], when={f"x{k // 2}": [k % 2]})
    for m in range(n_leaves, 2 * n_leaves):
        params[f"x{m}"] = Real(-1.0, 1.0, when={f"x{m // 2}": [m % 2]})
    if shared:
        for side, name in enumerate(_shared_names(levels)):
            params[name] = Real(0.0, 1.0, when={"x1": [side]})
    return Space(params)


def tree_value(config: Mapping, levels: int, shared: bool) -> float:
    """Value of the tree function at a (validated) configuration.

    Follows the decisions from the root to a leaf ``a`` and returns ``x_leaf^2 + 0.1 a`` (plus
    the shared variable of the root's subtree when ``shared``).
    """
    k = 1
    for _ in range(levels):  # descend: child of x{k} for value v is x{2k + v}
        k = 2 * k + int(config[f"x{k}"])
    n_leaves = 2**levels
    a = k - n_leaves + 1  # leaves numbered 1 .. 2^L left to right
    value = float(config[f"x{k}"]) ** 2 + 0.1 * a
    if shared:
        value += float(config[_shared_names(levels)[int(config["x1"])]])
    return value


def tree_value_jax(config: Mapping, levels: int, shared: bool):
    """:func:`tree_value` on JAX values (traceable): ``config`` holds every parameter, active or not, as
    :meth:`jbo.spaces.Space.decode_arrays` gives them; only the active ones are read."""
    import jax.numpy as jnp

    n_leaves = 2**levels
    decisions = jnp.stack([jnp.asarray(config[f"x{k}"]) for k in range(1, n_leaves)]).astype(jnp.int32)
    k = jnp.asarray(1, jnp.int32)
    for _ in range(levels):
        k = 2 * k + decisions[k - 1]
    leaf_values = jnp.stack([jnp.asarray(config[f"x{m}"]) for m in range(n_leaves, 2 * n_leaves)])
    value = leaf_values[k - n_leaves] ** 2 + 0.1 * (k - n_leaves + 1)
    if shared:
        value = value + jnp.stack([jnp.asarray(config[n]) for n in _shared_names(levels)])[decisions[0]]
    return value


def balanced_tree(name: str, levels: int, shared: bool) -> ConditionalProblem:
    """A Jenatton et al. synthetic balanced-tree problem (see the module docstring).

    Args:
      name: registry name.
      levels: decision levels ``L`` (depth ``L + 1``, ``2^L`` leaves).
      shared: with the two shared variables.
    Returns:
      a :class:`~jbo.benchmarks.registry.ConditionalProblem` with optimum 0.1.
    """
    space = tree_space(levels, shared)
    n_leaves = 2**levels
    best = {f"x{k}": 0 for k in (2**j for j in range(levels))}  # the leftmost path: x1, x2, x4, ...
    best[f"x{n_leaves}"] = 0.0
    if shared:
        best[_shared_names(levels)[0]] = 0.0

    def objective(config: dict) -> float:
        return tree_value(config, levels, shared)

    def jax_objective(config: dict):
        return tree_value_jax(config, levels, shared)

    return ConditionalProblem(name, space, objective, OPTIMUM, space.validate(best), jax_objective)


def _factory(name: str, levels: int, shared: bool) -> Callable[..., ConditionalProblem]:
    def make(dim: int | None = None) -> ConditionalProblem:
        problem = balanced_tree(name, levels, shared)
        _fixed_dim(name, problem.dim, dim)
        return problem

    make.__name__ = name
    make.__doc__ = (f"Jenatton et al. (2017) balanced tree, {2**levels} leaves, "
                    f"{'with' if shared else 'without'} shared variables; minimum 0.1.")
    return make


jenatton_small = _factory("jenatton_small", 2, False)
jenatton_small_shared = _factory("jenatton_small_shared", 2, True)
jenatton_large = _factory("jenatton_large", 3, False)
jenatton_large_shared = _factory("jenatton_large_shared", 3, True)

PROBLEMS: dict[str, Callable[..., ConditionalProblem]] = {
    f.__name__: f for f in (jenatton_small, jenatton_small_shared, jenatton_large, jenatton_large_shared)
}
