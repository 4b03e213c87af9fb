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
from jbo.data import run_sizes
from jbo.models.base import ModelConfig
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
      model: a model name (:data:`jbo.models.NAMES`) or a config object (``jbo.models.GP(...)``).
      inference: how the model's hyperparameters are inferred (``"slice"``, ``"nuts"``, ``"map"``;
        default: the model's, slice sampling).
      acquisition, seed: see :class:`jbo.loop.Settings`.
      journal: path of a JSONL journal to append every observation to (optional).
      **options: the loop's other settings (``n_init``, ``maximize={...}``, ``failures``, ``dtype``,
        ``ucb_beta``) and the model's options (``kernel``, ``num_samples``, ``n_networks``, ...; see
        the model's config in :mod:`jbo.models`). An option the model does not have is an error.

    Example::

        opt = jbo.Optimizer(space, model="gp", inference="slice", acquisition="ei", seed=0)
        cfg = opt.ask()
        opt.tell(cfg, f(cfg))
    """

    def __init__(self, space: Space, model: str | ModelConfig = "gp", inference: str | None = None,
                 acquisition: str = "ei", seed: int = 0, journal: str | os.PathLike | None = None, **options):
        if not isinstance(space, Space):
            raise TypeError(f"space must be a jbo.Space, got {type(space).__name__}")
        if inference is not None:
            options["inference"] = inference
        settings = loop.Settings.create(model, acquisition=acquisition, seed=seed, **options)
        self._start(space, settings)
        if journal is not None:
            if os.path.exists(journal) and os.path.getsize(journal) > 0:
                raise FileExistsError(f"journal {os.fspath(journal)!r} exists; use Optimizer.resume() to continue it")
            self._journal = journal_io.Journal(journal)
            self._journal.write({"type": "settings", "space": space.to_dict(), "settings": self.settings.to_dict()})

    def _start(self, space: Space, settings: loop.Settings) -> None:
        self.space, self.settings = space, settings
        _enable_dtype(settings.dtype)
        self.state = loop.init(settings, space)
        self.history: list[dict] = []
        self.last_info: dict = {}
        self._journal = None

    @classmethod
    def resume(cls, path: str | os.PathLike, space: Space | None = None, **settings) -> "Optimizer":
        """Rebuild an optimizer from its journal (space, settings, observations) and keep appending to it.

        Args:
          path: the journal.
          space: the space the caller expects; a ``ValueError`` names the parameters where it differs
            from the journal's (``None``: take the journal's).
          **settings: settings the caller expects (as for :class:`Optimizer`); a ``ValueError`` names
            those that differ from the journal's.
        """
        header, observations = journal_io.read(path)
        journal_space = Space.from_dict(header["space"])
        journal_settings = loop.Settings.from_dict(header["settings"])
        check_resume(path, journal_space, journal_settings, space, settings)
        opt = cls.__new__(cls)
        opt._start(journal_space, journal_settings)
        for record in observations:
            opt._record(record["config"], record.get("value"), record.get("error"), record.get("seconds"),
                        x=record.get("x"))
        # Continue the key stream after the replayed evaluations.
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
    def ask(self, n: int | None = None, size: int | None = None):
        """Suggest one configuration (a dict in user units), or a list of ``n``.

        For a conditional space a configuration holds only its active parameters.

        Points of a batch are chosen one after another, each earlier one entering the model as a
        fantasy at its predicted mean (kriging believer), so the batch spreads out.

        Args:
          n: batch size (``None``: one configuration, not a list).
          size: padded size of the model's observation buffers (default: a bucket of ``N``;
            :func:`minimize` passes one size for a whole small budget so that one program serves it).
        """
        count = 1 if n is None else int(n)
        if count < 1:
            raise ValueError(f"n must be >= 1, got {n!r}")
        configs = []
        for _ in range(count):
            self.state, x, self.last_info = loop.suggest(self.settings, self.space, self.state, size=size)
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

    def _record(self, config, value, error, seconds, x=None):
        config = self.space.validate(config)
        clean = journal_io.clean_value(value)
        status = "ok" if clean is not None else "failed"
        if status == "failed" and error is None:
            error = "no value" if value is None else f"non-finite value {float(value)!r}"
        if x is None:
            x = loop.encode_observation(self.settings, self.space, config, len(self.state.y))
            index = loop.match_pending(self.state, x, active=self.space.relevance(x))
            if index is not None:  # the suggested row itself (its inactive columns included)
                x = self.state.pending[index]
        x = np.asarray(x, np.float64)
        record = {"type": "observation", "config": config, "value": clean, "status": status,
                  "error": error if status == "failed" else None, "seconds": seconds, "x": x.tolist()}
        if self._journal is not None:  # written before the state changes: nothing told is ever lost
            self._journal.write(record)
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


def check_resume(path, journal_space: Space, journal_settings: loop.Settings, space: Space | None,
                 settings: dict) -> None:
    """``ValueError`` naming what a resumed run's caller expects differently from its journal.

    Args:
      path: the journal (for the message).
      journal_space, journal_settings: what the journal recorded.
      space: the caller's space (``None``: no expectation).
      settings: the caller's explicit settings (``model``, ``inference``, loop and model options).
    """
    problems = []
    if space is not None and space != journal_space:
        mine, theirs = space.to_dict()["params"], journal_space.to_dict()["params"]
        mine, theirs = {p["name"]: p for p in mine}, {p["name"]: p for p in theirs}
        names = sorted(set(mine) ^ set(theirs)) + sorted(n for n in set(mine) & set(theirs) if mine[n] != theirs[n])
        problems.append(f"space parameter(s) {names or list(mine)} differ from the journal's "
                        f"({journal_space!r})")
    if settings:
        wanted = dict(settings)
        model = wanted.pop("model", None)
        same_name = model is None or (isinstance(model, str) and model == journal_settings.model.name)
        loop_fields = {f: getattr(journal_settings, f) for f in loop.LOOP_FIELDS}
        try:
            expected = loop.Settings.create(journal_settings.model if same_name else model, **{**loop_fields, **wanted})
        except ValueError as err:
            raise ValueError(f"cannot resume {os.fspath(path)!r}: {err}") from None
        fields = sorted(k for k in wanted if _setting(expected, k) != _setting(journal_settings, k))
        if expected.model.name != journal_settings.model.name or (
                isinstance(model, ModelConfig) and model != journal_settings.model):
            fields.insert(0, "model")
        if fields:
            detail = ", ".join(f"{k}={_setting(expected, k)!r} (journal: {_setting(journal_settings, k)!r})"
                               for k in fields)
            problems.append(f"setting(s) {fields} differ from the journal's: {detail}")
    if problems:
        raise ValueError(f"cannot resume {os.fspath(path)!r}: " + "; ".join(problems)
                         + ". Resume with the journal's space and settings (or none), or start a new journal.")


def _setting(settings: loop.Settings, name: str):
    if name == "model":
        return settings.model.name
    value = getattr(settings, name) if name in loop.LOOP_FIELDS else getattr(settings.model, name, None)
    return value._asdict() if hasattr(value, "_asdict") else value


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


def minimize(fn: Callable[[dict], float], space: Space | None, budget: int = 50,
             model: str | ModelConfig | None = None, inference: str | None = None, acquisition: str | None = None,
             seed: int | None = None, journal: str | os.PathLike | None = None, resume: bool = False,
             progress: bool = False, callback: Callable[[Optimizer], None] | None = None, **options) -> Result:
    """Minimise ``fn`` over ``space`` with ``budget`` evaluations (initial design included).

    Args:
      fn: objective taking a config dict in user units; raising or returning nan/inf is recorded as
        a failure and the run goes on.
      space: the search space (may be ``None`` when resuming: the journal's).
      budget: total number of evaluations.
      model, inference, acquisition, seed, **options: see :class:`Optimizer` (defaults ``"gp"``, the
        model's inference, ``"ei"``, 0).
      journal: JSONL journal path. With ``resume=True`` and an existing journal, the run continues
        from it until ``budget`` evaluations exist in total; a space or a setting passed explicitly
        that differs from the journal's is a ``ValueError`` naming it.
      progress: show a progress bar with the best value so far.
      callback: called with the optimizer after every evaluation.
    Returns:
      :class:`Result`.
    """
    if isinstance(budget, bool) or int(budget) != budget or int(budget) < 1:
        raise ValueError(f"budget must be a positive integer, got {budget!r}")
    budget = int(budget)
    start = time.perf_counter()
    explicit = {k: v for k, v in dict(model=model, inference=inference, acquisition=acquisition, seed=seed).items()
                if v is not None}
    if resume and journal is not None and os.path.exists(journal) and os.path.getsize(journal) > 0:
        opt = Optimizer.resume(journal, space=space, **explicit, **options)
    else:
        if space is None:
            raise ValueError("space is required unless resuming from a journal")
        opt = Optimizer(space, journal=journal, **{"model": "gp", **explicit}, **options)
    size = run_sizes(budget)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=budget, initial=opt.n_observed, desc="jbo", unit="eval", dynamic_ncols=True)
    try:
        while opt.n_observed < budget:
            config = opt.ask(size=size(opt.n_observed))
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
