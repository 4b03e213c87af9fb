"""Values as JSON records, so that a journal can name the pieces a run was built from and a resumed run rebuild them.

A record is plain JSON for plain values, and for the rest:

* a function or class that can be imported again: ``{"$import": "package.module:name"}``;
* a dataclass or named tuple (a kernel expression, a model config of the user's, a surrogate defined as a
  class): ``{"$type": "package.module:Class", field: record, ...}``, rebuilt by calling the class with its
  fields (lists inside such a record come back as tuples: fields of frozen configs must hash);
* anything else (a lambda, a closure, a function defined in an interactive session):
  ``{"$unrecorded": "<description>"}``, which :func:`from_record` refuses with a :class:`RecordError`
  telling the caller to pass the object again.

Imports name the shortest public path (``jbo.kernels:Matern52`` rather than the module that defines it),
so records survive moving a class between a package's modules. Reading a record imports the modules it
names: read journals you trust, as you would a pickle.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import sys
from typing import Any

IMPORT, TYPE, UNRECORDED = "$import", "$type", "$unrecorded"


class RecordError(ValueError):
    """A record names something that cannot be rebuilt here (not importable, or not recorded at all)."""


def import_path(obj) -> str | None:
    """``"module:qualname"`` that imports ``obj`` again (the shortest public path), or ``None``.

    An object of the script being run (``__main__``) is named by the script's module name, as
    :mod:`multiprocessing` does for its spawned workers: ``python byo.py`` records ``byo:name``, which a
    process in the same directory imports (a script guards its work with ``if __name__ == "__main__":``).
    """
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        return None
    if module == "__main__":
        return _main_path(obj, qualname)
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        candidate = ".".join(parts[:depth])
        if _resolve(candidate, qualname) is obj:
            return f"{candidate}:{qualname}"
    return None


def _main_path(obj, qualname: str) -> str | None:
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", None)
    if not name:
        path = getattr(main, "__file__", None) or ""
        stem = os.path.splitext(os.path.basename(path))[0]
        name = stem if path.endswith(".py") and stem.isidentifier() else None
    target = main
    for part in qualname.split("."):
        target = getattr(target, part, None)
    return f"{name}:{qualname}" if name and target is obj else None


def _resolve(module: str, qualname: str):
    try:
        target = importlib.import_module(module)
    except Exception:  # a module that does not import here: not this path
        return None
    for part in qualname.split("."):
        target = getattr(target, part, None)
        if target is None:
            return None
    return target


def load(path: str):
    """The object an :func:`import_path` names; :class:`RecordError` if it does not import."""
    module, _, qualname = path.partition(":")
    try:
        target = importlib.import_module(module)
        for part in qualname.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as err:
        raise RecordError(f"cannot import {path!r} ({type(err).__name__}: {err}); make it importable or pass the "
                          "object again") from None
    return target


def to_record(value) -> Any:
    """A JSON-able record of ``value`` (see the module docstring)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        return value.item()  # a NumPy scalar
    if type(value) in (list, tuple):
        return [to_record(v) for v in value]
    if type(value) is dict:
        return {str(k): to_record(v) for k, v in value.items()}
    if isinstance(value, type) or callable(value) and not _has_fields(value):
        path = import_path(value)
        if path is not None:
            return {IMPORT: path}
        return {UNRECORDED: _describe(value)}
    if _has_fields(value):
        path = import_path(type(value))
        if path is None:
            return {UNRECORDED: _describe(value)}
        return {TYPE: path, **{name: to_record(v) for name, v in fields_of(value).items()}}
    return {UNRECORDED: _describe(value)}


def from_record(record, tuples: bool = False) -> Any:
    """The value a :func:`to_record` record stands for.

    Args:
      record: the record.
      tuples: read lists as tuples (inside a ``$type`` record, always).
    Raises:
      RecordError: the record names something not importable here, or was not recorded.
    """
    if isinstance(record, list):
        values = [from_record(v, tuples) for v in record]
        return tuple(values) if tuples else values
    if not isinstance(record, dict):
        return record
    if UNRECORDED in record:
        raise RecordError(f"{record[UNRECORDED]} was not recorded (it cannot be imported by name): pass it again")
    if IMPORT in record:
        return load(record[IMPORT])
    if TYPE in record:
        cls = load(record[TYPE])
        fields = {k: from_record(v, True) for k, v in record.items() if k != TYPE}
        try:
            return cls(**fields)
        except TypeError as err:
            raise RecordError(f"cannot rebuild {record[TYPE]} from its record: {err}") from None
    return {k: from_record(v, tuples) for k, v in record.items()}


def is_record(value) -> bool:
    """Whether ``value`` is a record of something other than plain JSON."""
    return isinstance(value, dict) and any(key in value for key in (IMPORT, TYPE, UNRECORDED))


def _has_fields(value) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type) or (
        isinstance(value, tuple) and hasattr(type(value), "_fields"))


def fields_of(value) -> dict:
    """The fields of a dataclass (those set in ``__init__``) or named tuple, by name."""
    if dataclasses.is_dataclass(value):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if f.init}
    return dict(value._asdict())


def _describe(value) -> str:
    kind = value if isinstance(value, type) else type(value)
    name = getattr(value, "__qualname__", None) or kind.__qualname__
    return f"{getattr(value, '__module__', kind.__module__)}:{name}"


def same_piece(record, value) -> bool:
    """Whether ``value`` is what ``record`` names, as far as this process can tell: its record is equal,
    except that functions and classes are compared by qualified name (a record written by a script names
    them by the script's module, which another process may not import)."""
    return _identity(record) == _identity(to_record(value))


def _identity(record):
    if isinstance(record, list):
        return [_identity(r) for r in record]
    if not isinstance(record, dict):
        return record
    for key in (IMPORT, UNRECORDED):
        if key in record:
            return ("function or class", str(record[key]).rpartition(":")[2])
    return {k: _identity(v) for k, v in record.items() if k != TYPE} | (
        {TYPE: _identity({IMPORT: record[TYPE]})} if TYPE in record else {})
