"""Ablations as data: :func:`study` runs a grid of arms × seeds on a JAX objective.

An arm is a dict of options (anything :func:`jbo.minimize_many` takes, the model included). Arms that
differ only in values share one compiled program (:class:`jbo.many.RunValues`): the built-in or your own
pointwise acquisition (one :class:`jbo.acquisition.Choice` switched at run time), ``ucb_beta``, the
failure policy (``"worst"`` / ``"ignore"``), ``n_init`` and the design. Arms with another model, another
model option, a Thompson acquisition or other search sizes compile their own, once per process: a later
study with more seeds or other values reuses it::

    problem = jbo.benchmarks.get_problem("hartmann6")
    result = jbo.study(problem.evaluate, problem.space(), budget=60, seeds=range(10), arms={
        "ei": dict(inference="map", acquisition="ei"),
        "ucb": dict(inference="map", acquisition="ucb"),
        "ucb-4": dict(inference="map", acquisition="ucb", ucb_beta=4.0),
        "random": dict(model="random"),
    })                                   # two programs: the three GP arms share one
    result.best_so_far.shape             # (4, 10, 60)
    print(result.table())
    result.save("ablation.npz"); jbo.StudyResult.load("ablation.npz")
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from typing import Callable, Mapping, NamedTuple

import jax
import numpy as np

from jbo import acquisition as acq
from jbo import cache, checks, executors, loop, many, metrics, plotting, precision
from jbo import store as store_lib
from jbo.many import RunValues
from jbo.spaces import Space


class StudyResult(NamedTuple):
    """Outcome of :func:`study` (NumPy arrays; axes ``(arm, seed, evaluation)``).

    Attributes:
      arms: the arms' names, in the order given.
      seeds: ``(S,)`` the seeds (each run is what ``jbo.minimize(..., seed=seed)`` with the arm's options
        computes).
      values: ``(A, S, B)`` objective values in evaluation order (``nan``: a failure).
      best_so_far: ``(A, S, B)`` running minimum of the successful values.
      x: ``(A, S, B, D)`` the encoded points evaluated.
      configs: ``{arm: its settings}`` (:meth:`jbo.loop.Settings.to_dict`).
      best_configs: ``[arm][seed]`` the best configuration of each run (user units; ``None`` if all failed).
      info: ``{name: (A, S, B, ...)}`` per evaluation, what each model step reported (``score``: the
        acquisition's value at the suggestion; ``hyperparameters.*``: their means over samples; the
        inference's diagnostics); ``nan`` at the design's evaluations. Only names every arm reports.
      step_seconds: ``(A, S, B)`` seconds of each evaluation (model step and objective; with
        ``batch="vmap"``, the batch's time spread evenly over its evaluations).
      programs: ``((arm names, compile seconds), ...)``: the compiled programs and the arms each ran
        (0 seconds for a program compiled by an earlier call).
      compile_seconds: their sum.
      seconds: wall time of the call, compilation included.
      finished: ``(A, S)`` bool, the runs that are complete (a result read from a store while its study runs,
        :meth:`load`, has unfinished runs: their values so far, ``nan`` after); ``None``: all.
    """

    arms: tuple
    seeds: np.ndarray
    values: np.ndarray
    best_so_far: np.ndarray
    x: np.ndarray
    configs: dict
    best_configs: list
    info: dict
    step_seconds: np.ndarray
    programs: tuple
    compile_seconds: float
    seconds: float
    finished: np.ndarray | None = None

    @property
    def best_values(self) -> np.ndarray:
        """``(A, S)`` the best successful value of each run (``inf`` if all failed)."""
        return self.best_so_far[..., -1]

    def arm(self, name: str) -> many.ManyResult:
        """One arm as a :class:`jbo.many.ManyResult`."""
        a = self.arms.index(name)
        compile_seconds = sum(seconds for names, seconds in self.programs if name in names)
        return many.ManyResult(self.seeds, self.values[a], self.best_values[a], self.best_so_far[a],
                               self.best_configs[a], self.x[a], float(self.step_seconds[a].sum()), compile_seconds)

    def rows(self) -> list[dict]:
        """The tidy table: one dict per evaluation (arm, seed, evaluation, value, best_so_far, seconds and
        the scalar diagnostics)."""
        scalars = {k: v for k, v in self.info.items() if v.ndim == 3}
        out = []
        for a, arm in enumerate(self.arms):
            for s, seed in enumerate(self.seeds):
                for i in range(self.values.shape[-1]):
                    row = dict(arm=arm, seed=int(seed), evaluation=i + 1, value=float(self.values[a, s, i]),
                               best_so_far=float(self.best_so_far[a, s, i]), seconds=float(self.step_seconds[a, s, i]))
                    row.update({k: v[a, s, i].item() for k, v in scalars.items()})
                    out.append(row)
        return out

    def to_frame(self):
        """:meth:`rows` as a ``pandas.DataFrame`` (needs pandas)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("StudyResult.to_frame needs pandas (pip install pandas); rows() gives the same "
                              "table as dicts") from None
        return pandas.DataFrame(self.rows())

    def table(self, optimum: float | None = None) -> str:
        """A markdown table: per arm the best value's mean ± standard error and median over the seeds, the
        running seconds per run and the compile seconds of its program."""
        head = "| arm | best (mean ± s.e.) | median | seconds per run | compile s |"
        lines = [head, "|---|---|---|---|---|"]
        for a, arm in enumerate(self.arms):
            best = self.best_values[a] - (optimum or 0.0)
            mean, se = metrics.mean_and_stderr(best[:, None])
            compile_seconds = sum(seconds for names, seconds in self.programs if arm in names)
            lines.append(f"| {arm} | {mean[0]:.4g} ± {se[0]:.2g} | {np.median(best):.4g} | "
                         f"{self.step_seconds[a].sum(-1).mean():.2f} | {compile_seconds:.1f} |")
        return "\n".join(lines)

    def plot(self, path: str = "study.png", optimum: float | None = None, title: str | None = None) -> str:
        """Convergence plot: mean ± one standard error of the best value (or regret) per arm."""
        return plotting.plot_convergence({arm: self.values[a] for a, arm in enumerate(self.arms)}, optimum=optimum,
                                         path=path, title=title)

    def save(self, path: str) -> str:
        """Write the result to ``path`` (NumPy ``.npz``: the arrays, and the rest as JSON)."""
        meta = dict(arms=list(self.arms), configs=self.configs, best_configs=self.best_configs,
                    programs=[[list(names), seconds] for names, seconds in self.programs],
                    compile_seconds=self.compile_seconds, seconds=self.seconds)
        arrays = dict(seeds=self.seeds, values=self.values, best_so_far=self.best_so_far, x=self.x,
                      step_seconds=self.step_seconds, **{"info:" + k: v for k, v in self.info.items()})
        with open(path, "wb") as f:
            np.savez_compressed(f, meta=np.asarray(json.dumps(meta, default=_json_scalar)), **arrays)
        return path

    @classmethod
    def load(cls, path: str) -> "StudyResult":
        """A result written by :meth:`save`, or a study's store (a directory, :func:`study`'s ``store``), read as it
        is: every stored run of every arm, unfinished ones with their values so far (``finished`` says which); a
        seed an arm has not started is left out of that arm (``nan``)."""
        if os.path.isdir(path):
            return _from_store(store_lib.Store(path))
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            info = {k[len("info:"):]: data[k] for k in data.files if k.startswith("info:")}
            return cls(tuple(meta["arms"]), data["seeds"], data["values"], data["best_so_far"], data["x"],
                       meta["configs"], meta["best_configs"], info, data["step_seconds"],
                       tuple((tuple(names), seconds) for names, seconds in meta["programs"]),
                       meta["compile_seconds"], meta["seconds"])


def _json_scalar(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


class Group(NamedTuple):
    """Arms run by one compiled program: its settings, the arms' names and their :class:`RunValues`."""

    settings: loop.Settings
    names: tuple
    values: tuple
    n_init_range: tuple
    configs: tuple = ()
    """each arm's own settings"""


def plan(space: Space, budget: int, arms: Mapping[str, dict]) -> list[Group]:
    """The compiled programs a grid needs: arms grouped by what is not a value (:class:`RunValues`).

    Args:
      space, budget: the study's.
      arms: ``name -> options``.
    Returns:
      The groups, in the order of their first arm.
    """
    if not isinstance(arms, Mapping) or not arms:
        raise ValueError(f"arms must be a non-empty dict name -> options, got {arms!r}")
    keyed: dict = {}
    configs: dict = {}
    for name, options in arms.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"arms: each name must be a non-empty string, got {name!r}")
        if not isinstance(options, Mapping):
            raise ValueError(f"arm {name!r}: options must be a dict, got {options!r}")
        options = dict(options)
        if "seed" in options:
            raise ValueError(f"arm {name!r}: seed is not an option of an arm: the study's seeds are every arm's")
        try:
            settings = loop.Settings.create(options.pop("model", "gp"), **options)
        except (TypeError, ValueError) as error:
            raise ValueError(f"arm {name!r}: {error}") from None
        if isinstance(settings.acquisition, acq.ConstraintAware):
            # A whole run's feasibility comes from its failures only (no constraint values): known here.
            settings = dataclasses.replace(settings,
                                           acquisition=settings.acquisition.pick(settings.failures == "constraint"))
        program = settings.program()
        pointwise = acq.is_pointwise(program.acquisition)
        shared = dataclasses.replace(program, acquisition="ei" if pointwise else program.acquisition,
                                     failures="worst" if program.failures in ("worst", "ignore") else program.failures)
        keyed.setdefault((shared, pointwise), []).append((name, settings))
        configs[name] = settings
    groups = []
    for (shared, pointwise), members in keyed.items():
        options = []
        for _, settings in members:
            if settings.acquisition not in options:
                options.append(settings.acquisition)
        function = acq.Choice(tuple(options)) if len(options) > 1 else options[0]
        values = tuple(RunValues.of(s, space.dim, budget, options.index(s.acquisition)) for _, s in members)
        n_init = [int(v.n_init) for v in values]
        groups.append(Group(dataclasses.replace(shared, acquisition=function), tuple(n for n, _ in members), values,
                            (min(n_init), max(n_init)), tuple(s for _, s in members)))
    return groups


def _split(group: Group) -> list[Group]:
    """One group per acquisition (for a model whose step takes no :class:`~jbo.acquisition.Choice`)."""
    out = []
    for index, function in enumerate(group.settings.acquisition.options):
        picked = [(n, v._replace(choice=np.int32(0)), c) for n, v, c in zip(group.names, group.values, group.configs)
                  if v.choice == index]
        n_init = [int(v.n_init) for _, v, _ in picked]
        out.append(Group(dataclasses.replace(group.settings, acquisition=function), tuple(p[0] for p in picked),
                         tuple(p[1] for p in picked), (min(n_init), max(n_init)), tuple(p[2] for p in picked)))
    return out


class Segmenting(NamedTuple):
    """How runs of a study with a store are cut: at most ``evaluations`` per segment and, once timed, segments of
    about ``seconds``; a kill loses at most one segment of each run in progress."""

    evaluations: int = 25
    seconds: float = 60.0


def study(fn: Callable, space: Space, budget: int, seeds, arms: Mapping[str, dict], batch: str | None = None,
          stages: tuple[int, ...] | None = None, workers: int | None = None, store: str | os.PathLike | None = None,
          executor=None, segments: Segmenting = Segmenting(), store_points: bool = True,
          retries: int = 2) -> StudyResult:
    """Run every arm with every seed; arms that differ only in values share one compiled program.

    Args:
      fn: a JAX objective (see :func:`jbo.many.run_function`; ``problem.evaluate`` of :mod:`jbo.benchmarks`). Whole
        runs trace it in the dtype of the run (``dtype=`` of an arm: float64 by default).
      space: the search space.
      budget: evaluations per run.
      seeds: the seeds, the same for every arm.
      arms: ``name -> options`` (what :func:`jbo.minimize_many` takes: ``model``, the loop's options,
        the model's options).
      batch: ``"map"`` (programs of one run, several runs at once from ``workers`` threads: the CPU default) or
        ``"vmap"`` (the runs of a program side by side, padded to a power of two: the accelerator default);
        :func:`jbo.many.default_batch`.
      stages: padded sizes of the observation buffers (default: those of :func:`jbo.minimize`,
        :func:`jbo.many.stage_sizes`).
      workers: with ``"map"``, runs made at once from host threads (default: one per core on a CPU); the
        results do not depend on it.
      store: a directory keeping the study as it runs (:mod:`jbo.store`): each run is written when it ends, and
        a run in progress after every segment (``segments``), so a killed study loses at most a segment per run.
        Called again, the study continues: finished runs are read, unfinished ones continue from their last
        segment, new arms and seeds run; the values are those of an uninterrupted study. A store written for
        another objective, space, budget or stages, or with other options for an arm, is refused (a
        ``ValueError`` naming the difference). :meth:`StudyResult.load` reads a store while it grows.
      executor: where runs are made: a ``concurrent.futures`` process pool, a Dask ``distributed.Client``,
        :class:`jbo.executors.RayExecutor`, a submitit executor (:func:`jbo.executors.backend`); needs
        ``store``, where the workers write their runs. Each run is a task; a task whose worker died is sent
        again (at most ``retries`` times), continuing from the store. Workers turn on JAX's persistent
        compilation cache when this process has it on (:func:`jbo.cache.enable_jax_cache`), so they share
        compiled programs. ``None``: in this process.
      segments: how runs with a store are cut (:class:`Segmenting`).
      store_points: keep the points of finished runs in the store (``False``: only their values, diagnostics
        and times, for large studies whose points are not needed; ``x`` is then ``nan``).
      retries: how often a task of an executor is sent again after its worker failed.
    Returns:
      :class:`StudyResult`.
    """
    start = time.perf_counter()
    seeds = many.check_seeds(seeds)
    budget = checks.integer("budget", budget, 1, integral_floats=True)
    groups = plan(space, budget, arms)
    if executor is not None and store is None:
        raise ValueError("executor: a study on an executor needs a store (store=PATH), where its workers meet")
    names = tuple(arms)
    configs = {n: s.to_dict() for group in groups for n, s in zip(group.names, group.configs)}
    kept = None
    if store is not None:
        kept = store_lib.Store(store)
        kept.open({"objective": store_lib.describe_objective(fn), "space": space.to_dict(), "budget": budget,
                   "stages": None if stages is None else [int(c) for c in stages], "arms": _jsonable(configs)},
                  normalise=lambda arm: _jsonable(loop.Settings.from_dict(arm).to_dict()))
    job = _Job(fn, space, budget, stages, batch, workers, None if kept is None else kept.path, segments,
               store_points)
    results: dict = {}
    programs = []
    queue = list(groups)
    while queue:
        group = queue.pop(0)
        runs = [(name, int(seed)) for name in group.names for seed in seeds]
        if kept is not None:
            runs = [(name, seed) for name, seed in runs if not kept.is_finished(name, seed)]
        if not runs:
            continue
        try:
            if executor is None:
                made, compile_seconds = _run_group(job, group, runs)
                results.update(made)
            else:
                compile_seconds = _run_on(executor, job, group, runs, retries)
        except _NoChoice:
            queue = _split(group) + queue  # the model takes one acquisition per program
            continue
        programs.append((group.names, compile_seconds))
    if kept is not None:
        records = {(name, int(seed)): kept.finished(name, seed) for name in names for seed in seeds}
    else:
        records = {(name, int(seed)): results[(name, int(seed))] for name in names for seed in seeds}
    return _result(space, names, seeds, records, _jsonable(configs), programs, time.perf_counter() - start)


class _NoChoice(Exception):
    """The group's model takes one acquisition per program: split it (:func:`_split`)."""


class _Job(NamedTuple):
    """What a worker needs to make runs of a study (sent to executors whole)."""

    fn: Callable
    space: Space
    budget: int
    stages: tuple | None
    batch: str | None
    workers: int | None
    store: str | None
    segments: Segmenting
    store_points: bool
    jax_cache: str | None = None


@precision.float64
def _run_group(job: _Job, group: Group, runs: list) -> tuple[dict, float]:
    """Make ``runs`` (``[(arm, seed)]``) of one group's program here; with a store, in segments written there.

    Returns:
      ``({(arm, seed): record}, compile seconds)``: each record the arrays a store keeps of a finished run.
    """
    program = many.program_for(job.fn, job.space, job.budget, group.settings, group.n_init_range, job.stages,
                               job.batch)
    before = program.compile_seconds
    values_of = dict(zip(group.names, group.values))
    kept = None if job.store is None else store_lib.Store(job.store)
    if kept is None:
        batches = [runs]
    else:  # runs side by side continue together: one batch per position reached
        positions: dict = {}
        for run in runs:
            partial = kept.partial(*run)
            positions.setdefault(-1 if partial is None else int(partial["position"]), []).append(run)
        batches = list(positions.values()) if program.batch == "vmap" else [runs]
    made = {}

    def record(arm, seed, trace, info, seconds):
        info = _flat(info)
        out = {"values": np.asarray(trace.y, np.float64), "seconds": np.asarray(seconds, np.float64),
               "x": np.asarray(trace.x, np.float64) if job.store_points or kept is None
               else np.zeros((0, job.space.dim)), **{f"info:{k}": np.asarray(v) for k, v in info.items()}}
        if kept is not None:  # written as soon as the run ends
            kept.save_finished(arm, seed, out)
        made[(arm, seed)] = out

    for batch in batches:
        def finished(r, trace, info, seconds, batch=batch):
            for k, i in enumerate(r if isinstance(r, list) else [r]):
                pick = (lambda a, k=k: a[k]) if isinstance(r, list) else (lambda a: a)
                record(*batch[i], jax.tree_util.tree_map(pick, trace), jax.tree_util.tree_map(pick, info),
                       pick(seconds))

        segments = many.Segments() if kept is None else _segments(kept, batch, job.segments, job.budget)
        try:
            program.run(np.asarray([seed for _, seed in batch]), [values_of[arm] for arm, _ in batch], job.workers,
                        segments._replace(finished=finished))
        except ValueError:
            if isinstance(group.settings.acquisition, acq.Choice):
                raise _NoChoice() from None
            raise
    return made, program.compile_seconds - before


def _segments(kept: store_lib.Store, runs: list, segmenting: Segmenting, budget: int) -> many.Segments:
    """:class:`jbo.many.Segments` reading and writing the runs' partial records in ``kept``."""

    def load(r):
        if isinstance(r, list):  # runs side by side: equal positions (one batch per position)
            partials = [kept.partial(*runs[i]) for i in r]
            if any(p is None for p in partials):
                return None
            count = sum(1 for k in partials[0] if k.startswith("carry:"))
            leaves = [np.stack([p[f"carry:{i}"] for p in partials]) for i in range(count)]
            return int(partials[0]["position"]), leaves, np.stack([p["seconds"] for p in partials])
        partial = kept.partial(*runs[r])
        if partial is None:
            return None
        count = sum(1 for k in partial if k.startswith("carry:"))
        return int(partial["position"]), [partial[f"carry:{i}"] for i in range(count)], partial["seconds"]

    def save(r, position, leaves, seconds):
        for k, i in enumerate(r if isinstance(r, list) else [r]):
            own = [leaf[k] for leaf in leaves] if isinstance(r, list) else leaves
            # the carry's first leaves are the history's points and values (jbo.many.Carry)
            record = {"position": np.int64(position), "x": own[0][:budget], "values": own[1][:budget],
                      "seconds": np.asarray(seconds[k] if isinstance(r, list) else seconds),
                      **{f"carry:{j}": leaf for j, leaf in enumerate(own)}}
            kept.save_partial(*runs[i], record)

    return many.Segments(segmenting.evaluations, segmenting.seconds, load, save)


def run_task(payload: bytes) -> tuple[list, float]:
    """One task of a study on an executor (module level, so that pools pickle it by reference): make runs of one
    group's program, writing them to the study's store. ``payload``: ``(job, group, runs)`` as cloudpickle bytes.

    Returns:
      ``(runs, compile seconds)``.
    """
    import cloudpickle

    job, group, runs = cloudpickle.loads(payload)
    if job.jax_cache:
        cache.enable_jax_cache(job.jax_cache)
    _, compile_seconds = _run_group(job, group, runs)
    return runs, compile_seconds


def _run_on(executor, job: _Job, group: Group, runs: list, retries: int) -> float:
    """Send each of ``runs`` to ``executor`` as a task; one whose worker died goes again (at most ``retries``
    times). Returns the workers' compile seconds."""
    import cloudpickle

    engine = executors.backend(executor)
    job = job._replace(jax_cache=jax.config.jax_compilation_cache_dir if cache.jax_cache_enabled() else None)

    def submit(payload):
        try:
            return engine.submit(run_task, payload)
        except Exception as error:  # noqa: BLE001 - a broken pool, a closed client
            raise RuntimeError(f"the executor refused a task ({type(error).__name__}: {error}); the runs made so far "
                               f"are in the store: call the study again, with a working executor, to continue"
                               ) from error

    pending = {}
    for run in runs:
        payload = cloudpickle.dumps((job, group, [run]))
        pending[submit(payload)] = (payload, 0)
    compile_seconds = 0.0
    while pending:
        for future in executors.wait_first(engine, list(pending)):
            payload, tries = pending.pop(future)
            try:
                compile_seconds += future.result()[1]
            except _NoChoice:
                raise
            except Exception as error:  # noqa: BLE001 - the engine's own (KilledWorker, BrokenProcessPool, ...)
                if tries >= retries:
                    raise RuntimeError(f"a study task failed {tries + 1} times; the last error: "
                                       f"{type(error).__name__}: {error}") from error
                pending[submit(payload)] = (payload, tries + 1)
    return compile_seconds


def _result(space: Space, names: tuple, seeds, records: dict, configs: dict, programs: list,
            seconds: float, finished=None) -> StudyResult:
    """A :class:`StudyResult` from each run's record (``None``: not run; then ``nan`` values)."""
    budget = next(len(r["values"]) for r in records.values() if r is not None)
    empty = {"values": np.full(budget, np.nan), "seconds": np.zeros(budget), "x": np.zeros((0, space.dim))}
    full = {key: r if r is not None else empty for key, r in records.items()}
    values = np.stack([[full[(n, int(s))]["values"] for s in seeds] for n in names])

    def points(r):  # the stored points, nan where none were stored (store_points=False, a run in progress)
        x = np.asarray(r["x"], np.float64).reshape(-1, space.dim)
        return np.concatenate([x, np.full((budget - len(x), space.dim), np.nan)])

    x = np.stack([[points(full[(n, int(s))]) for s in seeds] for n in names])
    step_seconds = np.stack([[full[(n, int(s))]["seconds"] for s in seeds] for n in names])
    best_so_far = np.minimum.accumulate(np.where(np.isnan(values), np.inf, values), axis=-1)
    per_arm = []
    for n in names:
        found = {k[5:] for s in seeds for k in full[(n, int(s))] if k.startswith("info:")}
        per_arm.append({name: np.stack([full[(n, int(s))].get(f"info:{name}", np.full(budget, np.nan))
                                        for s in seeds]) for name in found
                        if all(f"info:{name}" in full[(n, int(s))] for s in seeds)})
    info = _stack_info(per_arm, values.shape[1:])
    best_configs = [[_best_config(space, x[a, k], values[a, k]) for k in range(len(seeds))] for a in range(len(names))]
    compile_seconds = float(sum(c for _, c in programs))
    return StudyResult(names, np.asarray(seeds), values, best_so_far, x, configs, best_configs, info, step_seconds,
                       tuple(programs), compile_seconds, seconds, finished)


def _best_config(space: Space, x: np.ndarray, values: np.ndarray):
    """The configuration of a run's best value, or ``None`` (no success, or its point not stored)."""
    ok = np.flatnonzero(np.isfinite(values))
    if not len(ok):
        return None
    row = x[ok[np.argmin(values[ok])]]
    return space.decode(row) if np.all(np.isfinite(row)) else None


def _from_store(kept: store_lib.Store) -> StudyResult:
    header = kept.header()
    if header is None:
        raise FileNotFoundError(f"no study store at {kept.path!r} (no {store_lib.HEADER})")
    done, partial = kept.runs("runs"), kept.runs("partial")
    names = tuple(a for a in header["arms"] if a in done or a in partial)
    if not names:
        raise ValueError(f"the store {kept.path!r} holds no run yet")
    seeds = np.asarray(sorted({s for a in names for s in done.get(a, []) + partial.get(a, [])}))
    space = Space.from_dict(header["space"])
    records, finished = {}, np.zeros((len(names), len(seeds)), bool)
    for a, name in enumerate(names):
        for k, seed in enumerate(seeds):
            record = kept.finished(name, int(seed))
            finished[a, k] = record is not None
            if record is None:
                record = kept.partial(name, int(seed))
                if record is not None:
                    position = int(record["position"])
                    values = np.where(np.arange(header["budget"]) < position, record["values"], np.nan)
                    record = {"values": values, "seconds": record["seconds"], "x": record["x"][:position]}
            records[(name, int(seed))] = record
    configs = {name: header["arms"][name] for name in names}
    return _result(space, names, seeds, records, configs, [], 0.0, finished)


def _stack_info(infos: list, runs_shape: tuple) -> dict:
    """The arms' diagnostics stacked along a leading arm axis: ``nan`` for an arm that does not report one;
    a name reported with different shapes by different arms is left out."""
    shapes: dict = {}
    for info in infos:
        for name, value in info.items():
            shapes.setdefault(name, set()).add(value.shape[2:])
    out = {}
    for name in sorted(shapes):
        if len(shapes[name]) == 1:
            (tail,) = shapes[name]
            blank = np.full(runs_shape + tail, np.nan)
            out[name] = np.stack([np.asarray(info[name], np.float64) if name in info else blank for info in infos])
    return out


def _flat(info) -> dict:
    """A model step's diagnostics as ``{name: (runs, budget, ...)}`` (nested names joined by dots)."""
    out = {}
    for name, value in (info or {}).items():
        if isinstance(value, dict):
            out.update({f"{name}.{k}": v for k, v in _flat(value).items()})
        else:
            out[name] = np.asarray(value)
    return out


def _jsonable(value):
    """``value`` as JSON reads it back; what JSON cannot hold (a function of the user's) as its ``repr``."""
    def scalar_or_repr(v):
        try:
            return _json_scalar(v)
        except TypeError:
            return repr(v)

    return json.loads(json.dumps(value, default=scalar_or_repr))
