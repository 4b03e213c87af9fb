"""Whole BO runs as one compiled program over many seeds: :func:`minimize_many`.

When the objective is a JAX function, a run needs no host at all: the initial design, every
suggestion (:func:`jbo.loop.suggestion`, the step the ask/tell loop compiles too) and every
evaluation are one ``lax.scan`` over iterations with the observations padded once to the budget.
:func:`run_function` returns that run as a pure function ``key -> Trace``; ``jax.vmap`` runs many
seeds (or many values of an array-valued setting) in one call, compiled once per model, budget and
dimension::

    problem = jbo.benchmarks.get_problem("hartmann6")
    result = jbo.minimize_many(problem.evaluate, problem.space(), budget=100, seeds=range(30))
    result.best_values            # (30,)

    run = jbo.many.run_function(problem.evaluate, problem.space(), 60, acquisition="ucb")
    keys = jax.vmap(jax.random.key)(jnp.arange(4))
    traces = jax.jit(jax.vmap(run))(keys, jnp.array([0.5, 1.0, 2.0, 4.0]))   # four UCB weights

Every model whose step is traceable runs this way (GP, arc, DNGO and ensembles, tree models,
random search). There are no pending points (a run evaluates one point after the other).
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import math
import os
import time
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbo import checks, loop
from jbo.data import bucket_size, multiple_of_8, run_sizes
from jbo.models.base import ModelConfig
from jbo.optimizer import _enable_dtype
from jbo.spaces import Space
from jbo.types import Pending


class Trace(NamedTuple):
    """The evaluations of one run, in order: ``x`` ``(budget, D)`` encoded points and ``y``
    ``(budget,)`` values (``nan`` where the objective returned a non-finite value)."""

    x: jnp.ndarray
    y: jnp.ndarray


class ManyResult(NamedTuple):
    """Outcome of :func:`minimize_many` (NumPy arrays, one row per seed).

    Attributes:
      seeds: ``(S,)`` the seeds.
      values: ``(S, budget)`` objective values in evaluation order (``nan`` = failure).
      best_values: ``(S,)`` best successful value of each run (``inf`` if all failed).
      best_so_far: ``(S, budget)`` running minimum of the successful values.
      best_configs: the best configuration of each run (user units; ``None`` if all failed).
      x: ``(S, budget, D)`` the encoded points evaluated.
      seconds: wall time of the call, compilation included.
      compile_seconds: the part of it spent tracing and compiling.
    """

    seeds: np.ndarray
    values: np.ndarray
    best_values: np.ndarray
    best_so_far: np.ndarray
    best_configs: list
    x: np.ndarray
    seconds: float
    compile_seconds: float


def _objective(fn: Callable, space: Space, dtype):
    """``x (D,) -> value``: ``fn`` on the decoded configuration; a non-finite value is ``nan``."""

    def evaluate(x):
        value = jnp.asarray(fn(space.decode_arrays(x)), dtype).reshape(())
        return jnp.where(jnp.isfinite(value), value, jnp.nan)

    return evaluate


def capacity(budget: int) -> int:
    """Padded size of a run's observation buffers: the budget rounded up to a multiple of 8."""
    return multiple_of_8(budget)


def stage_sizes(budget: int, start: int = 0) -> tuple[int, ...]:
    """The padded sizes a whole run's suggestions use, in order: those of :func:`jbo.minimize`
    (:func:`jbo.data.run_sizes`), so that a compiled run computes what the ask/tell loop does.

    Each size is one more copy of the step in the program (compile time); a smaller size for the
    early suggestions makes them cheaper (a GP's work grows as ``N^3``).

    Args:
      budget: evaluations per run; start: the first model suggestion's index (the design's size).
    """
    size = run_sizes(budget)
    sizes = []
    for n in range(start, budget):
        c = size(n) or bucket_size(n)
        if not sizes or sizes[-1] != c:
            sizes.append(c)
    return tuple(sizes) or (capacity(budget),)


