"""``Space``: named parameters encoded side by side in the unit cube ``[0, 1]^dim``.

Composition
-----------
``Space`` lays the parameters' columns side by side in definition order
(``Space.columns`` maps each name to its slice). Every parameter class implements the same
small protocol -- ``width``, ``check_value``, ``encode_values`` (vectorised), ``decode_values``
(vectorised), ``to_dict``, and the traceable ``_round_trip_array`` and ``_decode_array`` --
and ``Space`` only composes them.

``Space`` validates configurations, encodes and decodes them (NumPy), round-trips encoded points
and decodes them to arrays (``decode_arrays``, ``active_arrays``: what jitted objectives receive),
computes the relevance mask and the leaves of a conditional space (NumPy or JAX), builds the
static tree structure of Jenatton et al. (:mod:`jbo.spaces.conditions`), draws random configurations,
and (de)serialises itself (``to_dict``/``from_dict``). Sobol sets and a run's initial design are drawn
inside the compiled programs (:mod:`jbo.design`).
"""

from __future__ import annotations

import difflib
import json
import numbers
from typing import Any, Mapping, Sequence

import numpy as np

from jbo.spaces.conditions import (
    _MAX_LEAVES,
    TreeNode,
    TreeStructure,
    _build_conditions,
    _fmt_rule,
)
from jbo.spaces.parameters import (
    _TYPE_LIST,
    PARAM_TYPES,
    Categorical,
    Integer,
    Real,
    _is_real_number,
    _Param,
)

__all__ = ["Space", "snap"]


