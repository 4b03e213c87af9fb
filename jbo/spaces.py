"""Search spaces: encode configurations to the unit cube ``[0, 1]^D`` and decode them back.

Every model in jbo works in the unit cube; user units (log scales, integers, categories)
exist only at this edge. Encoding and decoding are plain NumPy (they run once per suggestion,
outside jitted code); the functions models call on encoded points inside jitted code
(``Space.relevance``, ``Space.leaf_index``, ``Space.tree_features``) also take JAX arrays and
tracers, and import JAX only then.

Parameter types
---------------
``Real(low, high, log=False)``
    One column. Affine map of ``[low, high]`` onto ``[0, 1]`` (affine in ``log x`` when
    ``log=True``). Decoding clips ``u`` to ``[0, 1]`` and the value to ``[low, high]`` so that
    round-off in ``exp``/``log`` can never leave the box.

``Integer(low, high, log=False)``
    One column, inclusive bounds. The unit interval is split into ``high - low + 1``
    equal-width bins, one per integer: decoding takes the bin ``u`` falls in, encoding maps an
    integer to the centre of its bin. Equal-width bins give every integer the same volume of
    the cube, so uniform (or Sobol) sampling in the cube is uniform over the integers and the
    acquisition optimiser sees no integer favoured by the encoding; mapping to the bin centre
    (rather than, say, ``(v - low) / (high - low)``) keeps every integer as far as possible
    from the decision boundaries, so ``decode(encode(v)) == v`` is robust to round-off, and the
    bin centre is exactly what the model is shown (see ``Space.round_trip``).
    With ``log=True`` the bins are of equal width in log space: integer ``v`` owns
    ``[log(v - 1/2), log(v + 1/2)]`` of ``[log(low - 1/2), log(high + 1/2)]``, rescaled to
    ``[0, 1]``, and encodes to the centre of that interval. Small integers then get more
    volume than large ones, which is the point of a log scale.

``Categorical(choices)``
    ``k`` columns, a one-hot encoding. Mapping categories to a single ordinal column would
    invent an order (and distances) between categories that have none, and a stationary
    kernel would then believe ``"adam"`` is closer to ``"sgd"`` than to ``"rmsprop"`` because
    of where they happen to be listed. With one-hot columns every pair of categories is
    equally far apart. The acquisition optimiser works in the continuous relaxation
    ``[0, 1]^k`` and decoding takes the argmax of the ``k`` columns (first one on ties);
    ``Space.round_trip`` then replaces the relaxed point by the exact one-hot vector of the
    category that was evaluated, so the model is trained on what was actually run.

Composition
-----------
``Space`` lays the parameters' columns side by side in definition order
(``Space.columns`` maps each name to its slice). Every parameter class implements the same
small protocol -- ``width``, ``check_value``, ``encode_values`` (vectorised), ``decode_values``
(vectorised), ``to_dict`` -- and ``Space`` only composes them.

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

Errors
------
Every error in a definition or a configuration is a ``ValueError``; errors raised by
``Space`` name the parameter (``"parameter 'lr': value 2.0 out of bounds [0.0, 1.0]"``).
A parameter object does not know its own name, so ``Real(2, 1)`` itself raises
``"low (2.0) must be < high (1.0)"``; ``Space.from_dict`` prefixes such errors with the name.
"""

from __future__ import annotations

import abc

import difflib
import json
import math
import numbers
import warnings
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

__all__ = ["Real", "Integer", "Categorical", "Space", "PARAM_TYPES", "TreeNode", "TreeStructure"]

# Integers above this magnitude are not all representable as float64, so decoding could not
# return every integer of the range.
_MAX_INT = 2**53


def _is_real_number(x: Any) -> bool:
    """True for python/numpy ints and floats; False for bool (a likely mistake) and the rest."""
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def _fmt(x: Any) -> str:
    return repr(x.item() if isinstance(x, np.generic) else x)


def _check_flag(log: Any) -> bool:
    if not isinstance(log, (bool, np.bool_)):
        raise ValueError(f"log must be a bool, got {log!r}")
    return bool(log)


def _check_when(when: Any) -> tuple[tuple[str, tuple], ...]:
    """``when={"parent": [values]}`` as a tuple of ``(parent, values)`` pairs.

    Only the shape is checked here (a parameter does not know its siblings); ``Space`` checks
    that parents exist, are discrete, form no cycle and that the values are in their domains.
    """
    if when is None:
        return ()
    if not isinstance(when, Mapping):
        raise ValueError(
            f"when must be a mapping parent name -> list of allowed values, got {when!r}"
        )
    out = []
    for parent, values in when.items():
        if not isinstance(parent, str) or not parent:
            raise ValueError(f"when: parent names must be non-empty strings, got {parent!r}")
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
            raise ValueError(
                f"when[{parent!r}] must be a list of allowed values, got {values!r}"
            )
        out.append((parent, tuple(_normalise_choice(v) for v in values)))
    return tuple(out)


def _when_dict(when: tuple) -> dict:
    return {parent: list(values) for parent, values in when}


