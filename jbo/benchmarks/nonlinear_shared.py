r"""Conditional problems whose *shared* parameters act non-linearly and differently per branch.

Jenatton et al.'s synthetic trees (:mod:`jbo.benchmarks.jenatton`) add their shared variables
*linearly* to the leaves, the one case in which the paper's tree GP (§2.4: a shared parameter enters
only through a linear inner-node term :math:`c_v^\top r_v`, with one weight for every leaf below
``v``) is exact. The most common conditional space in practice is different: several optimisers, each
with its own parameters, and a learning rate shared by all of them whose best value differs from one
optimiser to the next. These problems are that case, with known optima.

Every leaf ``p`` (a complete decision path) computes a sum of quadratic bowls in *normalised*
coordinates: each non-decision parameter active in the leaf is mapped to :math:`[0, 1]` (``u = (x -
low) / (high - low)``, or the same in ``log x`` for a log-scaled parameter) and

.. math::
   f_p(x) = a_p + \sum_{j \in p} w_{pj} \Big(u_j - t_{pj} - \sum_k \gamma_{pjk} (u_k - t_{pk})\Big)^2,

where :math:`t_{pj}` is the leaf's optimum of parameter ``j`` and the optional couplings
:math:`\gamma_{pjk}` move the optimum of an own parameter with a shared one (a best momentum that
falls as the learning rate rises). Each bowl is convex with its minimum 0 at the targets, so leaf
``p``'s minimum is :math:`a_p` and the global minimum is :math:`\min_p a_p`, at the leaf with the
smallest offset with every parameter at its target (:attr:`ConditionalProblem.best_config`). The
targets of a shared parameter differ from leaf to leaf and lie inside the box, so no single linear
function of a shared parameter (the paper's inner-node term) can point every leaf to its optimum.
The leaf with the global minimum has the narrowest learning-rate bowl, so it is *not* the best
leaf on average over the learning rate: a search that ranks leaves by their average (or by a linear
trend) is drawn to a worse leaf.

Problems (all registered in :mod:`jbo.benchmarks`, minimum 0.05):

* ``nonlinear_optimizers2`` (width 2, depth 1): ``optimizer`` in {sgd, adam}, shared ``lr`` on
  ``[1e-5, 1]`` (log), sgd's ``momentum``, adam's ``beta1``.
* ``nonlinear_optimizers3`` (width 3, depth 1): {sgd, adam, rmsprop}, shared ``lr`` and
  ``weight_decay`` (log, ``[1e-6, 1e-1]``), sgd's ``momentum``, adam's ``beta1`` and ``beta2``,
  rmsprop's ``rho``.
* ``nonlinear_pipeline`` (4 leaves, 3 levels of decisions): ``model`` in {linear, mlp}; an mlp has
  ``layers`` in {1, 2}; two layers have an ``activation`` in {relu, tanh}. Shared at three depths:
  ``lr`` by every leaf, ``width`` (log, ``[8, 512]``) by the three mlp leaves, ``dropout`` by the two
  two-layer leaves; one own parameter per leaf.

A problem is a :class:`~jbo.benchmarks.registry.ConditionalProblem` with a Python objective (on a
validated configuration of active parameters) and a JAX one (on every parameter, as
:meth:`jbo.spaces.Space.decode_arrays` gives them, for :func:`jbo.minimize_many`); both run the same
arithmetic. :func:`shared_tree_problem` builds more such problems from a space and per-leaf
:class:`Leaf` descriptions, validating that they describe every leaf exactly once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np

from jbo.benchmarks.problem import ConditionalProblem, _fixed_dim
from jbo.spaces import Categorical, Integer, Real, Space

__all__ = ["Term", "Leaf", "shared_tree_problem", "nonlinear_optimizers2", "nonlinear_optimizers3",
           "nonlinear_pipeline", "OPTIMUM", "PROBLEMS"]

#: Global minimum of the registered problems (the smallest leaf offset).
OPTIMUM = 0.05


class Term(NamedTuple):
    """One quadratic bowl of a leaf: ``weight * (u - u(target) - sum gamma (u_k - u_k(target_k)))^2``.

    Attributes:
      name: a non-decision parameter active in the leaf (a ``Real``).
      target: its optimum in this leaf, in user units (strictly inside the bounds).
      weight: curvature (> 0) in normalised units.
      follows: ``((other name, gamma), ...)``: other parameters of the leaf whose deviation from
        their own target moves this one's optimum by ``gamma`` per unit (normalised).
    """

    name: str
    target: float
    weight: float
    follows: tuple = ()


class Leaf(NamedTuple):
    """A leaf: its decisions, offset (its minimum) and one :class:`Term` per active non-decision parameter."""

    path: Mapping
    offset: float
    terms: tuple


def _unit(param: Real, value, xp):
    """``value`` of ``param`` mapped to ``[0, 1]`` (log-scaled parameters in ``log``)."""
    if param.log:
        return (xp.log(value) - math.log(param.low)) / (math.log(param.high) - math.log(param.low))
    return (value - param.low) / (param.high - param.low)


class _Compiled(NamedTuple):
    """A validated leaf: ``(decision name, code)`` pairs, the offset and the terms in unit coordinates."""

    decisions: tuple  # ((name, value, numeric), ...)
    offset: float
    terms: tuple  # ((name, unit target, weight, ((other, gamma), ...)), ...)


def _compile(space: Space, leaves) -> tuple[_Compiled, ...]:
    """Match ``leaves`` with ``space.leaves()`` one to one and check every term (``ValueError``)."""
    if not space.is_conditional:
        raise ValueError("a shared-tree problem needs a conditional space (parameters with when=...)")
    params, decisions = space.params, set(space.decisions)
    by_path = {}
    for k, leaf in enumerate(leaves):
        if not isinstance(leaf, Leaf):
            raise ValueError(f"leaf {k} must be a Leaf, got {type(leaf).__name__}")
        key = tuple(sorted(dict(leaf.path).items()))
        if key in by_path:
            raise ValueError(f"two leaves describe the path {dict(key)}")
        by_path[key] = leaf
    compiled = []
    for path in space.leaves():
        leaf = by_path.pop(tuple(path), None)
        if leaf is None:
            raise ValueError(f"no leaf describes the path {dict(path)}")
        config = dict(path)
        active = [n for n in space.active(config) if n not in decisions]
        names = [t.name for t in leaf.terms]
        missing, extra = sorted(set(active) - set(names)), sorted(set(names) - set(active))
        if missing or extra or len(names) != len(set(names)):
            raise ValueError(f"leaf {config}: one term per active parameter {active}; missing {missing}, "
                             f"inactive or duplicated {extra or sorted(n for n in names if names.count(n) > 1)}")
        if not (isinstance(leaf.offset, (int, float)) and math.isfinite(leaf.offset)):
            raise ValueError(f"leaf {config}: offset must be a finite number, got {leaf.offset!r}")
        terms = []
        for t in leaf.terms:
            p = params[t.name]
            if not isinstance(p, Real):
                raise ValueError(f"leaf {config}: parameter {t.name!r} must be a Real, got {type(p).__name__}")
            if not (isinstance(t.target, (int, float)) and p.low < t.target < p.high):
                raise ValueError(f"leaf {config}: target {t.target!r} of {t.name!r} must lie strictly inside "
                                 f"[{p.low}, {p.high}]")
            if not (isinstance(t.weight, (int, float)) and t.weight > 0 and math.isfinite(t.weight)):
                raise ValueError(f"leaf {config}: weight of {t.name!r} must be a positive number, got {t.weight!r}")
            for other, gamma in t.follows:
                if other not in names or other == t.name:
                    raise ValueError(f"leaf {config}: {t.name!r} follows {other!r}, not another parameter of the leaf")
                if not (isinstance(gamma, (int, float)) and math.isfinite(gamma)):
                    raise ValueError(f"leaf {config}: coupling {t.name!r} ~ {other!r} must be a finite number")
            terms.append((t.name, float(_unit(p, t.target, np)), float(t.weight),
                          tuple((o, float(g)) for o, g in t.follows)))
        targets = {n: u for n, u, _, _ in terms}
        terms = tuple((n, u, w, tuple((o, g, targets[o]) for o, g in f)) for n, u, w, f in terms)
        marks = tuple((name, value, _numeric(params[name])) for name, value in path)
        compiled.append(_Compiled(marks, float(leaf.offset), terms))
    if by_path:
        raise ValueError(f"leaves describe paths the space does not have: {[dict(k) for k in by_path]}")
    return tuple(compiled)


def _numeric(param) -> bool:
    """Whether :meth:`Space.decode_arrays` gives this decision's value (else its choice index)."""
    if isinstance(param, Categorical):
        return all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in param.choices)
    return True