def _prefixed(name: str, err: Exception) -> ValueError:
    return ValueError(f"parameter {name!r}: {err}")



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
    def structure(self) -> "Space":
        """This space as jbo's compiled programs see it: what its encoding in the unit cube depends on.

        Parameters are named by position (``p0``, ``p1``, ...); a :class:`Real` becomes ``Real(0, 1)``, and so
        does an :class:`Integer` on equal-width bins (their number is an argument of the programs,
        :attr:`bins`) unless it decides a condition (then ``Integer(0, n - 1)``); one with ``log=True`` keeps
        its bounds (its bins are spaced by them); a :class:`Categorical` of ``k`` choices has the choices
        ``0 .. k - 1``; conditions follow. With :attr:`bins`, two spaces of equal structure encode, round-trip,
        relate and split into leaves alike in the cube, so the programs of one serve the other: bounds, names
        and scales are handled by encoding and decoding, outside the programs.
        """
        if "structure" not in self._cache:
            names = {name: f"p{i}" for i, name in enumerate(self._params)}
            decisions = set(self.decisions)
            params = {}
            for name, p in self._params.items():
                skeleton = p._structure(name in decisions)
                if p.when:
                    when = {names[parent]: [self._params[parent]._structure(True)._value_of_code(c) for c in codes]
                            for parent, codes in self._cond.rules[name]}
                    skeleton = skeleton._with_when(when)
                params[names[name]] = skeleton
            structure = Space(params)
            self._cache["structure"] = self if structure == self else structure
        return self._cache["structure"]

    @property
    def bins(self) -> np.ndarray:
        """``(dim,)`` the number of equal-width bins of each column that :attr:`structure` turned from an
        :class:`Integer` into a real column, ``0`` elsewhere: the argument :func:`snap` takes."""
        if "bins" not in self._cache:
            bins = np.zeros(self._dim)
            skeleton = self.structure.params
            for (name, p), q in zip(self._params.items(), skeleton.values()):
                if isinstance(p, Integer) and isinstance(q, Real):
                    bins[self._columns[name]] = p.n_values
            self._cache["bins"] = bins
        return self._cache["bins"]

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

    def round_trip(self, U: Any, bins: Any = None):
        """``encode(decode(u))`` row-wise: the canonical encoding of what ``u`` decodes to.

        Integers snap to their bin centre and categoricals to an exact one-hot vector, so the
        model is fed the configuration that was actually evaluated. The columns of inactive
        parameters are kept as given.

        Args:
          U: a NumPy array (or anything ``np.asarray`` takes) of shape ``(n, dim)`` or ``(dim,)``:
            NumPy path, decoding to Python values and re-encoding them (float64; ``ValueError``
            on NaN or inf). Or a JAX array / tracer of shape ``(..., dim)``: ``jax.numpy`` path,
            usable inside ``jit``/``vmap``/``lax.scan`` (no finiteness check), in the dtype of
            ``U``: Real columns are clipped to ``[0, 1]``, Integer columns snap to their bin
            centre and Categorical blocks to the one-hot vector of their argmax (first on ties).
            It decodes to the same configurations as the NumPy path and agrees with it exactly on
            the one-hot blocks; Real and Integer columns agree up to round-off (an ulp or so:
            the NumPy path decodes and re-encodes Reals, XLA's ``log`` differs from NumPy's, and
            ``jit`` may turn a division by a constant into a product). As for :meth:`relevance`,
            XLA on CPU flushes subnormal inputs to zero.
          bins: on the JAX path, ``(dim,)`` bins of the integer columns a :attr:`structure` holds as reals
            (:attr:`bins` of the space it stands for), snapped to their centres (:func:`snap`); ``None``: none.
        Returns:
          an array of the shape of ``U`` (NumPy on the NumPy path, JAX on the JAX path).
        """
        xp = _namespace(U)
        if xp is not np:
            return self._round_trip_array(U, xp, bins)
        arr = np.asarray(U, dtype=np.float64)
        one = arr.ndim == 1
        M = self._as_matrix(arr[None, :] if one else arr, "round_trip")
        out = self._encode_valid(self.decode_many(M))
        if self._cond is not None:
            out = np.where(self.relevance(M) > 0, out, M)
        return out[0] if one else out

    def _round_trip_array(self, U, xp, bins=None):
        """The array path of :meth:`round_trip` (``xp`` is numpy or jax.numpy), ``(..., dim)``."""
        U = _as_points(U, xp, self._dim, "round_trip")
        U = U.astype(_float_dtype(U, xp))
        out = xp.concatenate(
            [p._round_trip_array(U[..., self._columns[name]], xp) for name, p in self._params.items()],
            axis=-1,
        )
        if bins is not None:
            out = snap(out, bins)
        if self._cond is not None:
            out = xp.where(self.relevance(U) > 0, out, U)
        return out

    # ------------------------------------------------------------------ traceable arrays
    def decode_arrays(self, U: Any) -> dict:
        """Values in user units of every parameter (active or not) at points ``U``, as arrays.

        This is what a jitted objective receives: encoded points are decoded with
        ``decode_arrays`` inside ``jit``/``vmap``/``lax.scan``, so a researcher writes
        ``fn(config)`` where ``config[name]`` is a JAX scalar (an array of shape ``(...)`` for a
        batch of points), and combines the branches of a conditional space with ``jnp.where``
        on :meth:`active_arrays`.

        Args:
          U: ``(..., dim)`` points of the cube: a JAX array / tracer (``jax.numpy`` path,
            traceable) or a NumPy array (NumPy path, float64). Clipped to ``[0, 1]`` as
            :meth:`decode` does.
        Returns:
          ``{name: (...) array}`` in definition order, decoded as :meth:`decode_many` decodes:

          * ``Real``: the value, a float array (log scale handled; within ``[low, high]``);
          * ``Integer``: the integer value as a float array of ``U``'s (float) dtype;
          * ``Categorical``: if every choice is a real number (int or float, not bool), the
            chosen value as a float array of ``U``'s dtype; otherwise the index of the choice
            in ``choices``, an int32 array.

          Inactive parameters of a conditional space are decoded too, from whatever their
          columns hold (a fill value): their values are meaningless, see :meth:`active_arrays`.
        """
        xp = _namespace(U)
        U = _as_points(U, xp, self._dim, "decode_arrays")
        U = U.astype(_float_dtype(U, xp))
        return {name: p._decode_array(U[..., self._columns[name]], xp) for name, p in self._params.items()}

    def active_arrays(self, U: Any) -> dict:
        """Whether each parameter is active at points ``U``, as boolean arrays (traceable).

        The per-parameter form of :meth:`relevance`; with :meth:`decode_arrays` it is what a
        jitted objective over a conditional space receives.

        Args:
          U: ``(..., dim)`` points of the cube, NumPy or JAX (array or tracer).
        Returns:
          ``{name: (...) bool array}`` in definition order; all ``True`` for the parameters that
          are always active (every parameter of an unconditional space).
        """
        xp = _namespace(U)
        U = _as_points(U, xp, self._dim, "active_arrays")
        U = U.astype(_float_dtype(U, xp))
        ones = xp.ones(U.shape[:-1], dtype=bool)
        if self._cond is None:
            return {name: ones for name in self._params}
        act, _ = self._activity(U, xp)
        return {name: ones if act[name] is None else act[name] for name in self._params}

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
        return self.tree().features(U.astype(_float_dtype(U, xp)), idx, xp)

    # ------------------------------------------------------------------ sampling
    def sample(self, rng: Any, n: int) -> list[dict]:
        """``n`` configurations decoded from uniform points of the cube.

        ``rng`` is a ``numpy.random.Generator``, an int seed, or a ``jax.random`` key (from
        which a NumPy seed is drawn).
        """
        n = _check_count(n)
        return self.decode_many(_as_generator(rng).random((n, self._dim)))

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



def snap(U, bins):
    """Columns with ``bins > 0`` moved to the centre of their equal-width bin, the others as they are
    (traceable): the round trip of the integers :attr:`Space.structure` leaves to an argument,
    ``Integer._round_trip_array`` with the number of values given as an array."""
    import jax.numpy as jnp

    bins = jnp.asarray(bins, U.dtype)
    count = jnp.maximum(bins, 1.0)
    code = jnp.minimum(jnp.floor(jnp.clip(U, 0.0, 1.0) * count), count - 1.0)
    return jnp.where(bins > 0, jnp.clip((code + 0.5) / count, 0.0, 1.0), U)


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
