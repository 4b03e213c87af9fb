"""The stateful public surface: :class:`Optimizer` (ask/tell), :func:`minimize` and :class:`Result`.

A thin convenience around the functional core of :mod:`jbo.loop`; it validates at the edge, keeps
the history in user units and owns the journal.
"""

from __future__ import annotations

import json
import math
import os
import time
import traceback
from typing import Any, Callable, Mapping, NamedTuple

import jax
import numpy as np

from jbo import journal as journal_io
from jbo import loop
from jbo.spaces import Space


class Result(NamedTuple):
    """Outcome of :func:`minimize`.

    Attributes:
      best_config: best successful configuration (user units), ``None`` if all failed.
      best_value: its value (``inf`` if all failed).
      history: one dict per evaluation: ``config``, ``value``, ``status``, ``error``, ``seconds``.
      seconds: wall time of the run.
    """

    best_config: dict | None
    best_value: float
    history: list
    seconds: float

    @property
    def values(self) -> np.ndarray:
        """Objective values in evaluation order (``nan`` for failures)."""
        return np.array([np.nan if h["value"] is None else h["value"] for h in self.history])

    @property
    def best_so_far(self) -> np.ndarray:
        """Running minimum of the successful values (``inf`` before the first success)."""
        return np.minimum.accumulate(np.where(np.isnan(self.values), np.inf, self.values))


def _enable_dtype(dtype: str):
    if dtype == "float64" and not jax.config.jax_enable_x64:
        jax.config.update("jax_enable_x64", True)


class Optimizer:
    """Ask/tell Bayesian optimisation of a minimisation problem.

    Args:
      space: the search space.
      model, inference, acquisition, seed: see :class:`jbo.loop.Settings`.
      journal: path of a JSONL journal to append every observation to (optional).
      **options: any other field of :class:`jbo.loop.Settings` (``n_init``, ``kernel``,
        ``num_samples``, ``maximize={...}``, ...).

    Example::

        opt = jbo.Optimizer(space, model="gp", inference="slice", acquisition="ei", seed=0)
        cfg = opt.ask()
        opt.tell(cfg, f(cfg))
    """

    def __init__(self, space: Space, model: str = "gp", inference: str = "slice", acquisition: str = "ei",
                 seed: int = 0, journal: str | os.PathLike | None = None, **options):
        if not isinstance(space, Space):
            raise TypeError(f"space must be a jbo.Space, got {type(space).__name__}")
        self.space = space
        self.settings = loop.Settings(model=model, inference=inference, acquisition=acquisition, seed=int(seed),
                                      **options)
        _enable_dtype(self.settings.dtype)
        self.state = loop.init(space.dim)
        self.history: list[dict] = []
        self.last_info: dict = {}
        self._journal = None
        if journal is not None:
            if os.path.exists(journal) and os.path.getsize(journal) > 0:
                raise FileExistsError(f"journal {os.fspath(journal)!r} exists; use Optimizer.resume() to continue it")
            self._journal = journal_io.Journal(journal)
            self._journal.write({"type": "settings", "space": space.to_dict(), "settings": self.settings.to_dict()})

    @classmethod
    def resume(cls, path: str | os.PathLike) -> "Optimizer":
        """Rebuild an optimizer from its journal (space, settings, observations) and keep appending to it."""
        header, observations = journal_io.read(path)
        space = Space.from_dict(header["space"])
        settings = loop.Settings.from_dict(header["settings"])
        opt = cls.__new__(cls)
        opt.space, opt.settings = space, settings
        _enable_dtype(settings.dtype)
        opt.state, opt.history, opt.last_info, opt._journal = loop.init(space.dim), [], {}, None
        for record in observations:
            opt._record(record["config"], record.get("value"), record.get("error"), record.get("seconds"))
        # Continue the seed stream after the replayed evaluations.
        opt.state = opt.state._replace(n_suggested=len(observations))
        opt._truncate_partial(path)
        opt._journal = journal_io.Journal(path)
        return opt

    @staticmethod
    def _truncate_partial(path):
        """Make appends start on a fresh line: terminate a complete final record that lacks only its
        newline (:func:`jbo.journal.read` kept it), drop a half-written one (it was ignored)."""
        with open(path, "rb+") as f:
            data = f.read()
            if not data or data.endswith(b"\n"):
                return
            tail = data[data.rfind(b"\n") + 1:]
            try:
                json.loads(tail)
            except ValueError:
                f.truncate(len(data) - len(tail))
            else:
                f.write(b"\n")

    # -- ask / tell ---------------------------------------------------------------------------------
    def ask(self, n: int | None = None):
        """Suggest one configuration (a dict in user units), or a list of ``n``.

        For a conditional space a configuration holds only its active parameters.

        Points of a batch are chosen one after another, each earlier one entering the model as a
        fantasy at its predicted mean (kriging believer), so the batch spreads out.
        """
        count = 1 if n is None else int(n)
        if count < 1:
            raise ValueError(f"n must be >= 1, got {n!r}")
        configs = []
        for _ in range(count):
            self.state, x, self.last_info = loop.suggest(self.settings, self.space, self.state)
            configs.append(self.space.decode(x))
        return configs[0] if n is None else configs

    def tell(self, config: Mapping[str, Any], value: float | None, error: str | None = None) -> None:
        """Record the value of a configuration (minimisation).

        Args:
          config: the configuration, in user units; validated (``ValueError`` naming the parameter).
            For a conditional space it holds exactly the active parameters.
          value: objective value; ``None``, ``nan`` or ``inf`` records a failure.
          error: why the evaluation failed, if it did.
        """
        config = self.space.validate(config)
        if value is not None and not isinstance(value, (int, float, np.number)):
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ValueError(f"value must be a number or None, got {type(value).__name__}") from None
        self._record(config, value, error, None)

    def _record(self, config, value, error, seconds):
        config = self.space.validate(config)
        clean = journal_io.clean_value(value)
        status = "ok" if clean is not None else "failed"
        if status == "failed" and error is None:
            error = "no value" if value is None else f"non-finite value {float(value)!r}"
        record = {"type": "observation", "config": config, "value": clean, "status": status,
                  "error": error if status == "failed" else None, "seconds": seconds}
        if self._journal is not None:  # written before the state changes: nothing told is ever lost
            self._journal.write(record)
        x = loop.encode_observation(self.settings, self.space, config, len(self.state.y))
        self.state = loop.observe(self.state, x, clean, active=self.space.relevance(x))
        self.history.append({k: record[k] for k in ("config", "value", "status", "error", "seconds")})

    # -- results ------------------------------------------------------------------------------------
    @property
    def best(self) -> tuple[dict, float] | None:
        """``(config, value)`` of the best successful observation, or ``None``."""
        ok = [h for h in self.history if h["status"] == "ok"]
        if not ok:
            return None
        h = min(ok, key=lambda h: h["value"])
        return h["config"], h["value"]

    @property
    def n_observed(self) -> int:
        return len(self.history)

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()


