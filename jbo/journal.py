"""The run journal: JSON lines, the settings first, then one line per observation (and, in a
parallel run, one per point sent to a worker: :func:`read_run`).

Each line is flushed and ``fsync``-ed before the next suggestion, so a run killed at any moment
(SIGKILL included) loses no told observation. A half-written last line, the trace of a crash in
the middle of a write, is ignored when the journal is read back; a corrupt line anywhere else is an
error, since silently dropping an evaluation would defeat the journal's purpose.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any


class Journal:
    """Append-only JSONL writer.

    Args:
      path: file to append to (created if missing).
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        directory = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(directory, exist_ok=True)
        self._file = open(self.path, "a", encoding="utf-8")

    def write(self, record: dict) -> None:
        """Append one record and force it to disk."""
        self._file.write(json.dumps(record, allow_nan=False, default=_jsonable) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing useful to do
            pass


def _jsonable(value: Any):
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def clean_value(value: Any) -> float | None:
    """A JSON-safe objective value: ``None`` for nan/inf/missing."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def read(path: str | os.PathLike) -> tuple[dict, list[dict]]:
    """Read a journal.

    Returns:
      ``(header, observations)``: the settings record and the observation records in order.
    Raises:
      ValueError: empty journal, no settings line first, or a corrupt line before the last.
    """
    header, observations, _ = read_run(path)
    return header, observations


def read_run(path: str | os.PathLike) -> tuple[dict, list[dict], list[dict]]:
    """Read a journal with the points that were sent to a worker and never came back.

    A parallel run (:func:`jbo.minimize` with ``n_workers``) writes a ``pending`` record
    (``{"type": "pending", "id": ..., "config": ..., "x": [...]}``) when it sends a point to a worker
    and the observation record, with the same ``id``, when the result returns. Journals without
    pending records or ids (sequential runs, older versions) read as before.

    Returns:
      ``(header, observations, pending)``: the settings record, the observation records in order,
      and the pending records (first of each id) that no observation answers, in order.
    Raises:
      ValueError: as :func:`read`.
    """
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    complete = lines[:-1]  # the text after the last newline is a partial write (or empty)
    records = []
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as err:
            if number == len(complete) and not lines[-1]:
                break  # an unterminated-looking final line that still got its newline: ignore it
            raise ValueError(f"{path}: line {number} is not valid JSON ({err.msg})") from err
    if lines[-1].strip():
        try:  # a final line without newline is kept only if it parses completely
            records.append(json.loads(lines[-1]))
        except json.JSONDecodeError:
            pass
    if not records or records[0].get("type") != "settings":
        raise ValueError(f"{path}: the first line must be the run's settings record")
    observations = [r for r in records[1:] if r.get("type") == "observation"]
    returned = {r["id"] for r in observations if r.get("id") is not None}
    pending, seen = [], set()
    for r in records[1:]:
        if r.get("type") == "pending" and r.get("id") not in returned and r.get("id") not in seen:
            seen.add(r.get("id"))
            pending.append(r)
    return records[0], observations, pending