class _Param(abc.ABC):
    """Protocol shared by the parameter types (kept small so ``Space`` can compose them).

    * ``width``: number of encoded columns.
    * ``check_value(v)``: normalised python value, or ``ValueError`` (without the name).
    * ``encode_values(values) -> (n, width)``: values already checked.
    * ``decode_values(U (n, width)) -> list``: python values; ``U`` is clipped to ``[0, 1]``.
    * ``to_dict()`` / ``_from_fields(d)``: JSON-able definition (``when`` included if set).
    * ``when``: the condition ``((parent, allowed values), ...)``, ``()`` if unconditional.
    """

    type_name: str = ""
    width: int = 1
    # the condition, ``((parent, allowed values), ...)``; () for an unconditional parameter
    __slots__ = ("when",)

    @abc.abstractmethod
    def check_value(self, value: Any) -> Any:
        """See the class docstring."""

    @abc.abstractmethod
    def encode_values(self, values: Sequence[Any]) -> np.ndarray:
        """See the class docstring."""

    @abc.abstractmethod
    def decode_values(self, U: np.ndarray) -> list:
        """See the class docstring."""

    @abc.abstractmethod
    def to_dict(self) -> dict:
        """See the class docstring."""

    # single-value conveniences, defined through the vectorised maps so the two always agree
    def encode(self, value: Any) -> np.ndarray:
        """Encoding ``(width,)`` of one (already valid) value."""
        return self.encode_values([self.check_value(value)])[0]

    def decode(self, u: Any) -> Any:
        """Value of one encoded slice ``(width,)``."""
        u = np.asarray(u, dtype=np.float64).reshape(1, self.width)
        return self.decode_values(u)[0]

    def _with_when(self, when: Mapping | None) -> "_Param":
        """A copy of this parameter under another condition."""
        d = {k: v for k, v in self.to_dict().items() if k != "when"}
        return type(self)._from_fields({**d, "when": when})

    def _when_fields(self) -> dict:
        return {"when": _when_dict(self.when)} if self.when else {}

    def _when_repr(self) -> str:
        return f", when={_when_dict(self.when)!r}" if self.when else ""

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _set(self, **fields):
        for k, v in fields.items():
            object.__setattr__(self, k, v)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Param):
            return NotImplemented
        return json.dumps(self.to_dict()) == json.dumps(other.to_dict())

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict()))


class Real(_Param):
    """A continuous parameter on ``[low, high]``; ``log=True`` encodes ``log x`` (needs ``low > 0``)."""

    type_name = "real"
    width = 1
    __slots__ = ("low", "high", "log", "_a", "_b")

    def __init__(self, low: float, high: float, log: bool = False, *, when: Mapping | None = None):
        for label, v in (("low", low), ("high", high)):
            if not _is_real_number(v):
                raise ValueError(f"{label} must be a real number, got {v!r}")
            if not math.isfinite(float(v)):
                raise ValueError(f"{label} must be finite, got {_fmt(v)}")
        low, high, log = float(low), float(high), _check_flag(log)
        if not low < high:
            raise ValueError(f"low ({low!r}) must be < high ({high!r})")
        if log and low <= 0:
            raise ValueError(f"log=True requires low > 0, got low={low!r}")
        a, b = (math.log(low), math.log(high)) if log else (low, high)
        self._set(low=low, high=high, log=log, _a=a, _b=b, when=_check_when(when))

    def check_value(self, value: Any) -> float:
        if not _is_real_number(value):
            raise ValueError(f"expected a real number, got {value!r}")
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"value must be finite, got {v!r}")
        if not self.low <= v <= self.high:
            raise ValueError(f"value {v!r} out of bounds [{self.low!r}, {self.high!r}]")
        return v

    def encode_values(self, values: Sequence[Any]) -> np.ndarray:
        v = np.asarray(values, dtype=np.float64).reshape(-1)
        t = np.log(v) if self.log else v
        return np.clip((t - self._a) / (self._b - self._a), 0.0, 1.0)[:, None]

    def decode_values(self, U: np.ndarray) -> list:
        u = np.clip(np.asarray(U, dtype=np.float64)[:, 0], 0.0, 1.0)
        t = self._a + u * (self._b - self._a)
        v = np.exp(t) if self.log else t
        # the faces of the cube map exactly onto the bounds (no exp/log round-off there)
        v = np.where(u <= 0.0, self.low, np.where(u >= 1.0, self.high, v))
        return [float(x) for x in np.clip(v, self.low, self.high)]

    def to_dict(self) -> dict:
        return {"type": self.type_name, "low": self.low, "high": self.high, "log": self.log,
                **self._when_fields()}

    @classmethod
    def _from_fields(cls, d: Mapping) -> "Real":
        return cls(d["low"], d["high"], log=d.get("log", False), when=d.get("when"))

    def __repr__(self) -> str:
        return (f"Real({self.low!r}, {self.high!r}" + (", log=True" if self.log else "")
                + self._when_repr() + ")")