class RunValues(NamedTuple):
    """What runs of one compiled program may differ in besides their key (arrays: a batch of runs is
    ``vmap``-ped or mapped over them). Everything else in a run's settings is a shape or maths.

    Attributes:
      choice: index of the run's acquisition in the program's :class:`jbo.acquisition.Choice` (0 for one).
      ucb_beta: UCB's weight.
      impute: the failure policy, ``True`` for ``"worst"``, ``False`` for ``"ignore"``.
      n_init: the initial design's size.
      centre: the design starts at the centre of the cube.
    """

    choice: jnp.ndarray
    ucb_beta: jnp.ndarray
    impute: jnp.ndarray
    n_init: jnp.ndarray
    centre: jnp.ndarray

    @classmethod
    def of(cls, settings: loop.Settings, dim: int, budget: int, choice: int = 0) -> "RunValues":
        """The values of a run with ``settings`` (NumPy scalars)."""
        n_init = min(settings.initial_size(dim), budget) if settings.model.uses_initial_design else 0
        return cls(np.int32(choice), np.float64(settings.ucb_beta), np.bool_(settings.failures == "worst"),
                   np.int32(n_init), np.bool_(settings.design == "centre"))


def whole_run(fn: Callable, space: Space, budget: int, settings: loop.Settings, n_init_range: tuple[int, int],
              stages: tuple[int, ...] | None = None, tick: Callable | None = None):
    """A whole run as a pure function ``run(key, values) -> (Trace, info)`` (traceable).

    The runs of one such function differ in their key and their :class:`RunValues` only: the
    acquisition (among ``settings.acquisition``'s :class:`~jbo.acquisition.Choice` options), UCB's
    weight, the failure policy (``"worst"`` or ``"ignore"``), the design's size (within
    ``n_init_range``) and whether it starts at the centre.

    The observations sit in buffers of the budget's capacity; suggestion ``i`` sees the first
    ``stage`` rows, ``stage`` the smallest of ``stages`` holding ``i`` (one ``lax.scan`` per stage).

    Args:
      fn, space, budget: the objective, its space and the evaluations per run (see :func:`run_function`).
      settings: the program's settings (``settings.program()``: seed, design size and UCB weight are
        values, not part of the program).
      n_init_range: the smallest and the largest design size the runs use (static: the scans start at
        the smallest; a run with a larger design evaluates design points up to its own size).
      stages: padded sizes, increasing, the last ``>= budget`` (default :func:`stage_sizes`).
      tick: a host function ``tick(tag, i, value)`` called when evaluation ``i`` of the run tagged ``tag`` is
        done (timing), or ``None``.
    """
    dtype = settings.float_dtype
    n_lo, n_hi = (int(n) for n in n_init_range)
    size = capacity(budget)
    stages = tuple(stages or stage_sizes(budget, n_lo))
    if list(stages) != sorted(set(stages)) or stages[-1] < budget - 1 or stages[0] < 8:
        raise ValueError(f"stages must be increasing padded sizes ending at >= budget - 1, got {stages}")
    objective = _objective(fn, space, dtype)
    structure = space.structure  # what the model's programs see of the space: bounds and names are the objective's
    bins = np.asarray(space.bins)
    design_table = loop.design_table(dataclasses.replace(settings, n_init=max(n_hi, 1)), space, np.float64)
    anchor_table = np.asarray(loop.anchor_table(settings, space))

    def run(key, values: RunValues, tag=0):
        values = RunValues(*(jnp.asarray(v) for v in values))
        beta = values.ucb_beta.astype(dtype)
        x = jnp.full((max(size, stages[-1]), space.dim), 0.5, dtype)
        y = jnp.full((x.shape[0],), jnp.nan, dtype)
        rows = jnp.arange(x.shape[0])
        if n_hi:
            design_key = jax.random.fold_in(key, loop.DESIGN_STREAM)
            table = jnp.asarray(design_table, dtype)
            points = loop._design(design_key, structure, n_hi, table, False, bins.astype(dtype)).astype(dtype)
            if settings.model.uses_initial_design:
                centred = loop._design(design_key, structure, n_hi, table, True, bins.astype(dtype)).astype(dtype)
                points = jnp.where(values.centre, centred, points)
            used = jnp.arange(n_hi) < values.n_init
            x = x.at[:n_hi].set(jnp.where(used[:, None], points, 0.5))
            y = y.at[:n_hi].set(jnp.where(used, jax.vmap(objective)(points), jnp.nan))
        history = loop.History(x, y, rows < values.n_init)
        state = settings.model.init(structure, dtype, jax.random.fold_in(key, loop.INIT_STREAM))
        pending = Pending.empty(space.dim, dtype)
        table = jnp.asarray(anchor_table, dtype)

        def suggest(history, state, fitted, i, stage):
            view = loop.History(history.x[:stage], history.y[:stage], history.mask[:stage])
            return loop.suggestion(settings, structure, state, fitted, view, pending, table,
                                   loop.suggestion_key(key, i), beta, values.choice, values.impute,
                                   jnp.asarray(bins, dtype))

        blank = None
        if n_hi > n_lo:  # the design branch of the scan needs the diagnostics' shapes (one more trace)
            blank = jax.tree_util.tree_map(_blank, jax.eval_shape(
                lambda h, s: suggest(h, s, jnp.asarray(False), 0, stages[0])[3], history, state))

        def body(stage):
            def step(carry, i):
                history, state, fitted = carry

                def model(_):
                    x, new_state, new_fitted, info = suggest(history, state, fitted, i, stage)
                    return x.astype(dtype), new_state, new_fitted, info

                def design(_):
                    return history.x[i], state, fitted, blank

                if n_hi > n_lo:  # a run whose design is larger than the program's smallest evaluates it first
                    x, state, fitted, info = jax.lax.cond(i < values.n_init, design, model, None)
                else:
                    x, state, fitted, info = model(None)
                value = objective(x)
                if tick is not None:
                    jax.debug.callback(tick, tag, i, value)
                history = loop.History(history.x.at[i].set(x), history.y.at[i].set(value), history.mask.at[i].set(True))
                return (history, state, fitted), info
            return step

        carry = (history, state, jnp.asarray(False))
        infos, start = [], n_lo
        for stage in stages:
            stop = min(budget, stage + 1)  # suggestion i sees i observations: a stage of C rows serves i <= C
            if stop > start:
                carry, info = jax.lax.scan(body(stage), carry, jnp.arange(start, stop))
                infos.append(info)
                start = stop
        history = carry[0]
        if infos:
            head = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(_blank(a[0]), (n_lo,) + a.shape[1:]), infos[0])
            info = jax.tree_util.tree_map(lambda *parts: jnp.concatenate(parts), head, *infos)
        else:
            info = {}
        return Trace(history.x[:budget], history.y[:budget]), info

    return run


