"""Parameter types of a :class:`~jbo.spaces.Space`: one parameter's domain, checks and encoding.

A parameter object does not know its own name (``Space`` maps names to parameters), so its errors
do not name it; ``Space`` prefixes them. Each type implements the small protocol of ``_Param``
(see its docstring), which ``Space`` composes column block by column block.

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
"""

from __future__ import annotations

import abc
import json
import math
import numbers
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["Real", "Integer", "Categorical", "PARAM_TYPES"]

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
    * ``_structure(decision)``: the parameter as a compiled program sees it (no ``when``): what its
      encoding in the cube depends on, and nothing else; ``decision``: it is the parent of a condition
      (:attr:`jbo.spaces.Space.structure`).

    Traceable array maps (``xp`` is numpy or jax.numpy; ``U`` a float array, not clipped yet):

    * ``_round_trip_array(U (..., width), xp) -> (..., width)``: the canonical encoding of what
      ``U`` decodes to, ``encode_values(decode_values(U))`` as an array.
    * ``_decode_array(U (..., width), xp) -> (...)``: the decoded value as an array (see
      :meth:`jbo.spaces.Space.decode_arrays`).
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

    @abc.abstractmethod
    def _round_trip_array(self, U, xp):
        """See the class docstring."""

    @abc.abstractmethod
    def _decode_array(self, U, xp):
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

    def __reduce__(self):  # immutable: pickled as its definition (a space sent to a worker process)
        return type(self)._from_fields, (self.to_dict(),)

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

    def _values(self, u, xp=np):
        """Value (a float array) of ``u`` ``(...)``; ``xp`` is numpy or jax.numpy.

        The one definition of the decoding: ``decode_values`` and ``_decode_array`` both call it.
        """
        u = xp.clip(u, 0.0, 1.0)
        t = self._a + u * (self._b - self._a)
        v = xp.exp(t) if self.log else t
        # the faces of the cube map exactly onto the bounds (no exp/log round-off there)
        v = xp.where(u <= 0.0, self.low, xp.where(u >= 1.0, self.high, v))
        return xp.clip(v, self.low, self.high)

    def decode_values(self, U: np.ndarray) -> list:
        return [float(x) for x in self._values(np.asarray(U, dtype=np.float64)[:, 0])]

    def _round_trip_array(self, U, xp):
        # encode(decode(u)) is u clipped to [0, 1], up to the round-off of decoding and re-encoding
        return xp.clip(U, 0.0, 1.0)

    def _decode_array(self, U, xp):
        return self._values(U[..., 0], xp)

    def _structure(self, decision: bool = False) -> "Real":
        # in the cube a real is a clipped column whatever its bounds and scale
        return Real(0.0, 1.0)

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
        return self._centres(v)[:, None]

    def _centres(self, v, xp=np):
        """Encoding (bin centre) of integers ``v`` ``(...)`` given as floats; ``xp`` is numpy or jax.numpy.

        The one definition of the encoding: ``encode_values`` and ``_round_trip_array`` call it.
        """
        if self.log:  # centre of [log(v - 1/2), log(v + 1/2)]
            centre = 0.5 * (xp.log(v - 0.5) + xp.log(v + 0.5))
            u = (centre - self._a) / (self._b - self._a)
        else:  # centre of bin v - low out of n equal bins
            u = (v - self.low + 0.5) / self.n_values
        return xp.clip(u, 0.0, 1.0)

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

    def _round_trip_array(self, U, xp):
        return self._centres(self._bin_values(U[..., 0], xp), xp)[..., None]

    def _decode_array(self, U, xp):
        return self._bin_values(U[..., 0], xp)

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

    def _structure(self, decision: bool = False) -> "Integer | Real":
        # Equal-width bins depend on their number only, which a program takes as an argument (Space.bins)
        # unless the integer decides conditions (the tree has a branch per value); log-spaced bins are placed
        # by the bounds themselves.
        if self.log:
            return Integer(self.low, self.high, log=True)
        return Integer(0, self.n_values - 1) if decision else Real(0.0, 1.0)

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

    @property
    def _numeric(self) -> bool:
        """Whether every choice is a real number (int or float, not bool)."""
        return all(_is_real_number(c) for c in self.choices)

    def _round_trip_array(self, U, xp):
        # the exact one-hot vector of the decoded choice, as encode_values builds it
        return (xp.arange(self.width) == self._codes(U, xp)[..., None]).astype(U.dtype)

    def _decode_array(self, U, xp):
        codes = self._codes(U, xp)
        if self._numeric:  # the chosen value, in U's float dtype
            return xp.asarray(self.choices, dtype=U.dtype)[codes]
        return codes.astype(xp.int32)  # the index of the choice

    def _value_of_code(self, code: int) -> Any:
        return self.choices[int(code)]

    @property
    def _n_codes(self) -> int:
        return self.width

    def _structure(self, decision: bool = False) -> "Categorical":
        # a one-hot block of k columns whatever the choices are
        return Categorical(list(range(self.width)))

    def to_dict(self) -> dict:
        return {"type": self.type_name, "choices": list(self.choices), **self._when_fields()}

    @classmethod
    def _from_fields(cls, d: Mapping) -> "Categorical":
        return cls(d["choices"], when=d.get("when"))

    def __repr__(self) -> str:
        return f"Categorical({list(self.choices)!r}{self._when_repr()})"


PARAM_TYPES: dict[str, type[_Param]] = {c.type_name: c for c in (Real, Integer, Categorical)}
_TYPE_LIST = "Real, Integer, Categorical"