class Integer(_Param):
    """An integer parameter on ``{low, ..., high}`` (inclusive), one equal-width bin per integer.

    ``log=True`` makes the bins equal-width in log space (needs ``low >= 1``).
    """

    type_name = "integer"
    width = 1
    __slots__ = ("low", "high", "log", "_a", "_b")

    def __init__(self, low: int, high: int, log: bool = False, *, when: Mapping | None = None):
        bounds = []
        for label, v in (("low", low), ("high", high)):
            if not _is_real_number(v) or not math.isfinite(float(v)) or (
                not isinstance(v, numbers.Integral) and not float(v).is_integer()
            ):
                raise ValueError(f"{label} must be an integer, got {v!r}")
            iv = int(v)
            if abs(iv) > _MAX_INT:
                raise ValueError(f"{label} must be within +-2**53, got {iv}")
            bounds.append(iv)
        low, high = bounds
        log = _check_flag(log)
        if not low < high:
            raise ValueError(f"low ({low}) must be < high ({high})")
        if log and low < 1:
            raise ValueError(f"log=True requires low >= 1, got low={low}")
        # continuous range covered by the bins: [low - 1/2, high + 1/2] (in log space if log)
        if log:
            a, b = math.log(low - 0.5), math.log(high + 0.5)
        else:
            a, b = low - 0.5, high + 0.5
        self._set(low=low, high=high, log=log, _a=a, _b=b, when=_check_when(when))

    @property
    def n_values(self) -> int:
        return self.high - self.low + 1

    def check_value(self, value: Any) -> int:
        if not _is_real_number(value):
            raise ValueError(f"expected an integer, got {value!r}")
        if isinstance(value, numbers.Integral):
            v = int(value)
        else:
            f = float(value)
            if not math.isfinite(f):
                raise ValueError(f"value must be finite, got {f!r}")
            if not f.is_integer():
                raise ValueError(f"expected an integer, got non-integer value {f!r}")
            v = int(f)
        if not self.low <= v <= self.high:
            raise ValueError(f"value {v} out of bounds [{self.low}, {self.high}]")
        return v

    def encode_values(self, values: Sequence[Any]) -> np.ndarray:
        v = np.asarray(values, dtype=np.float64).reshape(-1)
        if self.log:  # centre of [log(v - 1/2), log(v + 1/2)]
            centre = 0.5 * (np.log(v - 0.5) + np.log(v + 0.5))
            u = (centre - self._a) / (self._b - self._a)
        else:  # centre of bin v - low out of n equal bins
            u = (v - self.low + 0.5) / self.n_values
        return np.clip(u, 0.0, 1.0)[:, None]

    def _bin_values(self, u, xp=np):
        """Integer (as a float array) whose bin holds ``u`` ``(...)``; ``xp`` is numpy or jax.numpy.

        The one definition of the bins: ``decode_values`` and the relevance mask of a space
        (decision columns, :meth:`Space.relevance`) both call it, so they never disagree.
        """
        u = xp.clip(u, 0.0, 1.0)
        if self.log:
            t = xp.exp(self._a + u * (self._b - self._a))  # in [low - 1/2, high + 1/2]
            v = xp.clip(xp.floor(t + 0.5), self.low, self.high)
            # exp/log round-off may put v one bin off near an edge: compare u with the edges
            # in the cube, where the bins are defined
            edge = lambda w: (xp.log(w - 0.5) - self._a) / (self._b - self._a)
            v = xp.where((u < edge(v)) & (v > self.low), v - 1, v)
            v = xp.where((u >= edge(v + 1)) & (v < self.high), v + 1, v)
        else:
            v = self.low + xp.floor(u * self.n_values)
        return xp.clip(v, self.low, self.high)

    def decode_values(self, U: np.ndarray) -> list:
        v = self._bin_values(np.asarray(U, dtype=np.float64)[:, 0])
        return [int(x) for x in v]

    # decision codes (conditions): the position of the value in the domain, 0 .. n_values - 1
    def _code(self, value: Any) -> int:
        return self.check_value(value) - self.low

    def _codes(self, U, xp=np):
        return self._bin_values(U[..., 0], xp) - self.low

    def _value_of_code(self, code: int) -> int:
        return self.low + int(code)

    @property
    def _n_codes(self) -> int:
        return self.n_values

    def to_dict(self) -> dict:
        return {"type": self.type_name, "low": self.low, "high": self.high, "log": self.log,
                **self._when_fields()}

    @classmethod
    def _from_fields(cls, d: Mapping) -> "Integer":
        return cls(d["low"], d["high"], log=d.get("log", False), when=d.get("when"))

    def __repr__(self) -> str:
        return (f"Integer({self.low}, {self.high}" + (", log=True" if self.log else "")
                + self._when_repr() + ")")


def _choice_key(c: Any) -> tuple:
    """Identity of a choice: ``True`` and ``1`` differ (JSON keeps them apart), ``1`` and ``1.0`` don't."""
    if isinstance(c, bool):
        return ("bool", c)
    if isinstance(c, str):
        return ("str", c)
    return ("num", c)


def _normalise_choice(c: Any) -> Any:
    if isinstance(c, np.generic):
        c = c.item()
    return c


class Categorical(_Param):
    """An unordered choice among ``choices`` (str / int / float / bool), one-hot encoded."""

    type_name = "categorical"
    __slots__ = ("choices", "width", "_index")

    def __init__(self, choices: Sequence, *, when: Mapping | None = None):
        if isinstance(choices, (str, bytes)) or not isinstance(choices, (Sequence, np.ndarray)):
            raise ValueError(
                f"choices must be a sequence (list or tuple) of choices, got {choices!r}"
            )
        if len(choices) == 0:
            raise ValueError("choices must hold at least one choice, got none")
        norm, index = [], {}
        for c in choices:
            c = _normalise_choice(c)
            if not isinstance(c, (str, int, float)):  # bool is an int
                raise ValueError(
                    f"choice {c!r} has type {type(c).__name__}; choices must be str, int, float or bool"
                )
            if isinstance(c, float) and not math.isfinite(c):
                raise ValueError(f"choice {c!r} is not finite")
            key = _choice_key(c)
            if key in index:
                raise ValueError(f"duplicate choice {c!r} in {list(choices)!r}")
            index[key] = len(norm)
            norm.append(c)
        self._set(choices=tuple(norm), width=len(norm), _index=index, when=_check_when(when))

    def check_value(self, value: Any) -> Any:
        v = _normalise_choice(value)
        try:
            i = self._index.get(_choice_key(v))
        except TypeError:  # unhashable
            i = None
        if i is None:
            raise ValueError(f"{value!r} is not one of the choices {list(self.choices)!r}")
        return self.choices[i]

    def index(self, value: Any) -> int:
        """Position of a (valid) choice."""
        return self._index[_choice_key(self.check_value(value))]

    def encode_values(self, values: Sequence[Any]) -> np.ndarray:
        idx = np.array([self.index(v) for v in values], dtype=np.int64)
        out = np.zeros((len(idx), self.width))
        out[np.arange(len(idx)), idx] = 1.0
        return out

    def decode_values(self, U: np.ndarray) -> list:
        return [self.choices[i] for i in self._codes(np.asarray(U, dtype=np.float64))]

    # decision codes (conditions): the index of the choice, 0 .. k - 1
    def _code(self, value: Any) -> int:
        return self.index(value)

    def _codes(self, U, xp=np):
        """Argmax of the one-hot block ``(..., k) -> (...)`` (first on ties), as ``decode_values``."""
        return xp.argmax(xp.clip(U, 0.0, 1.0), axis=-1)

    def _value_of_code(self, code: int) -> Any:
        return self.choices[int(code)]

    @property
    def _n_codes(self) -> int:
        return self.width

    def to_dict(self) -> dict:
        return {"type": self.type_name, "choices": list(self.choices), **self._when_fields()}

    @classmethod
    def _from_fields(cls, d: Mapping) -> "Categorical":
        return cls(d["choices"], when=d.get("when"))

    def __repr__(self) -> str:
        return f"Categorical({list(self.choices)!r}{self._when_repr()})"