def _blank(shape):
    """The value of a diagnostic (shaped as ``shape``) at a step that made no model suggestion."""
    if jnp.issubdtype(shape.dtype, jnp.floating):
        return jnp.full(shape.shape, jnp.nan, shape.dtype)
    if jnp.issubdtype(shape.dtype, jnp.bool_):
        return jnp.zeros(shape.shape, shape.dtype)
    return jnp.full(shape.shape, -1, shape.dtype)


def run_function(fn: Callable, space: Space, budget: int, model: str | ModelConfig = "gp", **options):
    """A whole run as a pure function ``run(key, ucb_beta=None) -> Trace`` (traceable).

    Args:
      fn: the objective: takes a configuration whose values are JAX scalars
        (:meth:`jbo.spaces.Space.decode_arrays`: all parameters, active or not; categorical
        parameters as their value when numeric, else as their index) and returns a JAX scalar.
      space: the search space.
      budget: evaluations per run, the initial design included.
      model, **options: as for :class:`jbo.Optimizer` (``seed`` is not an option here: the key is).
    Returns:
      ``run(key, ucb_beta=None)``: ``key`` is the run's seed key (``jax.random.key(seed)`` gives the
      run ``jbo.minimize(..., seed=seed)`` makes); ``ucb_beta`` overrides the setting and may be traced
      (``vmap`` over it).
    """
    if "seed" in options:
        raise ValueError("seed is not an option of run_function: pass the key (jax.random.key(seed)) to run")
    budget = checks.integer("budget", budget, 1, integral_floats=True)
    settings = loop.Settings.create(model, **options)
    _enable_dtype(settings.dtype)
    values = RunValues.of(settings, space.dim, budget)
    whole = whole_run(fn, space, budget, settings.program(), (int(values.n_init),) * 2)

    def run(key, ucb_beta=None):
        beta = values.ucb_beta if ucb_beta is None else ucb_beta
        return whole(key, values._replace(ucb_beta=beta))[0]

    return run