def _leaf_value(space: Space, leaf: _Compiled, values: Mapping, xp):
    """``f_p`` of the module docstring from user-unit ``values`` (NumPy floats or JAX arrays)."""
    params = space.params
    units = {n: _unit(params[n], values[n], xp) for n, _, _, _ in leaf.terms}
    total = leaf.offset
    for name, target, weight, follows in leaf.terms:
        shift = sum((gamma * (units[other] - other_target) for other, gamma, other_target in follows), 0.0)
        total = total + weight * (units[name] - target - shift) ** 2
    return total


def shared_tree_problem(name: str, space: Space, leaves) -> ConditionalProblem:
    """A :class:`ConditionalProblem` from a conditional space and one :class:`Leaf` per leaf.

    Args:
      name: registry name.
      space: the conditional space (decisions: categorical or integer; every other parameter a
        ``Real``).
      leaves: one :class:`Leaf` per leaf of ``space.leaves()`` (any order).
    Returns:
      the problem; optimum ``min offset``, ``best_config`` the targets of that leaf (the first such
      leaf in ``space.leaves()`` order).
    Raises:
      ValueError: a path missing, repeated or unknown; a term missing for an active parameter or given
        for an inactive one; a target outside its bounds; a non-positive weight; a bad coupling.
    """
    compiled = _compile(space, leaves)
    best = min(range(len(compiled)), key=lambda p: compiled[p].offset)
    best_leaf = compiled[best]
    best_config = {n: v for n, v, _ in best_leaf.decisions}
    by_path = {tuple(sorted(dict(leaf.path).items())): leaf for leaf in leaves}
    best_config.update({t.name: float(t.target)
                        for t in by_path[tuple(space.leaves()[best])].terms})
    best_config = space.validate(best_config)

    def objective(config: dict) -> float:
        for leaf in compiled:
            if all(config.get(n) == v for n, v, _ in leaf.decisions):
                values = {n: np.float64(config[n]) for n, _, _, _ in leaf.terms}
                return float(_leaf_value(space, leaf, values, np))
        raise ValueError(f"{name}: configuration {config} matches no leaf")  # pragma: no cover - validated

    choices = {n: p.choices for n, p in space.params.items() if isinstance(p, Categorical)}

    def jax_objective(config: dict):
        import jax.numpy as jnp

        conditions, values = [], []
        for leaf in compiled:
            match = jnp.asarray(True)
            for n, v, numeric in leaf.decisions:
                code = v if numeric else choices[n].index(v)
                match = match & (jnp.asarray(config[n]) == code)
            conditions.append(match)
            values.append(_leaf_value(space, leaf, {n: jnp.asarray(config[n]) for n, _, _, _ in leaf.terms}, jnp))
        return jnp.select(conditions, values, jnp.nan)

    return ConditionalProblem(name, space, objective, float(best_leaf.offset), best_config, jax_objective)