PARAM_TYPES: dict[str, type[_Param]] = {c.type_name: c for c in (Real, Integer, Categorical)}
_TYPE_LIST = "Real, Integer, Categorical"


def _prefixed(name: str, err: Exception) -> ValueError:
    return ValueError(f"parameter {name!r}: {err}")


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


class Space:
    """An ordered collection of named parameters, encoded side by side in ``[0, 1]^dim``.

    Parameters may be conditional (``when={"parent": [values]}``, see the module docstring); a
    configuration of a conditional space holds exactly its active parameters.
    """

    __slots__ = ("_params", "_columns", "_dim", "_cond", "_cache")

    def __init__(self, params: Mapping[str, Real | Integer | Categorical]):
        if not isinstance(params, Mapping):
            raise ValueError(
                f"a Space is defined by a mapping name -> parameter, got {type(params).__name__}"
            )
        if len(params) == 0:
            raise ValueError("empty space: define at least one parameter")
        ps: dict[str, _Param] = {}
        columns: dict[str, slice] = {}
        start = 0
        for name, p in params.items():
            if not isinstance(name, str):
                raise ValueError(f"parameter names must be strings, got {name!r}")
            if not name:
                raise ValueError("parameter names must be non-empty strings")
            if not isinstance(p, _Param):
                raise ValueError(
                    f"parameter {name!r}: expected one of {_TYPE_LIST}, "
                    f"got {type(p).__name__} ({p!r})"
                )
            ps[name] = p
            columns[name] = slice(start, start + p.width)
            start += p.width
        self._cond = None
        if any(p.when for p in ps.values()):
            ps, self._cond = _build_conditions(ps)
        self._params = ps
        self._columns = columns
        self._dim = start
        self._cache: dict = {}

    # ------------------------------------------------------------------ structure
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._params)

    @property
    def params(self) -> dict[str, _Param]:
        return dict(self._params)

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def columns(self) -> dict[str, slice]:
        return dict(self._columns)

    @property
    def is_conditional(self) -> bool:
        """Whether some parameter has a ``when`` condition."""
        return self._cond is not None

    @property
    def decisions(self) -> tuple[str, ...]:
        """The decision parameters (parents of a condition), in definition order."""
        return () if self._cond is None else self._cond.decisions

    @property
    def conditions(self) -> dict[str, dict[str, tuple]]:
        """``{name: {parent: allowed values}}`` of the conditional parameters (normalised values)."""
        return {name: dict(p.when) for name, p in self._params.items() if p.when}

    # ------------------------------------------------------------------ conditions
    def _holds(self, name: str, values: Mapping) -> bool:
        """Whether ``name``'s condition holds, ``values`` holding the active (checked) parents only."""
        for parent, codes in self._cond.rules[name]:
            if parent not in values or self._params[parent]._code(values[parent]) not in codes:
                return False
        return True

    def _why_inactive(self, name: str, values: Mapping) -> str:
        for parent, codes in self._cond.rules[name]:
            if parent not in values:
                return f"its parent {parent!r} is inactive"
            if self._params[parent]._code(values[parent]) not in codes:
                allowed = list(dict(self._params[name].when)[parent])
                return f"it requires {parent} in {allowed!r}, got {values[parent]!r}"
        raise AssertionError("condition holds")  # pragma: no cover

    def _decide(self, config: Mapping) -> tuple[dict, set]:
        """Active decision values (checked) and the active names of ``config``.

        Only decision parameters are read; a missing active decision parameter is an error.
        """
        values: dict = {}
        active: set = set()
        for name in self._cond.order:
            if not self._holds(name, values):
                continue
            active.add(name)
            if name in self._cond.decisions:
                if name not in config:
                    raise ValueError(
                        f"missing parameter {name!r} (a decision parameter: it decides which "
                        f"parameters are active)"
                    )
                try:
                    values[name] = self._params[name].check_value(config[name])
                except ValueError as e:
                    raise _prefixed(name, e) from None
        return values, active

    def active(self, config: Mapping) -> tuple[str, ...]:
        """Names of the parameters active in ``config``, in definition order.

        Only the decision parameters of ``config`` are read (and checked); for an unconditional
        space every parameter is active.
        """
        if not isinstance(config, Mapping):
            raise ValueError(f"a configuration must be a mapping, got {type(config).__name__}")
        if self._cond is None:
            return self.names
        _, active = self._decide(config)
        return tuple(n for n in self._params if n in active)

    # ------------------------------------------------------------------ validation
    def validate(self, config: Mapping) -> dict:
        """Normalised copy of ``config`` (python float / int / choice), in definition order.

        For a conditional space ``config`` must hold exactly the active parameters: a missing
        active parameter or a stray inactive one is a ``ValueError`` naming it.
        """
        if not isinstance(config, Mapping):
            raise ValueError(f"a configuration must be a mapping, got {type(config).__name__}")
        for key in config:
            if key not in self._params:
                close = difflib.get_close_matches(str(key), self.names, n=1) if isinstance(key, str) else []
                hint = f"; did you mean {close[0]!r}?" if close else f"; valid parameters: {list(self.names)}"
                raise ValueError(f"unknown parameter {key!r}{hint}")
        if self._cond is None:
            order, holds = self._params, (lambda name, out: True)
        else:
            order, holds = self._cond.order, self._holds
        out = {}
        for name in order:
            if not holds(name, out):
                if name in config:
                    raise ValueError(
                        f"parameter {name!r} is inactive in this configuration "
                        f"({self._why_inactive(name, out)}); leave it out"
                    )
                continue
            if name not in config:
                why = f" (active: {_fmt_rule(self._params[name].when)})" if self._params[name].when else ""
                raise ValueError(f"missing parameter {name!r}{why}")
            try:
                out[name] = self._params[name].check_value(config[name])
            except ValueError as e:
                raise _prefixed(name, e) from None
        return {name: out[name] for name in self._params if name in out}

    # ------------------------------------------------------------------ encode / decode
    def encode(self, config: Mapping, fill: Any = 0.5) -> np.ndarray:
        """Unit-cube encoding ``(dim,)`` of one configuration (validated first).

        Args:
          config: the configuration (exactly its active parameters).
          fill: value of the columns of inactive parameters: a number in ``[0, 1]`` (default
            0.5, deterministic) or a ``numpy.random.Generator`` drawing them uniformly (the
            "irrelevant dimensions filled randomly" baseline of Swersky et al. 2014).
        Returns:
          ``(dim,)`` float64.
        """
        return self.encode_many([config], fill=fill)[0]

    def encode_many(self, configs: Sequence[Mapping], fill: Any = 0.5) -> np.ndarray:
        """Unit-cube encodings ``(n, dim)`` of several configurations (``fill``: see :meth:`encode`)."""
        valid = [self.validate(c) for c in configs]
        return self._encode_valid(valid, fill)

    def _encode_valid(self, valid: list[dict], fill: Any = 0.5) -> np.ndarray:
        n = len(valid)
        if self._cond is None:
            out = np.empty((n, self._dim), dtype=np.float64)
        else:
            out = _fill_values(fill, (n, self._dim))
        for name, p in self._params.items():
            rows = [i for i, c in enumerate(valid) if name in c]
            if not rows:
                continue
            enc = p.encode_values([valid[i][name] for i in rows]).reshape(len(rows), p.width)
            if len(rows) == n:
                out[:, self._columns[name]] = enc
            else:
                out[np.asarray(rows), self._columns[name]] = enc
        return out

    def _as_matrix(self, U: Any, what: str) -> np.ndarray:
        U = np.asarray(U, dtype=np.float64)
        if U.ndim != 2 or U.shape[1] != self._dim:
            raise ValueError(f"{what} expects an array of shape (n, {self._dim}), got {U.shape}")
        if not np.all(np.isfinite(U)):
            raise ValueError(f"{what}: points must be finite (got NaN or inf)")
        return U

    def decode(self, u: Any) -> dict:
        """Configuration of one point ``(dim,)`` of the cube (clipped to ``[0, 1]`` first).

        For a conditional space only the active parameters are returned (inactive columns are
        ignored).
        """
        u = np.asarray(u, dtype=np.float64)
        if u.shape != (self._dim,):
            raise ValueError(f"decode expects an array of shape ({self._dim},), got {u.shape}")
        return self.decode_many(u[None, :])[0]

    def decode_many(self, U: Any) -> list[dict]:
        """Configurations of the rows of ``U`` ``(n, dim)`` (active parameters only)."""
        U = self._as_matrix(U, "decode_many")
        cols = {name: p.decode_values(U[:, self._columns[name]]) for name, p in self._params.items()}
        if self._cond is None:
            return [{name: cols[name][i] for name in self._params} for i in range(U.shape[0])]
        act, _ = self._activity(U, np)
        return [{name: cols[name][i] for name in self._params if act[name] is None or act[name][i]}
                for i in range(U.shape[0])]

    def round_trip(self, U: Any) -> np.ndarray:
        """``encode(decode(u))`` row-wise: the canonical encoding of what ``u`` decodes to.

        Integers snap to their bin centre and categoricals to an exact one-hot vector, so the
        model is fed the configuration that was actually evaluated. The columns of inactive
        parameters are kept as given. Accepts ``(n, dim)`` or ``(dim,)`` and returns the same shape.
        """
        arr = np.asarray(U, dtype=np.float64)
        one = arr.ndim == 1
        M = self._as_matrix(arr[None, :] if one else arr, "round_trip")
        out = self._encode_valid(self.decode_many(M))
        if self._cond is not None:
            out = np.where(self.relevance(M) > 0, out, M)
        return out[0] if one else out

    # ------------------------------------------------------------------ relevance
    def _activity(self, U, xp):
        """Activity of every parameter and code of every decision parameter at the rows of ``U``.

        Returns:
          ``(active, codes)``: name -> boolean ``(...)`` (``None``: always active) and decision
          name -> code ``(...)`` (decoded exactly as ``decode`` does).
        """
        codes = {d: self._params[d]._codes(U[..., self._columns[d]], xp) for d in self._cond.decisions}
        active: dict = {}
        for name in self._cond.order:
            a = None
            for parent, allowed in self._cond.rules[name]:
                hit = xp.any(codes[parent][..., None] == xp.asarray(allowed), axis=-1)
                if active[parent] is not None:
                    hit = hit & active[parent]
                a = hit if a is None else a & hit
            active[name] = a
        return active, codes

    def relevance(self, U: Any):
        """Relevance mask ``delta(x)`` of Swersky et al. 2014 (Sec. 2): 1 on active parameters' columns.

        A parameter is relevant when its condition holds and its parents are relevant (nested
        conditions); decision columns are decoded as :meth:`decode` does (argmax of a one-hot
        block, the bin of an integer). The structure is static, so the mask is traceable.

        Args:
          U: ``(..., dim)`` points of the cube: a NumPy array (NumPy path, float64) or a JAX
            array / tracer (``jax.numpy`` path, usable inside ``jit``/``vmap``/``grad``).
        Returns:
          ``(..., dim)`` 0/1 floats (the dtype of ``U`` on the JAX path).

        The two paths agree exactly except on subnormal inputs, which XLA on CPU flushes to zero
        (a one-hot block ``(0, 1e-311)`` is then a tie, decided for the first choice).
        """
        xp = _namespace(U)
        U = _as_points(U, xp, self._dim, "relevance")
        dtype = _float_dtype(U, xp)
        if self._cond is None:
            return xp.ones(U.shape, dtype=dtype)
        act, _ = self._activity(U, xp)
        ones = xp.ones(U.shape[:-1], dtype=bool)
        A = xp.stack([ones if act[n] is None else act[n] for n in self._params], axis=-1)
        return A[..., self._column_param()].astype(dtype)

    def _column_param(self) -> np.ndarray:
        """``(dim,)`` index of the parameter owning each column."""
        return np.repeat(np.arange(len(self._params)), [p.width for p in self._params.values()])

    # ------------------------------------------------------------------ leaves
    def leaves(self) -> tuple[tuple[tuple[str, Any], ...], ...]:
        """Every leaf: a full assignment of the active decision parameters, as name-sorted items.

        Enumerated in a deterministic order: decision parameters parents-first (definition order
        where free), values in domain order (a depth-first left-to-right reading of a tree). An
        unconditional space has the single leaf ``()``.
        """
        if "leaves" not in self._cache:
            self._cache["leaves"] = self._enumerate_leaves()
        return self._cache["leaves"][0]

    def _enumerate_leaves(self):
        partial: list[dict] = [{}]
        if self._cond is not None:
            for name in self._cond.order:
                if name not in self._cond.decisions:
                    continue
                p, grown = self._params[name], []
                for a in partial:
                    if self._holds(name, a):
                        grown.extend({**a, name: p._value_of_code(c)} for c in range(p._n_codes))
                    else:
                        grown.append(a)
                    if len(grown) > _MAX_LEAVES:
                        raise ValueError(
                            f"parameter {name!r}: the space has more than {_MAX_LEAVES} leaves "
                            f"(assignments of the decision parameters); use fewer decision values"
                        )
                partial = grown
        items = tuple(tuple(sorted(a.items(), key=lambda kv: kv[0])) for a in partial)
        # codes, not values, identify a leaf: choices True and 1 are equal as dict keys
        keys = {self._leaf_key(a): i for i, a in enumerate(partial)}
        return items, keys, partial

    def _leaf_key(self, assignment: Mapping) -> tuple:
        return tuple(sorted((n, self._params[n]._code(v)) for n, v in assignment.items()))

    def _leaf_active(self, p: int) -> set:
        """Names active in leaf ``p``."""
        assignment = self._enumerate_cached()[2][p]
        if self._cond is None:
            return set(self._params)
        return {name for name in self._cond.order if self._holds(name, assignment)}

    def _enumerate_cached(self):
        self.leaves()
        return self._cache["leaves"]

    def _leaf_id(self, leaf: Any) -> int:
        """Index of a leaf given as an index, an assignment mapping or its items."""
        n = len(self.leaves())
        if isinstance(leaf, numbers.Integral) and not isinstance(leaf, (bool, np.bool_)):
            if not 0 <= int(leaf) < n:
                raise ValueError(f"leaf index {leaf} out of range [0, {n})")
            return int(leaf)
        if isinstance(leaf, (tuple, list)) and all(isinstance(i, tuple) and len(i) == 2 for i in leaf):
            leaf = dict(leaf)
        if isinstance(leaf, Mapping):
            try:
                key = self._leaf_key(leaf)
            except (KeyError, ValueError):
                key = None
            index = self._enumerate_cached()[1].get(key)
            if index is None:
                raise ValueError(f"{dict(leaf)!r} is not a leaf of this space; see Space.leaves()")
            return index
        raise ValueError(f"leaf must be an index or a decision assignment, got {leaf!r}")

    def leaf_index(self, x: Any):
        """Leaf of configurations or of encoded points.

        Args:
          x: a configuration (mapping), a list of configurations, or encoded points
            ``(..., dim)`` (NumPy, or JAX: traceable).
        Returns:
          an ``int`` for one configuration, else an integer array of leaf indices into
          :meth:`leaves` (shape ``(n,)`` for a list, ``(...)`` for points).
        """
        if isinstance(x, Mapping):
            return self._leaf_of_config(x)
        if isinstance(x, (list, tuple)) and len(x) and all(isinstance(c, Mapping) for c in x):
            return np.array([self._leaf_of_config(c) for c in x], dtype=np.int64)
        xp = _namespace(x)
        U = _as_points(x, xp, self._dim, "leaf_index")
        if not self.decisions:
            return xp.zeros(U.shape[:-1], dtype=int)
        act, codes = self._activity(U, xp)
        rows = xp.stack([codes[d] if act[d] is None else xp.where(act[d], codes[d], -1)
                         for d in self.decisions], axis=-1)
        table = xp.asarray(self._leaf_code_table())
        return xp.argmax(xp.all(rows[..., None, :] == table, axis=-1), axis=-1)

    def _leaf_of_config(self, config: Mapping) -> int:
        if self._cond is None:
            return 0
        values, _ = self._decide(config)
        return self._enumerate_cached()[1][self._leaf_key(values)]

    def _leaf_code_table(self) -> np.ndarray:
        """``(P, n_decisions)`` codes of each leaf's decisions, -1 where a decision is inactive."""
        if "codes" not in self._cache:
            partial = self._enumerate_cached()[2]
            self._cache["codes"] = np.array(
                [[self._params[d]._code(a[d]) if d in a else -1 for d in self.decisions] for a in partial],
                dtype=np.int64,
            ).reshape(len(partial), len(self.decisions))
        return self._cache["codes"]

    def _leaf_points(self, rng: np.random.Generator, p: int, n: int) -> np.ndarray:
        """``n`` uniform points of leaf ``p``: uniform in the cube, decision columns set to the leaf's values."""
        U = rng.random((n, self._dim))
        for name, value in self._enumerate_cached()[2][p].items():
            U[:, self._columns[name]] = self._params[name].encode_values([value])
        return U

    def sample_leaf(self, rng: Any, leaf: Any, n: int) -> list[dict]:
        """``n`` configurations of one leaf, uniform over its active non-decision parameters.

        Args:
          rng: a ``numpy.random.Generator``, an int seed or a ``jax.random`` key.
          leaf: a leaf index, or a decision assignment (mapping or items, as in :meth:`leaves`).
          n: number of configurations.
        """
        n = _check_count(n)
        return self.decode_many(self._leaf_points(_as_generator(rng), self._leaf_id(leaf), n))

    # ------------------------------------------------------------------ tree structure
    def tree(self) -> TreeStructure:
        """Static structure of Jenatton et al.'s tree-structured semi-parametric GP (Sec. 2.1, 2.4).

        Leaves are those of :meth:`leaves`. The inner nodes are

        (a) every decision parameter: its leaf set is the leaves in which it is active (in a
            tree: the leaves below it), with a constant feature (``bias=True``, the scalar
            ``c_v`` of eq. (1));
        (b) every distinct activity set of the *shared* non-decision parameters: a non-decision
            parameter is shared if it is active in >= 2 leaves; its node's leaf set is the set of
            leaves where it is active and its columns are its encoded columns (one-hot columns
            for a categorical, as in Sec. 2.4).

        Nodes with the same leaf set merge (columns concatenated in column order, bias OR-ed), so
        a shared parameter active exactly below a decision node is attached to that node (the
        ``r_8``, ``r_9`` of Fig. 1, bottom). Leaf ``p``'s own GP ``g_p`` sees the columns of the
        non-decision parameters active in leaf ``p`` only. Decision columns are constant within a
        leaf and appear nowhere. Jenatton's "independent topology" (Fig. 3, top) is expressed by
        duplicating parameters per leaf, the "shared topology" (Fig. 3, bottom) by sharing them.
        An unconditional space is one leaf seeing every column, with no inner node.

        Nodes are ordered by first appearance: decision parameters, then shared parameters, in
        definition order.
        """
        if "tree" not in self._cache:
            self._cache["tree"] = self._build_tree()
        return self._cache["tree"]

    def _build_tree(self) -> TreeStructure:
        n_leaves = len(self.leaves())
        active = [self._leaf_active(p) for p in range(n_leaves)]
        where = {name: tuple(p for p in range(n_leaves) if name in active[p]) for name in self._params}
        decisions = set(self.decisions)
        groups: dict[tuple, list] = {}  # leaf set -> [columns, bias]; dicts keep first-seen order
        for name in self._params:
            if name in decisions and where[name]:
                groups.setdefault(where[name], [[], False])[1] = True
        for name in self._params:
            if name not in decisions and len(where[name]) >= 2:
                sl = self._columns[name]
                groups.setdefault(where[name], [[], False])[0].extend(range(sl.start, sl.stop))
        nodes = tuple(TreeNode(leaves, tuple(sorted(cols)), bias) for leaves, (cols, bias) in groups.items())
        leaf_columns = tuple(
            tuple(c for name in self._params if name not in decisions and where[name] == (p,)
                  for c in range(self._columns[name].start, self._columns[name].stop))
            for p in range(n_leaves)
        )
        return TreeStructure(self.leaves(), leaf_columns, nodes)

    def _feature_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """``(d,)`` column of each feature of ``z`` (-1: the constant 1) and ``(P, d)`` 0/1 path mask."""
        if "features" not in self._cache:
            tree = self.tree()
            cols, mask = [], []
            for node in tree.nodes:
                on_path = np.isin(np.arange(tree.n_leaves), node.leaves).astype(np.float64)
                for c in ((-1,) if node.bias else ()) + node.columns:
                    cols.append(c)
                    mask.append(on_path)
            mask = np.stack(mask, axis=1) if mask else np.zeros((tree.n_leaves, 0))
            self._cache["features"] = (np.asarray(cols, dtype=np.int64), mask)
        return self._cache["features"]

    def tree_features(self, U: Any, leaf_idx: Any):
        """Feature vectors ``z`` of Jenatton et al. Sec. 2.4, so that ``c^T z`` is the inner-node term.

        ``z`` concatenates ``r_v`` over the nodes of :meth:`tree` in order, each block being
        ``[1 (if bias), U[columns]]``, zero for the nodes not on the row's path (``z_p``'s
        entries for ``v`` outside ``V_p``).

        Args:
          U: ``(..., dim)`` encoded points (NumPy, or JAX: traceable).
          leaf_idx: ``(...)`` integer leaf of each row (e.g. :meth:`leaf_index`).
        Returns:
          ``(..., d)`` with ``d = tree().feature_dim``.
        """
        xp = _namespace(U) if _namespace(leaf_idx) is np else _namespace(leaf_idx)
        U = _as_points(U, xp, self._dim, "tree_features")
        idx = xp.asarray(leaf_idx)
        if idx.shape != U.shape[:-1]:
            raise ValueError(f"tree_features: leaf_idx must have shape {U.shape[:-1]}, got {idx.shape}")
        n_leaves = len(self.leaves())
        if xp is np:
            if not np.issubdtype(idx.dtype, np.integer):
                raise ValueError(f"tree_features: leaf_idx must be integers, got {idx.dtype}")
            if idx.size and (idx.min() < 0 or idx.max() >= n_leaves):
                raise ValueError(f"tree_features: leaf_idx out of range [0, {n_leaves})")
        cols, mask = self._feature_tables()
        dtype = _float_dtype(U, xp)
        values = xp.where(xp.asarray(cols) >= 0, U[..., np.maximum(cols, 0)], 1.0)
        return (xp.asarray(mask, dtype=dtype)[idx] * values).astype(dtype)

    # ------------------------------------------------------------------ sampling
    def sample(self, rng: Any, n: int) -> list[dict]:
        """``n`` configurations decoded from uniform points of the cube.

        ``rng`` is a ``numpy.random.Generator``, an int seed, or a ``jax.random`` key (from
        which a NumPy seed is drawn).
        """
        n = _check_count(n)
        return self.decode_many(_as_generator(rng).random((n, self._dim)))

    def sobol(self, n: int, seed: int) -> np.ndarray:
        """``n`` scrambled Sobol points ``(n, dim)`` in the cube, reproducible by ``seed``.

        ``n`` need not be a power of two: the next power of two is drawn and the first ``n``
        points are kept (a prefix of a scrambled Sobol sequence is still low-discrepancy, only
        not perfectly balanced).
        """
        n = _check_count(n)
        if n == 0:
            return np.zeros((0, self._dim))
        from scipy.stats import qmc

        m = max(0, math.ceil(math.log2(n)))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*balance properties.*")
            try:
                engine = qmc.Sobol(d=self._dim, scramble=True, rng=seed)
            except TypeError:  # scipy < 1.15 spells it seed
                engine = qmc.Sobol(d=self._dim, scramble=True, seed=seed)
            pts = engine.random_base2(m)
        return np.asarray(pts[:n], dtype=np.float64)

    def initial_points(self, n: int, seed: int) -> np.ndarray:
        """Encoded initial design ``(n, dim)``, reproducible by ``seed``; row ``i`` does not depend on ``n``.

        Unconditional space: ``sobol(n, seed)``. Conditional space: first one uniform point per
        leaf, leaves in a seeded random order (Jenatton et al. 2017, Sec. 4: "one random candidate
        drawn per conditional path"; random order so that a design shorter than the number of
        leaves is not biased towards the first ones), then the Sobol points ``sobol(n - P, seed)``.
        Inactive columns hold uniform noise.
        """
        n = _check_count(n)
        if self._cond is None:
            return self.sobol(n, seed)
        rng = np.random.default_rng(seed)
        n_leaves = len(self.leaves())
        first = [self._leaf_points(rng, int(p), 1) for p in rng.permutation(n_leaves)]
        first = np.concatenate(first)
        if n <= n_leaves:
            return first[:n]
        return np.concatenate([first, self.sobol(n - n_leaves, seed)])

    def initial_design(self, n: int, seed: int) -> list[dict]:
        """``decode_many(initial_points(n, seed))``: a space-filling initial design (one point per leaf first)."""
        return self.decode_many(self.initial_points(n, seed))

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict:
        """JSON-able definition; ``Space.from_dict(s.to_dict()) == s``."""
        return {"params": [{"name": name, **p.to_dict()} for name, p in self._params.items()]}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Space":
        if not isinstance(d, Mapping) or not isinstance(d.get("params"), list):
            raise ValueError("a space dict must have a 'params' list (see Space.to_dict)")
        params: dict[str, _Param] = {}
        for entry in d["params"]:
            if not isinstance(entry, Mapping) or "name" not in entry:
                raise ValueError(f"each parameter entry needs a 'name', got {entry!r}")
            name = entry["name"]
            if not isinstance(name, str):
                raise ValueError(f"parameter names must be strings, got {name!r}")
            if name in params:
                raise ValueError(f"duplicate parameter {name!r}")
            kind = PARAM_TYPES.get(entry.get("type"))
            if kind is None:
                raise ValueError(
                    f"parameter {name!r}: unknown type {entry.get('type')!r}; "
                    f"expected one of {sorted(PARAM_TYPES)}"
                )
            try:
                params[name] = kind._from_fields(entry)
            except KeyError as e:
                raise ValueError(f"parameter {name!r}: missing field {e}") from None
            except ValueError as e:
                raise _prefixed(name, e) from None
        return cls(params)

    def __repr__(self) -> str:
        inner = ", ".join(f"{name!r}: {p!r}" for name, p in self._params.items())
        return f"Space({{{inner}}})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Space):
            return NotImplemented
        return _canonical(self) == _canonical(other)

    def __hash__(self) -> int:
        return hash(_canonical(self))


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