BATCHING = ("vmap", "map")


def default_batch() -> str:
    """``"vmap"`` on a GPU/TPU; ``"map"`` (one run after the other) on a CPU, where batched runs wait for
    each other's loops (a batched sampler or L-BFGS runs until its slowest seed is done) and gain no
    parallelism (BENCHMARKS.md, design choices)."""
    return "map" if jax.default_backend() == "cpu" else "vmap"


def check_seeds(seeds) -> np.ndarray:
    seeds = np.asarray(list(seeds) if not isinstance(seeds, np.ndarray) else seeds)
    if seeds.ndim != 1 or len(seeds) == 0 or not np.issubdtype(seeds.dtype, np.integer):
        raise ValueError(f"seeds must be a non-empty sequence of integers, got {seeds!r}")
    return seeds


def runs_bucket(n: int) -> int:
    """Batch size a ``vmap``-ped program is compiled for: ``n`` rounded up to a power of two, so that
    another number of runs reuses it."""
    return 1 << max(0, math.ceil(math.log2(n)))


class Program:
    """One compiled whole-run program and the runs it makes: :meth:`run` takes any number of
    ``(seed, RunValues)`` runs without compiling again.

    ``"map"``: a program of one run, called once per run from ``workers`` host threads (JAX releases the
    GIL while a program runs: on a CPU each run keeps one core busy); no padding, per-evaluation times, and
    a new number of runs costs nothing. ``"vmap"``: a program of :func:`runs_bucket` runs side by side.
    """

    def __init__(self, fn, space, budget, settings, n_init_range, stages=None, batch=None):
        self.batch = batch or default_batch()
        if self.batch not in BATCHING:
            raise ValueError(f"unknown batch {self.batch!r}; valid choices: {list(BATCHING)}")
        self.settings, self.budget, self.space = settings, budget, space
        self._ticks: dict = collections.defaultdict(list)
        tick = self._tick if self.batch == "map" else None
        self._run = whole_run(fn, space, budget, settings, n_init_range, stages, tick)
        self._compiled: dict = {}
        self.compile_seconds = 0.0  # tracing, lowering and XLA's compilation
        self.trace_seconds = 0.0  # of which tracing and lowering to StableHLO

    def _tick(self, tag, i, value):
        self._ticks[int(tag)].append(time.perf_counter())

    def _program(self, num: int):
        width = None if self.batch == "map" else runs_bucket(num)
        if width not in self._compiled:
            start = time.perf_counter()
            dtype = self.settings.float_dtype
            example = RunValues.of(self.settings, self.space.dim, 1)
            example = example._replace(ucb_beta=np.asarray(example.ucb_beta, dtype))
            if width is None:
                fn = jax.jit(self._run)
                args = (jax.random.key(0), RunValues(*map(jnp.asarray, example)), jnp.int32(0))
            else:
                fn = jax.jit(jax.vmap(lambda key, values: self._run(key, values)))
                args = (jax.vmap(jax.random.key)(jnp.zeros(width, jnp.int32)),
                        RunValues(*(jnp.zeros(width, np.asarray(v).dtype) for v in example)))
            with jax.default_matmul_precision("highest"):  # as the ask/tell step (loop.full_precision)
                lowered = fn.lower(*args)
                self.trace_seconds += time.perf_counter() - start
                self._compiled[width] = lowered.compile()
            self.compile_seconds += time.perf_counter() - start
        return self._compiled[width], width

    def run(self, seeds, values: list, workers: int | None = None) -> tuple[Trace, dict, np.ndarray]:
        """Runs ``i`` with seed ``seeds[i]`` and ``values[i]`` (:class:`RunValues`).

        Args:
          seeds, values: the runs.
          workers: host threads making ``"map"`` runs at once (default :func:`default_workers`).
        Returns:
          ``(trace, info, seconds)``: NumPy arrays with a leading run axis; ``seconds`` ``(runs, budget)``
          the time of each evaluation (model step and objective) where the batch is ``"map"``, else the
          batch's time spread evenly.
        """
        program, width = self._program(len(seeds))
        dtype = self.settings.float_dtype
        stacked = RunValues(*(np.stack(column) for column in zip(*values)))
        stacked = stacked._replace(ucb_beta=stacked.ucb_beta.astype(dtype))
        seconds = np.zeros((len(seeds), self.budget))
        if width is None:
            def one(r):
                self._ticks.pop(r, None)
                start = time.perf_counter()
                out = jax.block_until_ready(program(jax.random.key(int(seeds[r])),
                                                    RunValues(*(v[r] for v in stacked)), np.int32(r)))
                seconds[r] = _step_seconds(start, np.asarray(self._ticks.pop(r, [])), self.budget,
                                           time.perf_counter())
                return jax.tree_util.tree_map(np.asarray, out)

            workers = min(len(seeds), workers or default_workers())
            if workers > 1:
                with concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="jbo-run") as pool:
                    outs = list(pool.map(one, range(len(seeds))))
            else:
                outs = [one(r) for r in range(len(seeds))]
            trace, info = jax.tree_util.tree_map(lambda *leaves: np.stack(leaves), *outs)
            return trace, info, seconds
        pad = width - len(seeds)
        keys = jax.vmap(jax.random.key)(jnp.asarray(np.concatenate([seeds, np.repeat(seeds[-1:], pad)])))
        padded = RunValues(*(jnp.asarray(np.concatenate([v, np.repeat(v[-1:], pad)])) for v in stacked))
        start = time.perf_counter()
        out = jax.block_until_ready(program(keys, padded))
        seconds[:] = (time.perf_counter() - start) / self.budget
        trace, info = jax.tree_util.tree_map(lambda a: np.asarray(a)[:len(seeds)], out)
        return trace, info, seconds


