"""Search spaces: encode configurations to the unit cube ``[0, 1]^D`` and decode them back.

Every model in jbo works in the unit cube; user units (log scales, integers, categories)
exist only at this edge. This module is plain NumPy: it runs once per suggestion, outside
any jitted code.

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
(vectorised), ``to_dict`` -- and ``Space`` only composes them. Conditional parameters
(``when={"parent": [values]}``, a tree of active parameters plus a relevance mask) can later
be added in ``Space`` without touching the per-parameter maps.

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
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["Real", "Integer", "Categorical", "Space", "PARAM_TYPES"]

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


class _Param(abc.ABC):
    """Protocol shared by the parameter types (kept small so ``Space`` can compose them).

    * ``width``: number of encoded columns.
    * ``check_value(v)``: normalised python value, or ``ValueError`` (without the name).
    * ``encode_values(values) -> (n, width)``: values already checked.
    * ``decode_values(U (n, width)) -> list``: python values; ``U`` is clipped to ``[0, 1]``.
    * ``to_dict()`` / ``_from_fields(d)``: JSON-able definition.
    """

    type_name: str = ""
    width: int = 1
    __slots__ = ()

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

    def __init__(self, low: float, high: float, log: bool = False):
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
        self._set(low=low, high=high, log=log, _a=a, _b=b)

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
        return {"type": self.type_name, "low": self.low, "high": self.high, "log": self.log}

    @classmethod
    def _from_fields(cls, d: Mapping) -> "Real":
        return cls(d["low"], d["high"], log=d.get("log", False))

    def __repr__(self) -> str:
        return f"Real({self.low!r}, {self.high!r}" + (", log=True)" if self.log else ")")


class Integer(_Param):
    """An integer parameter on ``{low, ..., high}`` (inclusive), one equal-width bin per integer.

    ``log=True`` makes the bins equal-width in log space (needs ``low >= 1``).
    """

    type_name = "integer"
    width = 1
    __slots__ = ("low", "high", "log", "_a", "_b")

    def __init__(self, low: int, high: int, log: bool = False):
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
        self._set(low=low, high=high, log=log, _a=a, _b=b)

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

    def decode_values(self, U: np.ndarray) -> list:
        u = np.clip(np.asarray(U, dtype=np.float64)[:, 0], 0.0, 1.0)
        if self.log:
            t = np.exp(self._a + u * (self._b - self._a))  # in [low - 1/2, high + 1/2]
            v = np.clip(np.floor(t + 0.5), self.low, self.high)
            # exp/log round-off may put v one bin off near an edge: compare u with the edges
            # in the cube, where the bins are defined
            edge = lambda w: (np.log(w - 0.5) - self._a) / (self._b - self._a)
            v = np.where((u < edge(v)) & (v > self.low), v - 1, v)
            v = np.where((u >= edge(v + 1)) & (v < self.high), v + 1, v)
        else:
            v = self.low + np.floor(u * self.n_values)
        v = np.clip(v, self.low, self.high)
        return [int(x) for x in v]

    def to_dict(self) -> dict:
        return {"type": self.type_name, "low": self.low, "high": self.high, "log": self.log}

    @classmethod
    def _from_fields(cls, d: Mapping) -> "Integer":
        return cls(d["low"], d["high"], log=d.get("log", False))

    def __repr__(self) -> str:
        return f"Integer({self.low}, {self.high}" + (", log=True)" if self.log else ")")


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

    def __init__(self, choices: Sequence):
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
        self._set(choices=tuple(norm), width=len(norm), _index=index)

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
        u = np.clip(np.asarray(U, dtype=np.float64), 0.0, 1.0)
        return [self.choices[i] for i in np.argmax(u, axis=1)]

    def to_dict(self) -> dict:
        return {"type": self.type_name, "choices": list(self.choices)}

    @classmethod
    def _from_fields(cls, d: Mapping) -> "Categorical":
        return cls(d["choices"])

    def __repr__(self) -> str:
        return f"Categorical({list(self.choices)!r})"


PARAM_TYPES: dict[str, type[_Param]] = {c.type_name: c for c in (Real, Integer, Categorical)}
_TYPE_LIST = "Real, Integer, Categorical"


def _prefixed(name: str, err: Exception) -> ValueError:
    return ValueError(f"parameter {name!r}: {err}")


class Space:
    """An ordered collection of named parameters, encoded side by side in ``[0, 1]^dim``."""

    __slots__ = ("_params", "_columns", "_dim")

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
        self._params = ps
        self._columns = columns
        self._dim = start

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

    # ------------------------------------------------------------------ validation
    def validate(self, config: Mapping) -> dict:
        """Normalised copy of ``config`` (python float / int / choice), in definition order."""
        if not isinstance(config, Mapping):
            raise ValueError(f"a configuration must be a mapping, got {type(config).__name__}")
        for key in config:
            if key not in self._params:
                close = difflib.get_close_matches(str(key), self.names, n=1) if isinstance(key, str) else []
                hint = f"; did you mean {close[0]!r}?" if close else f"; valid parameters: {list(self.names)}"
                raise ValueError(f"unknown parameter {key!r}{hint}")
        out = {}
        for name, p in self._params.items():
            if name not in config:
                raise ValueError(f"missing parameter {name!r}")
            try:
                out[name] = p.check_value(config[name])
            except ValueError as e:
                raise _prefixed(name, e) from None
        return out

    # ------------------------------------------------------------------ encode / decode
    def encode(self, config: Mapping) -> np.ndarray:
        """Unit-cube encoding ``(dim,)`` of one configuration (validated first)."""
        return self.encode_many([config])[0]

    def encode_many(self, configs: Sequence[Mapping]) -> np.ndarray:
        """Unit-cube encodings ``(n, dim)`` of several configurations."""
        valid = [self.validate(c) for c in configs]
        return self._encode_valid(valid)

    def _encode_valid(self, valid: list[dict]) -> np.ndarray:
        out = np.empty((len(valid), self._dim), dtype=np.float64)
        for name, p in self._params.items():
            out[:, self._columns[name]] = p.encode_values([c[name] for c in valid]).reshape(
                len(valid), p.width
            )
        return out

    def _as_matrix(self, U: Any, what: str) -> np.ndarray:
        U = np.asarray(U, dtype=np.float64)
        if U.ndim != 2 or U.shape[1] != self._dim:
            raise ValueError(f"{what} expects an array of shape (n, {self._dim}), got {U.shape}")
        if not np.all(np.isfinite(U)):
            raise ValueError(f"{what}: points must be finite (got NaN or inf)")
        return U

    def decode(self, u: Any) -> dict:
        """Configuration of one point ``(dim,)`` of the cube (clipped to ``[0, 1]`` first)."""
        u = np.asarray(u, dtype=np.float64)
        if u.shape != (self._dim,):
            raise ValueError(f"decode expects an array of shape ({self._dim},), got {u.shape}")
        return self.decode_many(u[None, :])[0]

    def decode_many(self, U: Any) -> list[dict]:
        """Configurations of the rows of ``U`` ``(n, dim)``."""
        U = self._as_matrix(U, "decode_many")
        cols = {name: p.decode_values(U[:, self._columns[name]]) for name, p in self._params.items()}
        return [{name: cols[name][i] for name in self._params} for i in range(U.shape[0])]

    def round_trip(self, U: Any) -> np.ndarray:
        """``encode(decode(u))`` row-wise: the canonical encoding of what ``u`` decodes to.

        Integers snap to their bin centre and categoricals to an exact one-hot vector, so the
        model is fed the configuration that was actually evaluated. Accepts ``(n, dim)`` or
        ``(dim,)`` and returns the same shape.
        """
        arr = np.asarray(U, dtype=np.float64)
        one = arr.ndim == 1
        M = self._as_matrix(arr[None, :] if one else arr, "round_trip")
        out = self._encode_valid(self.decode_many(M))
        return out[0] if one else out

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

    def initial_design(self, n: int, seed: int) -> list[dict]:
        """``decode_many(sobol(n, seed))``: a space-filling initial design."""
        return self.decode_many(self.sobol(n, seed))

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