def evaluate_safely(fn: Callable, config: dict) -> tuple[float | None, str | None, float]:
    """Call ``fn(config)``; an exception or a non-numeric/non-finite return is a failure, not a crash."""
    start = time.perf_counter()
    try:
        value = fn(config)
        value = float(np.asarray(value).reshape(()))
        error = None if math.isfinite(value) else f"non-finite value {value!r}"
    except KeyboardInterrupt:
        raise
    except Exception as err:  # the objective is user code: record any failure and go on
        value, error = None, f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=3)}"
    return value, error, time.perf_counter() - start


def minimize(fn: Callable[[dict], float], space: Space, budget: int = 50, model: str = "gp",
             inference: str = "slice", acquisition: str = "ei", seed: int = 0,
             journal: str | os.PathLike | None = None, resume: bool = False, progress: bool = False,
             callback: Callable[[Optimizer], None] | None = None, **options) -> Result:
    """Minimise ``fn`` over ``space`` with ``budget`` evaluations (initial design included).

    Args:
      fn: objective taking a config dict in user units; raising or returning nan/inf is recorded as
        a failure and the run goes on.
      space: the search space.
      budget: total number of evaluations.
      model, inference, acquisition, seed, **options: see :class:`Optimizer`.
      journal: JSONL journal path. With ``resume=True`` and an existing journal, the run continues
        from it (its settings win) until ``budget`` evaluations exist in total.
      progress: show a progress bar with the best value so far.
      callback: called with the optimizer after every evaluation.
    Returns:
      :class:`Result`.
    """
    if int(budget) < 1:
        raise ValueError(f"budget must be >= 1, got {budget!r}")
    start = time.perf_counter()
    if resume and journal is not None and os.path.exists(journal) and os.path.getsize(journal) > 0:
        opt = Optimizer.resume(journal)
    else:
        opt = Optimizer(space, model=model, inference=inference, acquisition=acquisition, seed=seed,
                        journal=journal, **options)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=int(budget), initial=opt.n_observed, desc="jbo", unit="eval", dynamic_ncols=True)
    try:
        while opt.n_observed < budget:
            config = opt.ask()
            value, error, seconds = evaluate_safely(fn, config)
            opt._record(config, value, error, seconds)
            if callback is not None:
                callback(opt)
            if bar is not None:
                best = opt.best
                bar.set_postfix_str(f"best={best[1]:.6g}" if best else "best=n/a", refresh=False)
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        opt.close()
    best = opt.best
    return Result(best[0] if best else None, best[1] if best else math.inf, list(opt.history),
                  time.perf_counter() - start)