def default_workers() -> int:
    """Runs made at once by a ``"map"`` program: one per core on a CPU (a run of the compiled program keeps
    one core busy), one on an accelerator (where ``"vmap"`` is the way to run several)."""
    if jax.default_backend() != "cpu":
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _step_seconds(start: float, ends: np.ndarray, budget: int, stop: float) -> np.ndarray:
    """Seconds of each evaluation of one run from the times its model steps ended; the design's share
    of the time before the first model step is spread over the design's evaluations."""
    seconds = np.zeros(budget)
    n = len(ends)
    if n == 0:
        seconds[:] = (stop - start) / budget
        return seconds
    first = budget - n
    seconds[first:] = np.diff(np.concatenate([[start], ends]))
    if first:  # the design's evaluations and the program's start lie before the first model step
        seconds[:first] = seconds[first] / (first + 1)
        seconds[first] /= first + 1
    return seconds


_PROGRAMS: collections.OrderedDict = collections.OrderedDict()
PROGRAMS_KEPT = 8  # compiled programs hold memory (and memory maps): keep the most recently used


def program_for(fn, space, budget, settings, n_init_range, stages=None, batch=None) -> Program:
    """The :class:`Program` of these arguments, compiled at most once per process (a new number of runs or
    other :class:`RunValues` reuse it)."""
    key = (fn, space, int(budget), settings, tuple(n_init_range), None if stages is None else tuple(stages),
           batch or default_batch())
    if key not in _PROGRAMS:
        _PROGRAMS[key] = Program(fn, space, int(budget), settings, n_init_range, stages, batch)
        while len(_PROGRAMS) > PROGRAMS_KEPT:
            _PROGRAMS.popitem(last=False)
    _PROGRAMS.move_to_end(key)
    return _PROGRAMS[key]