# ----------------------------------------------------------------------------------- problems
LR = dict(low=1e-5, high=1.0, log=True)


def _optimizers2() -> ConditionalProblem:
    space = Space({
        "optimizer": Categorical(["sgd", "adam"]),
        "lr": Real(**LR),
        "momentum": Real(0.0, 0.99, when={"optimizer": ["sgd"]}),
        "beta1": Real(0.5, 0.999, when={"optimizer": ["adam"]}),
    })
    leaves = [
        Leaf({"optimizer": "sgd"}, 0.10, (Term("lr", 1e-1, 1.5), Term("momentum", 0.9, 0.5, (("lr", -0.5),)))),
        Leaf({"optimizer": "adam"}, 0.05, (Term("lr", 1e-3, 4.0), Term("beta1", 0.9, 0.5))),
    ]
    return shared_tree_problem("nonlinear_optimizers2", space, leaves)


def _optimizers3() -> ConditionalProblem:
    space = Space({
        "optimizer": Categorical(["sgd", "adam", "rmsprop"]),
        "lr": Real(**LR),
        "weight_decay": Real(1e-6, 1e-1, log=True),
        "momentum": Real(0.0, 0.99, when={"optimizer": ["sgd"]}),
        "beta1": Real(0.5, 0.999, when={"optimizer": ["adam"]}),
        "beta2": Real(0.9, 0.9999, when={"optimizer": ["adam"]}),
        "rho": Real(0.8, 0.999, when={"optimizer": ["rmsprop"]}),
    })
    leaves = [
        Leaf({"optimizer": "sgd"}, 0.12, (Term("lr", 1e-1, 1.5), Term("weight_decay", 1e-3, 0.5),
                                          Term("momentum", 0.9, 0.5, (("lr", -0.5),)))),
        Leaf({"optimizer": "adam"}, 0.05, (Term("lr", 1e-3, 4.0), Term("weight_decay", 1e-5, 1.0),
                                           Term("beta1", 0.9, 0.5), Term("beta2", 0.999, 0.3))),
        Leaf({"optimizer": "rmsprop"}, 0.08, (Term("lr", 1e-2, 3.0), Term("weight_decay", 1e-4, 0.5),
                                              Term("rho", 0.95, 0.5, (("lr", 0.4),)))),
    ]
    return shared_tree_problem("nonlinear_optimizers3", space, leaves)


