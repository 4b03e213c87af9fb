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
import time
from typing import Callable, Mapping, NamedTuple

import numpy as np

from jbo import acquisition as acq
from jbo import checks, loop, many, metrics, plotting
from jbo.many import RunValues
from jbo.optimizer import _enable_dtype
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
        """A result written by :meth:`save`."""
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


def study(fn: Callable, space: Space, budget: int, seeds, arms: Mapping[str, dict], batch: str | None = None,
          stages: tuple[int, ...] | None = None, workers: int | None = None) -> StudyResult:
    """Run every arm with every seed; arms that differ only in values share one compiled program.

    Args:
      fn: a JAX objective (see :func:`jbo.many.run_function`; ``problem.evaluate`` of :mod:`jbo.benchmarks`).
      space: the search space.
      budget: evaluations per run.
      seeds: the seeds, the same for every arm.
      arms: ``name -> options`` (what :func:`jbo.minimize_many` takes: ``model``, the loop's options,
        the model's options).
      batch: ``"map"`` (one run after the other: the CPU default) or ``"vmap"`` (the runs of a program
        side by side, padded to a power of two: the accelerator default); :func:`jbo.many.default_batch`.
      stages: padded sizes of the observation buffers (default: those of :func:`jbo.minimize`,
        :func:`jbo.many.stage_sizes`).
      workers: with ``"map"``, runs made at once from host threads (default: one per core on a CPU); the
        results do not depend on it.
    Returns:
      :class:`StudyResult`.
    """
    start = time.perf_counter()
    seeds = many.check_seeds(seeds)
    budget = checks.integer("budget", budget, 1, integral_floats=True)
    groups = plan(space, budget, arms)
    names = tuple(arms)
    results: dict = {}
    programs = []
    queue = list(groups)
    while queue:
        group = queue.pop(0)
        _enable_dtype(group.settings.dtype)
        program = many.program_for(fn, space, budget, group.settings, group.n_init_range, stages, batch)
        before = program.compile_seconds
        runs = [(seed, values) for values in group.values for seed in seeds]
        try:
            trace, info, seconds = program.run(np.asarray([r[0] for r in runs]), [r[1] for r in runs], workers)
        except ValueError:
            if not isinstance(group.settings.acquisition, acq.Choice):
                raise
            queue = _split(group) + queue  # the model takes one acquisition per program
            continue
        programs.append((group.names, program.compile_seconds - before))
        per_arm = len(seeds)
        for k, name in enumerate(group.names):
            part = slice(k * per_arm, (k + 1) * per_arm)
            results[name] = (many.Trace(trace.x[part], trace.y[part]), {n: v[part] for n, v in _flat(info).items()},
                             seconds[part])
    x = np.stack([np.asarray(results[n][0].x, np.float64) for n in names])
    values = np.stack([np.asarray(results[n][0].y, np.float64) for n in names])
    best_so_far = np.minimum.accumulate(np.where(np.isnan(values), np.inf, values), axis=-1)
    info = _stack_info([results[n][1] for n in names], values.shape[1:])
    best_configs = [many.many_result(space, seeds, results[n][0], 0.0, 0.0).best_configs for n in names]
    configs = {n: s.to_dict() for group in groups for n, s in zip(group.names, group.configs)}
    compile_seconds = float(sum(s for _, s in programs))
    return StudyResult(names, seeds, values, best_so_far, x, _jsonable(configs), best_configs, info,
                       np.stack([results[n][2] for n in names]), tuple(programs), compile_seconds,
                       time.perf_counter() - start)


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