def minimize_many(fn: Callable, space: Space, budget: int, seeds, model: str | ModelConfig = "gp",
                  ucb_beta=None, batch: str | None = None, workers: int | None = None, **options) -> ManyResult:
    """Minimise a JAX objective with one run per seed, all runs by one compiled program.

    This is :func:`jbo.study` with one arm.

    Args:
      fn: the objective (see :func:`run_function`); the benchmarks of :mod:`jbo.benchmarks` are such
        functions (``problem.evaluate``).
      space: the search space.
      budget: evaluations per run.
      seeds: the runs' seeds (each run is what ``jbo.minimize(..., seed=seed)`` computes).
      model, **options: as for :class:`jbo.Optimizer`.
      ucb_beta: one UCB weight per seed (``(S,)``), a scalar, or ``None`` (the setting's).
      batch: how the runs are made: ``"vmap"`` (side by side: one batched program, what an accelerator
        is for) or ``"map"`` (a program of one run, called for each seed). Default: :func:`default_batch`.
      workers: with ``"map"``, runs made at once from host threads (default :func:`default_workers`: one
        per core on a CPU); the results do not depend on it.
    Returns:
      :class:`ManyResult`.
    """
    batch = batch or default_batch()
    if batch not in BATCHING:
        raise ValueError(f"unknown batch {batch!r}; valid choices: {list(BATCHING)}")
    seeds = check_seeds(seeds)
    if "seed" in options:
        raise ValueError("seed is not an option of minimize_many: pass seeds")
    budget = checks.integer("budget", budget, 1, integral_floats=True)
    start = time.perf_counter()
    settings = loop.Settings.create(model, **options)
    _enable_dtype(settings.dtype)
    base = RunValues.of(settings, space.dim, budget)
    beta = np.broadcast_to(np.asarray(settings.ucb_beta if ucb_beta is None else ucb_beta, np.float64), seeds.shape)
    program = program_for(fn, space, budget, settings.program(), (int(base.n_init),) * 2, None, batch)
    compiled_before = program.compile_seconds
    trace, _, _ = program.run(seeds, [base._replace(ucb_beta=np.float64(b)) for b in beta], workers)
    return many_result(space, seeds, trace, time.perf_counter() - start, program.compile_seconds - compiled_before)


def many_result(space: Space, seeds, trace: Trace, seconds: float, compile_seconds: float) -> ManyResult:
    x, values = np.asarray(trace.x, np.float64), np.asarray(trace.y, np.float64)
    best_so_far = np.minimum.accumulate(np.where(np.isnan(values), np.inf, values), axis=1)
    best_configs = []
    for row, vals in zip(x, values):
        ok = np.flatnonzero(np.isfinite(vals))
        best_configs.append(space.decode(row[ok[np.argmin(vals[ok])]]) if len(ok) else None)
    return ManyResult(np.asarray(seeds), values, best_so_far[:, -1], best_so_far, best_configs, x, seconds,
                      compile_seconds)