def _fill_values(fill: Any, shape: tuple) -> np.ndarray:
    if isinstance(fill, np.random.Generator):
        return fill.random(shape)
    if _is_real_number(fill) and 0.0 <= float(fill) <= 1.0:
        return np.full(shape, float(fill))
    raise ValueError(f"fill must be a number in [0, 1] or a numpy Generator, got {fill!r}")


def _namespace(x: Any):
    """``jax.numpy`` for JAX arrays and tracers, else ``numpy`` (jax is imported only when needed)."""
    if type(x).__module__.split(".")[0] in ("jax", "jaxlib"):
        import jax.numpy as jnp

        return jnp
    return np


def _as_points(U: Any, xp, dim: int, what: str):
    U = xp.asarray(U, dtype=np.float64) if xp is np else xp.asarray(U)
    if U.ndim < 1 or U.shape[-1] != dim:
        raise ValueError(f"{what} expects points of shape (..., {dim}), got {tuple(U.shape)}")
    return U


def _float_dtype(U, xp):
    return U.dtype if xp.issubdtype(U.dtype, xp.floating) else xp.result_type(float)


def _canonical(space: Space) -> str:
    # order-sensitive (columns follow definition order) and type-sensitive (1 vs True)
    return json.dumps(space.to_dict())


def _check_count(n: Any) -> int:
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    return int(n)


def _as_generator(rng: Any) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        return np.random.default_rng(int(rng))
    if hasattr(rng, "dtype") and hasattr(rng, "shape"):  # a jax key (typed or raw uint32)
        import jax

        bits = np.asarray(jax.random.bits(rng, (4,), dtype=np.uint32))
        return np.random.default_rng([int(b) for b in bits])
    raise ValueError(
        f"rng must be a numpy Generator, an int seed or a jax.random key, got {type(rng).__name__}"
    )
