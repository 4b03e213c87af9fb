"""The stateful public surface: :class:`Optimizer` (ask/tell), :func:`minimize` and :class:`Result`.

A thin convenience around the functional core of :mod:`jbo.loop`; it validates at the edge, keeps
the history in user units and owns the journal.
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from jbo import acquisition as acq
from jbo import executors as executors_lib
from jbo import journal as journal_io
from jbo import checks, loop, records
from jbo.data import run_sizes
from jbo.models.base import ModelConfig
from jbo.spaces import Space


class Result(NamedTuple):
    """Outcome of :func:`minimize`.

    Attributes:
      best_config: best successful configuration (user units), ``None`` if all failed.
      best_value: its value (``inf`` if all failed).
      history: one dict per evaluation: ``config``, ``value``, ``status``, ``error``, ``seconds``; in
        a parallel run also ``id`` (the evaluation's id in the journal), in the order the results
        returned, and, when the executor has a clock (:class:`jbo.executors.SimulatedExecutor`),
        ``submitted_at`` and ``finished_at`` in its time.
      seconds: wall time of the run.
    """

    best_config: dict | None
    best_value: float
    history: list
    seconds: float

    @property
    def values(self) -> np.ndarray:
        """Objective values in evaluation order (``nan`` for failures and infeasible evaluations)."""
        return np.array([h["value"] if h["status"] == "ok" else np.nan for h in self.history])

    @property
    def best_so_far(self) -> np.ndarray:
        """Running minimum of the successful values (``inf`` before the first success)."""
        return np.minimum.accumulate(np.where(np.isnan(self.values), np.inf, self.values))


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
                 acquisition: Any = None, seed: int = 0, journal: str | os.PathLike | None = None, **options):
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
        self.state = loop.init(settings, space)
        self.history: list[dict] = []
        self.last_info: dict = {}
        self._journal = None
        self._pending: dict[int, dict] = {}  # id -> config and row of the points sent to workers, not yet told
        self._next_id = 0

    @classmethod
    def resume(cls, path: str | os.PathLike, space: Space | None = None, **settings) -> "Optimizer":
        """Rebuild an optimizer from its journal (space, settings, observations) and keep appending to it.

        Args:
          path: the journal.
          space: the space the caller expects; a ``ValueError`` names the parameters where it differs
            from the journal's (``None``: take the journal's).
          **settings: settings the caller expects (as for :class:`Optimizer`); a ``ValueError`` names
            those that differ from the journal's.

        The journal names the pieces of a run that are not jbo's (a kernel, an acquisition, a surrogate or a
        model class of yours) by import path, and they are imported again; where that cannot be done (a
        lambda, a class of an interactive session), pass the same object again (``model=...``,
        ``acquisition=...``), or a ``ValueError`` says which.

        Points of a parallel run that were sent to workers and never returned (pending records
        without an observation) are pending again: the model treats them as running, and
        :attr:`pending` lists them, to evaluate and tell (:func:`minimize` re-submits them first).
        """
        header, observations, pending = journal_io.read_run(path)
        journal_space = Space.from_dict(header["space"])
        journal_settings = _journal_settings(path, header["settings"], settings)
        check_resume(path, journal_space, journal_settings, space, settings)
        opt = cls.__new__(cls)
        opt._start(journal_space, journal_settings)
        for record in observations:
            opt.record(record["config"], record.get("value"), record.get("error"), record.get("seconds"),
                        x=record.get("x"), ident=record.get("id"),
                        times={k: record[k] for k in _TIME_FIELDS if record.get(k) is not None},
                        feasible=record.get("feasible", True),
                        constraints=None if record.get("constraints") is None else
                        [np.nan if c is None else c for c in record["constraints"]])
        ids = [r["id"] for r in observations + pending if isinstance(r.get("id"), int)]
        opt._next_id = max(ids) + 1 if ids else 0
        # Points sent to workers that never returned: pending again (the model treats them as
        # running) until minimize re-submits them or the caller tells their values (Optimizer.pending).
        pending = [r for r in pending if isinstance(r.get("id"), int)]
        for record in pending:
            config = opt.space.validate(record["config"])
            x = record.get("x")
            x = np.asarray(x if x is not None else opt.space.encode(config), np.float64)
            opt.state = opt.state._replace(pending=np.concatenate([opt.state.pending, x[None]]))
            opt._pending[record["id"]] = {"config": config, "x": x}
        # Continue the key stream after the replayed evaluations.
        opt.state = opt.state._replace(n_suggested=len(observations) + len(pending))
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

        Points of a batch are chosen one after another, each earlier one entering the model as a pending
        point (``pending=``: at its predicted mean, the kriging believer, by default; Monte Carlo fantasies of
        its outcome with ``pending="fantasies"``), so the batch spreads out.

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

    def ask_pending(self, size: int | None = None, submitted_at: float | None = None) -> tuple[int, dict]:
        """Suggest a point to send to a worker: ``(id, config)``, journaled as a pending record first (a
        resumed run re-submits it); tell its outcome with :meth:`record` and ``ident=id``."""
        config = self.ask(size=size)
        x = np.array(self.state.pending[-1], np.float64)
        ident, self._next_id = self._next_id, self._next_id + 1
        record = {"type": "pending", "status": "pending", "id": ident, "config": config, "x": x.tolist()}
        if submitted_at is not None:
            record["submitted_at"] = submitted_at
        if self._journal is not None:  # before the point leaves: a resumed run re-submits it
            self._journal.write(record)
        self._pending[ident] = {"config": config, "x": x}
        return ident, config

    @property
    def pending(self) -> list[dict]:
        """The points sent to workers and not told yet, ``[{"id": ..., "config": ...}, ...]``: after
        :meth:`resume`, those of the interrupted run (tell their values, or let :func:`minimize`
        re-submit them)."""
        return [{"id": ident, "config": dict(entry["config"])} for ident, entry in self._pending.items()]

    def tell(self, config: Mapping[str, Any], value: float | None, error: str | None = None,
             feasible: bool | None = None, constraints=None) -> None:
        """Record the value of a configuration (minimisation).

        Args:
          config: the configuration, in user units; validated (``ValueError`` naming the parameter).
            For a conditional space it holds exactly the active parameters.
          value: objective value; ``None``, ``nan`` or ``inf`` records a failure. With
            ``feasible=False`` it may be ``None`` (an infeasible evaluation often has no value).
          error: why the evaluation failed, if it did.
          feasible: ``False``: the configuration violated an unknown constraint. From then on a
            classifier models where evaluations are feasible and the acquisition is discounted by
            that probability (constrained EI); the objective's model puts infeasible evaluations at
            the median of the feasible values (the ``infeasible`` setting), and they are never best.
            Default: ``True``, or, with ``constraints``, whether every constraint value is ``<= 0``.
          constraints: constraint values known at evaluation, Optuna-style (``[c_1, ..., c_K]``,
            feasible when all ``<= 0``; ``nan`` for one not measured). Each is modelled by the
            objective's surrogate and the acquisition multiplied by ``P[c_k <= 0]``. ``K`` is fixed by
            the first evaluation that reports constraints.
        """
        constraints = self._check_constraints(constraints)
        if feasible is None:
            feasible = constraints is None or not np.any(np.asarray(constraints) > 0)
        if not isinstance(feasible, (bool, np.bool_)):
            raise ValueError(f"feasible must be True or False, got {feasible!r}")
        if constraints is not None and feasible and np.any(np.asarray(constraints) > 0):
            raise ValueError(f"feasible=True contradicts constraints {constraints} (feasible means every value <= 0)")
        config = self.space.validate(config)
        if value is not None and not isinstance(value, (int, float, np.number)):
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ValueError(f"value must be a number or None, got {type(value).__name__}") from None
        self.record(config, value, error, None, feasible=bool(feasible), constraints=constraints)

    def _check_constraints(self, constraints):
        """Validated constraint values (a list of floats), or ``None``; ``K`` must not change within a run."""
        if constraints is None:
            return None
        try:
            values = [float(c) for c in constraints]
        except (TypeError, ValueError):
            raise ValueError(f"constraints must be a sequence of numbers, got {constraints!r}") from None
        known = self.state.constraints.shape[-1]
        if (known and len(values) != known) or not values:
            raise ValueError(f"constraints: every evaluation reports the same number of constraint values "
                             f"({known or 'at least one'}), got {len(values)}")
        return values

    def record(self, config, value, error, seconds, x=None, ident=None, times=None, feasible=True, constraints=None):
        """Record an evaluation's outcome as :func:`jbo.executors.evaluate_safely` returns it (journal first).

        Args:
          config: the configuration; value: its value, or ``(value, constraint values)``, or ``None``.
          error: why it failed, if it did; seconds: how long it ran.
          x: its encoded row (default: the pending suggestion it answers, or its encoding).
          ident: the id of the pending point it answers (a parallel run's).
          times: ``submitted_at`` / ``finished_at`` of an executor with a clock.
          feasible, constraints: as for :meth:`tell`.
        """
        config = self.space.validate(config)
        if isinstance(value, tuple):  # (value, constraint values) from an objective that reports them
            value, constraints = value
            constraints = self._check_constraints(constraints)
            feasible = feasible and not np.any(np.asarray(constraints) > 0)
        clean = journal_io.clean_value(value)
        status = ("ok" if clean is not None else "failed") if feasible else "infeasible"
        if status == "failed" and error is None:
            error = "no value" if value is None else f"non-finite value {float(value)!r}"
        if status == "infeasible" and error is None:
            error = "infeasible"
        index = None
        if ident is not None and ident in self._pending:  # a point sent to a worker: its own row
            x = self._pending[ident]["x"]
            rows = np.flatnonzero(np.all(self.state.pending == x[None], axis=1)) if len(self.state.pending) else []
            index = int(rows[0]) if len(rows) else None
        elif x is None:
            x = loop.encode_observation(self.settings, self.space, config, len(self.state.y))
            index = loop.match_pending(self.state, x, active=self.space.relevance(x))
            if index is not None:  # the suggested row itself (its inactive columns included)
                x = self.state.pending[index]
                if ident is None:  # told by config: the journaled pending point it answers, if any
                    ident = next((i for i, e in self._pending.items() if np.array_equal(e["x"], x)), None)
        x = np.asarray(x, np.float64)
        record = {"type": "observation", "config": config, "value": clean, "status": status,
                  "error": error if status != "ok" else None, "seconds": seconds, "x": x.tolist()}
        if ident is not None:
            record["id"] = ident
        if not feasible:
            record["feasible"] = False
        if constraints is not None:
            record["constraints"] = [c if math.isfinite(c) else None for c in constraints]
        record.update(times or {})
        if self._journal is not None:  # written before the state changes: nothing told is ever lost
            self._journal.write(record)
        self.state = loop.observe(self.state, x, clean, active=self.space.relevance(x), index=index,
                                  feasible=feasible, constraints=constraints)
        self._pending.pop(ident, None)
        keys = ("config", "value", "status", "error", "seconds", "id", "feasible", "constraints", *_TIME_FIELDS)
        self.history.append({k: record[k] for k in keys if k in record})

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

    @property
    def journal_path(self) -> str | None:
        """The journal this optimizer appends to, or ``None``."""
        return None if self._journal is None else self._journal.path

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()


_TIME_FIELDS = ("submitted_at", "finished_at")


def _journal_settings(path, recorded: dict, given: dict) -> loop.Settings:
    """The settings a journal recorded, with the pieces it names but this process cannot import taken from
    the caller (``given["model"]``, ``given["acquisition"]``) where they are the same pieces."""
    recorded = dict(recorded)
    for field in ("model", "acquisition"):
        if field in given and field in recorded and not isinstance(given[field], str):
            mine = given[field]
            if field == "acquisition":
                mine = acq.as_acquisition(mine)
            ours = mine.to_dict() if isinstance(mine, ModelConfig) else records.to_record(mine)
            if records.same_piece(recorded[field], mine) or records.same_piece(recorded[field], ours):
                recorded[field] = mine
    try:
        return loop.Settings.from_dict(recorded)
    except records.RecordError as err:
        raise ValueError(f"cannot resume {os.fspath(path)!r}: {err} (model=..., acquisition=...)") from None


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
        fields = sorted(k for k in wanted if setting_of(expected, k) != setting_of(journal_settings, k))
        if expected.model.name != journal_settings.model.name or (
                isinstance(model, ModelConfig) and model != journal_settings.model):
            fields.insert(0, "model")
        if fields:
            detail = ", ".join(f"{k}={setting_of(expected, k)!r} (journal: {setting_of(journal_settings, k)!r})"
                               for k in fields)
            problems.append(f"setting(s) {fields} differ from the journal's: {detail}")
    if problems:
        raise ValueError(f"cannot resume {os.fspath(path)!r}: " + "; ".join(problems)
                         + ". Resume with the journal's space and settings (or none), or start a new journal.")


def setting_of(settings: loop.Settings, name: str):
    if name == "model":
        return settings.model.name
    value = getattr(settings, name) if name in loop.LOOP_FIELDS else getattr(settings.model, name, None)
    return value._asdict() if hasattr(value, "_asdict") else value


def minimize(fn: Callable[[dict], float], space: Space | None, budget: int = 50,
             model: str | ModelConfig | None = None, inference: str | None = None, acquisition: str | None = None,
             seed: int | None = None, journal: str | os.PathLike | None = None, resume: bool = False,
             progress: bool = False, callback: Callable[[Optimizer], None] | None = None,
             n_workers: int | None = None, executor: Any = None, **options) -> Result:
    """Minimise ``fn`` over ``space`` with ``budget`` evaluations (initial design included).

    Args:
      fn: objective taking a config dict in user units; raising or returning nan/inf is recorded as
        a failure and the run goes on. With ``n_workers > 1`` and no ``executor`` it runs in worker
        processes and must be picklable: a module-level function (or a ``functools.partial`` of
        one), not a lambda, a local function or one defined in an interactive session (a
        ``TypeError`` says so before anything runs), and a script needs the
        ``if __name__ == "__main__":`` guard (spawned workers import it); the engines' executors
        pickle with cloudpickle and take closures too.
      space: the search space (may be ``None`` when resuming: the journal's).
      budget: total number of evaluations.
      model, inference, acquisition, seed, **options: see :class:`Optimizer` (defaults ``"gp"``, the
        model's inference, the model's acquisition, 0).
      journal: JSONL journal path. With ``resume=True`` and an existing journal, the run continues
        from it until ``budget`` evaluations exist in total; a space or a setting passed explicitly
        that differs from the journal's is a ``ValueError`` naming it. Points of a parallel run that
        were sent to workers and never returned are evaluated again first.
      progress: show a progress bar with the best value so far.
      callback: called with the optimizer after every evaluation.
      n_workers: evaluations kept in flight. ``None``: the executor's own number of workers when it
        states one (:class:`jbo.executors.SimulatedExecutor`, the stdlib pools), else 1 without an
        executor (the sequential loop: ask, evaluate in this process, tell). With ``K > 1`` or an
        executor the run is asynchronous: ``K`` evaluations run at once, and as soon as one returns
        its result is told and a new point is asked with the other ``K - 1`` pending (the model
        conditions on them as fantasies). The history is in the order the results returned.
      executor: where evaluations run: a ``concurrent.futures.Executor`` (default with
        ``n_workers > 1``: a local ``ProcessPoolExecutor`` of ``n_workers`` spawned processes, which
        this call shuts down), a Dask ``distributed.Client`` or its ``get_executor()``,
        :class:`jbo.executors.RayExecutor`, a submitit executor (``submitit.AutoExecutor``), or
        :class:`jbo.executors.SimulatedExecutor`; see :mod:`jbo.executors`. An evaluation whose
        worker died (the future raises) is a failed evaluation with the error's text; if the
        default pool breaks that way, a new one replaces it. An executor whose ``submit`` raises
        stops the run with a :class:`jbo.executors.ExecutorError` that names it; every result told
        before is in the journal (and in the error's ``result``), and the points in flight are
        pending records there that ``resume=True`` re-submits.
    Returns:
      :class:`Result`.
    """
    budget = checks.integer("budget", budget, 1, integral_floats=True)
    workers, engine = executors_lib.plan(fn, n_workers, executor)  # validated before a journal is touched
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

    def told():
        if callback is not None:
            callback(opt)
        if bar is not None:
            best = opt.best
            bar.set_postfix_str(f"best={best[1]:.6g}" if best else "best=n/a", refresh=False)
            bar.update(1)

    try:
        if workers is None:
            for ident, entry in list(opt._pending.items()):  # a resumed parallel run's lost evaluations
                if opt.n_observed >= budget:
                    break
                value, error, seconds = executors_lib.evaluate_safely(fn, entry["config"])
                opt.record(entry["config"], value, error, seconds, ident=ident)
                told()
            while opt.n_observed < budget:
                config = opt.ask(size=size(opt.n_observed))
                value, error, seconds = executors_lib.evaluate_safely(fn, config)
                opt.record(config, value, error, seconds)
                told()
        else:
            executors_lib.run_parallel(opt, fn, budget, workers, engine, executor, size, told,
                                       lambda: _result(opt, start))
    finally:
        if bar is not None:
            bar.close()
        opt.close()
    return _result(opt, start)


def _result(opt: Optimizer, start: float) -> Result:
    best = opt.best
    return Result(best[0] if best else None, best[1] if best else math.inf, list(opt.history),
                  time.perf_counter() - start)


