"""A study's store: a directory where its runs are kept as they progress, and where workers meet.

Layout (every file written whole or not at all: a temporary file, then an atomic rename)::

    PATH/study.json                  what determines the results: objective, space, budget, stages, each arm's
                                     settings (a later call is checked against it)
    PATH/runs/<arm>/<seed>.npz       a finished run: values, points, seconds per evaluation, diagnostics
    PATH/partial/<arm>/<seed>.npz    a run in progress: its values so far and the whole-run program's carry
                                     after its last segment (:class:`jbo.many.Carry`), to continue from

Arms' directory names are their names, percent-encoded. A run is counted once: by its file, whoever wrote it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import json
import os
import tempfile
import urllib.parse

import numpy as np

FORMAT = 1
HEADER = "study.json"


class StoreError(ValueError):
    """A store was written for another study (a ``ValueError`` naming the difference)."""


def describe_objective(fn) -> dict:
    """What identifies an objective across processes: its import name (a bound method also names its owner,
    a ``functools.partial`` its arguments) and, where the source can be read, a digest of it.

    Returns:
      ``{"name": ..., "source": digest or None}``.
    """
    parts = []
    target = fn
    while isinstance(target, functools.partial):
        parts.append(f"partial({target.args!r}, {sorted(target.keywords.items())!r})")
        target = target.func
    owner = getattr(target, "__self__", None)
    function = getattr(target, "__func__", target)
    function = getattr(function, "__wrapped__", function)  # jax.jit and functools.wraps keep the original here
    name = f"{getattr(function, '__module__', '?')}:{getattr(function, '__qualname__', type(function).__name__)}"
    if owner is not None:
        described = getattr(owner, "name", None)
        name += f" of {type(owner).__qualname__}" + (f" {described!r}" if isinstance(described, str) else "")
        for field in ("fn", "bounds"):  # jbo's benchmark problems: the function and the box they were built with
            value = getattr(owner, field, None)
            if isinstance(value, np.ndarray):
                name += f" {field}={value.tolist()!r}"
    try:
        source = hashlib.sha256(inspect.getsource(function).encode()).hexdigest()[:16]
    except (OSError, TypeError):
        source = None
    return {"name": " ".join([name] + parts), "source": source}


def _atomic_write(path: str, write) -> None:
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as f:
            write(f)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise


@contextlib.contextmanager
def _locked(path: str):
    """An exclusive lock on ``path + ".lock"`` where the platform has one (header updates by several drivers)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no fcntl: one driver per store
        yield
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _differences(stored, given, prefix="") -> list[str]:
    """Paths where two JSON values differ (``a.b``), each with both values."""
    if isinstance(stored, dict) and isinstance(given, dict):
        out = []
        for key in sorted(set(stored) | set(given)):
            out += _differences(stored.get(key), given.get(key), f"{prefix}.{key}" if prefix else str(key))
        return out
    return [] if stored == given else [f"{prefix or 'value'}: stored {stored!r}, given {given!r}"]


class Store:
    """The store of one study at ``path`` (created on first use).

    Args:
      path: the directory.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)

    # -- the header ------------------------------------------------------------------------------------
    def header(self) -> dict | None:
        """The stored ``study.json``, or ``None`` for a new store."""
        try:
            with open(os.path.join(self.path, HEADER), encoding="utf-8") as f:
                return json.load(f)
        except FileNotFoundError:
            return None

    def open(self, header: dict, normalise=None) -> dict:
        """Check ``header`` (objective, space, budget, stages, arms) against the stored one and add its new arms.

        ``normalise``: ``arm settings -> arm settings``, applied to a stored arm before the comparison (an option
        added to jbo since the store was written takes its default there); ``None``: compared as stored.

        Raises:
          StoreError: the store was written for another objective, space, budget or stages, or with other
            options for an arm of the same name; the message names each difference.
        Returns:
          the header now stored.
        """
        path = os.path.join(self.path, HEADER)
        header = json.loads(json.dumps(header))
        with _locked(path):
            stored = self.header()
            if stored is None:
                stored = {"format": FORMAT, **header}
            else:
                problems = []
                for field in ("objective", "space", "budget", "stages"):
                    problems += [f"{field} {d}" for d in _differences(stored.get(field), header.get(field))]
                for arm, settings in header["arms"].items():
                    if arm in stored["arms"]:
                        kept = stored["arms"][arm]
                        if normalise is not None:
                            try:
                                kept = json.loads(json.dumps(normalise(kept)))
                            except (TypeError, ValueError):
                                pass  # not readable as settings here: compared as stored
                        problems += [f"arm {arm!r} {d}" for d in _differences(kept, settings)]
                if problems:
                    raise StoreError(f"the store {self.path!r} holds another study: " + "; ".join(problems)
                                     + ". Use another store, or the stored study's options.")
                stored["arms"].update({a: s for a, s in header["arms"].items() if a not in stored["arms"]})
            _atomic_write(path, lambda f: f.write(json.dumps(stored, indent=1).encode()))
        return stored

    # -- runs --------------------------------------------------------------------------------------------
    def _file(self, kind: str, arm: str, seed: int) -> str:
        return os.path.join(self.path, kind, urllib.parse.quote(arm, safe=""), f"{int(seed)}.npz")

    def finished(self, arm: str, seed: int) -> dict | None:
        """The finished run's arrays (``values``, ``x``, ``seconds``, ``info:<name>``), or ``None``."""
        return _load(self._file("runs", arm, seed))

    def is_finished(self, arm: str, seed: int) -> bool:
        return os.path.exists(self._file("runs", arm, seed))

    def save_finished(self, arm: str, seed: int, arrays: dict) -> None:
        """Store a finished run and forget its partial record."""
        _save(self._file("runs", arm, seed), arrays)
        with contextlib.suppress(OSError):
            os.remove(self._file("partial", arm, seed))

    def partial(self, arm: str, seed: int) -> dict | None:
        """The run in progress (``position``, ``values``, ``x``, ``seconds``, ``carry:<i>``), or ``None``."""
        return _load(self._file("partial", arm, seed))

    def save_partial(self, arm: str, seed: int, arrays: dict) -> None:
        _save(self._file("partial", arm, seed), arrays)

    def runs(self, kind: str = "runs") -> dict[str, list[int]]:
        """``{arm: [seeds]}`` of the finished (``"runs"``) or unfinished (``"partial"``) runs stored."""
        out = {}
        folder = os.path.join(self.path, kind)
        with contextlib.suppress(FileNotFoundError):
            for quoted in sorted(os.listdir(folder)):
                seeds = sorted(int(name[:-4]) for name in os.listdir(os.path.join(folder, quoted))
                               if name.endswith(".npz") and name[:-4].lstrip("-").isdigit())
                if seeds:
                    out[urllib.parse.unquote(quoted)] = seeds
        return out


def _save(path: str, arrays: dict) -> None:
    _atomic_write(path, lambda f: np.savez_compressed(f, **arrays))


def _load(path: str) -> dict | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except FileNotFoundError:
        return None