def _pipeline() -> ConditionalProblem:
    space = Space({
        "model": Categorical(["linear", "mlp"]),
        "layers": Integer(1, 2, when={"model": ["mlp"]}),
        "activation": Categorical(["relu", "tanh"], when={"layers": [2]}),
        "lr": Real(**LR),
        "width": Real(8.0, 512.0, log=True, when={"model": ["mlp"]}),
        "dropout": Real(0.0, 0.8, when={"layers": [2]}),
        "l2": Real(1e-6, 1.0, log=True, when={"model": ["linear"]}),
        "init_scale": Real(0.1, 10.0, log=True, when={"layers": [1]}),
        "leak": Real(0.0, 0.3, when={"activation": ["relu"]}),
        "gain": Real(0.5, 2.0, when={"activation": ["tanh"]}),
    })
    leaves = [
        Leaf({"model": "linear"}, 0.15, (Term("lr", 1e-1, 1.0), Term("l2", 1e-3, 0.5))),
        Leaf({"model": "mlp", "layers": 1}, 0.10, (Term("lr", 1e-2, 2.0), Term("width", 64.0, 1.0),
                                                   Term("init_scale", 1.0, 0.5))),
        Leaf({"model": "mlp", "layers": 2, "activation": "relu"}, 0.05,
             (Term("lr", 1e-3, 3.0), Term("width", 256.0, 1.5), Term("dropout", 0.2, 1.0),
              Term("leak", 0.05, 0.3, (("dropout", 0.3),)))),
        Leaf({"model": "mlp", "layers": 2, "activation": "tanh"}, 0.07,
             (Term("lr", 3e-3, 2.0), Term("width", 128.0, 1.0), Term("dropout", 0.5, 1.0), Term("gain", 1.0, 0.3))),
    ]
    return shared_tree_problem("nonlinear_pipeline", space, leaves)


def _factory(name: str, build: Callable[[], ConditionalProblem], doc: str) -> Callable[..., ConditionalProblem]:
    def make(dim: int | None = None) -> ConditionalProblem:
        problem = build()
        _fixed_dim(name, problem.dim, dim)
        return problem

    make.__name__ = name
    make.__doc__ = doc
    return make


nonlinear_optimizers2 = _factory("nonlinear_optimizers2", _optimizers2,
                                 "Two optimisers (sgd, adam) with a shared learning rate whose best value differs per "
                                 "optimiser; minimum 0.05 (adam, lr 1e-3, beta1 0.9).")
nonlinear_optimizers3 = _factory("nonlinear_optimizers3", _optimizers3,
                                 "Three optimisers with a shared learning rate and weight decay; minimum 0.05 (adam, "
                                 "lr 1e-3, weight decay 1e-5, beta1 0.9, beta2 0.999).")
nonlinear_pipeline = _factory("nonlinear_pipeline", _pipeline,
                              "Linear model or 1-2 layer MLP, shared lr / width / dropout at three depths; minimum "
                              "0.05 (2-layer relu MLP, lr 1e-3, width 256, dropout 0.2, leak 0.05).")

PROBLEMS: dict[str, Callable[..., ConditionalProblem]] = {
    f.__name__: f for f in (nonlinear_optimizers2, nonlinear_optimizers3, nonlinear_pipeline)
}
