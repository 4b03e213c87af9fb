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
import threading
import time
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbo import _xla_cpu, checks, loop, precision
from jbo.data import bucket_size, multiple_of_8, run_sizes
from jbo.models.base import ModelConfig
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


class Carry(NamedTuple):
    """A whole run's state between two evaluations: what a run in segments carries (and a store keeps) from one
    segment to the next.

    Attributes:
      history: the observations, padded to the run's capacity (:class:`jbo.loop.History`).
      state: the model's carried state; fitted: it has been fitted (a warm start).
      info: ``{name: (budget, ...)}`` each model step's diagnostics at its evaluation (blank at the design's).
    """

    history: loop.History
    state: object
    fitted: jnp.ndarray
    info: dict


class WholeRun(NamedTuple):
    """A whole run as pure functions, to be called in segments (:func:`whole_run_parts`).

    ``start(key, values) -> Carry`` evaluates the initial design; ``advance(carry, key, values, begin, end, stage,
    tag) -> Carry`` makes evaluations ``begin .. end - 1`` (traced bounds: one program per ``stage`` serves every
    segment), each suggestion seeing the first ``stage`` rows (static); :meth:`pieces` splits a range of
    evaluations by stage; ``finish(carry) -> (Trace, info)``.
    """

    start: Callable
    advance: Callable
    stages: tuple
    first: int
    budget: int

    def pieces(self, begin: int, end: int):
        """``[(stage, a, b), ...]``: evaluations ``begin .. end - 1`` by the stage each is made in."""
        out, lower = [], self.first
        for stage in self.stages:
            upper = min(self.budget, stage + 1)  # suggestion i sees i observations: a stage of C rows serves i <= C
            a, b = max(begin, lower), min(end, upper)
            if b > a:
                out.append((stage, a, b))
            lower = max(lower, upper)
        return out

    def finish(self, carry: Carry):
        return Trace(carry.history.x[:self.budget], carry.history.y[:self.budget]), carry.info


def whole_run_parts(fn: Callable, space: Space, budget: int, settings: loop.Settings, n_init_range: tuple[int, int],
                    stages: tuple[int, ...] | None = None, tick: Callable | None = None) -> WholeRun:
    """A whole run as :class:`WholeRun` functions (traceable): what :func:`whole_run` runs in one call and
    :func:`jbo.study` with a store runs in segments, saving the :class:`Carry` between them.

    The runs of one such function differ in their key and their :class:`RunValues` only: the
    acquisition (among ``settings.acquisition``'s :class:`~jbo.acquisition.Choice` options), UCB's
    weight, the failure policy (``"worst"`` or ``"ignore"``), the design's size (within
    ``n_init_range``) and whether it starts at the centre.

    The observations sit in buffers of the budget's capacity; suggestion ``i`` sees the first
    ``stage`` rows, ``stage`` the smallest of ``stages`` holding ``i``.

    Args:
      fn, space, budget: the objective, its space and the evaluations per run (see :func:`run_function`).
      settings: the program's settings (``settings.program()``: seed, design size and UCB weight are
        values, not part of the program).
      n_init_range: the smallest and the largest design size the runs use (static: the model's evaluations start
        at the smallest; a run with a larger design evaluates design points up to its own size).
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
    design_table = loop.design_table(dataclasses.replace(settings, n_init=max(n_hi, 1)), space)
    anchor_table = np.asarray(loop.anchor_table(settings, space))
    pending = Pending.empty(space.dim, dtype)
    rows = max(size, stages[-1])

    def suggest(history, state, fitted, i, stage, key, values):
        view = loop.History(history.x[:stage], history.y[:stage], history.mask[:stage])
        return loop.suggestion(settings, structure, state, fitted, view, pending, jnp.asarray(anchor_table, dtype),
                               loop.suggestion_key(key, i), values.ucb_beta.astype(dtype), values.choice,
                               values.impute, jnp.asarray(bins, dtype))

    def start(key, values: RunValues) -> Carry:
        values = RunValues(*(jnp.asarray(v) for v in values))
        x = jnp.full((rows, space.dim), 0.5, dtype)
        y = jnp.full((rows,), jnp.nan, dtype)
        if n_hi:
            design_key = jax.random.fold_in(key, loop.DESIGN_STREAM)
            table = jnp.asarray(design_table)
            points = loop._design(design_key, structure, n_hi, table, False, bins.astype(dtype)).astype(dtype)
            if settings.model.uses_initial_design:
                centred = loop._design(design_key, structure, n_hi, table, True, bins.astype(dtype)).astype(dtype)
                points = jnp.where(values.centre, centred, points)
            used = jnp.arange(n_hi) < values.n_init
            x = x.at[:n_hi].set(jnp.where(used[:, None], points, 0.5))
            y = y.at[:n_hi].set(jnp.where(used, jax.vmap(objective)(points), jnp.nan))
        history = loop.History(x, y, jnp.arange(rows) < values.n_init)
        state = settings.model.init(structure, dtype, jax.random.fold_in(key, loop.INIT_STREAM))
        shapes = jax.eval_shape(lambda h, s: suggest(h, s, jnp.asarray(False), 0, stages[0], key, values)[3],
                                history, state)
        info = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(_blank(a), (budget,) + a.shape), shapes)
        return Carry(history, state, jnp.asarray(False), info)

    def advance(carry: Carry, key, values: RunValues, begin, end, stage: int, tag=0) -> Carry:
        values = RunValues(*(jnp.asarray(v) for v in values))
        blank = jax.tree_util.tree_map(lambda a: _blank(a[0]), carry.info)

        def step(i, carry: Carry) -> Carry:
            history, state, fitted, info = carry

            def model(_):
                x, new_state, new_fitted, new_info = suggest(history, state, fitted, i, stage, key, values)
                return x.astype(dtype), new_state, new_fitted, new_info

            def design(_):
                return history.x[i], state, fitted, blank

            if n_hi > n_lo:  # a run whose design is larger than the program's smallest evaluates it first
                x, state, fitted, new_info = jax.lax.cond(i < values.n_init, design, model, None)
            else:
                x, state, fitted, new_info = model(None)
            value = objective(x)
            if tick is not None:
                jax.debug.callback(tick, tag, i, value)
            history = loop.History(history.x.at[i].set(x), history.y.at[i].set(value), history.mask.at[i].set(True))
            info = jax.tree_util.tree_map(lambda buffer, v: buffer.at[i].set(v), info, new_info)
            return Carry(history, state, fitted, info)

        return jax.lax.fori_loop(jnp.asarray(begin, jnp.int32), jnp.asarray(end, jnp.int32), step, carry)

    return WholeRun(start, advance, stages, n_lo, budget)


def whole_run(fn: Callable, space: Space, budget: int, settings: loop.Settings, n_init_range: tuple[int, int],
              stages: tuple[int, ...] | None = None, tick: Callable | None = None):
    """A whole run as a pure function ``run(key, values, tag=0) -> (Trace, info)`` (traceable): the segments of
    :func:`whole_run_parts` (same arguments) in one call."""
    parts = whole_run_parts(fn, space, budget, settings, n_init_range, stages, tick)

    def run(key, values: RunValues, tag=0):
        carry = parts.start(key, values)
        for stage, a, b in parts.pieces(parts.first, budget):
            carry = parts.advance(carry, key, values, a, b, stage, tag)
        return parts.finish(carry)

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
    values = RunValues.of(settings, space.dim, budget)
    whole = whole_run(fn, space, budget, settings.program(), (int(values.n_init),) * 2)

    @precision.float64  # traced with x64 on: jbo's float64 (the objective's inputs are in the run's dtype)
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


class Segments(NamedTuple):
    """How a run of a :class:`Program` is cut into segments, and what happens after each.

    Attributes:
      evaluations: the most evaluations per segment (``None``: a stage at a time).
      seconds: once a segment has been timed, later ones are cut so as to last about this long (``None``: no
        limit by time).
      resume: ``resume(r) -> (position, leaves, seconds) | None``: where run ``r`` continues (the leaves of its
        :class:`Carry`, :func:`carry_leaves`, and the seconds of its evaluations so far), or ``None``: afresh.
        Runs side by side (``"vmap"``) pass the list of runs; their leaves are stacked and their positions equal.
      saved: ``saved(r, position, leaves, seconds)``: called after each segment of run ``r`` (or list of runs)
        that leaves it unfinished.
      finished: ``finished(r, trace, info, seconds)``: called once run ``r`` (or list of runs) is complete, with
        :meth:`WholeRun.finish`'s arrays (NumPy, leading run axis for a list).
    """

    evaluations: int | None = None
    seconds: float | None = None
    resume: Callable | None = None
    saved: Callable | None = None
    finished: Callable | None = None


def carry_leaves(carry) -> list[np.ndarray]:
    """A :class:`Carry` as NumPy arrays (PRNG keys as their key data), in the order of its leaves."""
    out = []
    for leaf in jax.tree_util.tree_leaves(carry):
        if jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            leaf = jax.random.key_data(leaf)
        out.append(np.asarray(leaf))
    return out


class Program:
    """One compiled whole-run program and the runs it makes: :meth:`run` takes any number of
    ``(seed, RunValues)`` runs without compiling again.

    A run is the :class:`WholeRun` functions called in segments: the design (``start``), then one ``advance``
    program per stage, each serving every segment of that stage. ``"map"``: programs of one run, called once
    per run from ``workers`` host threads (JAX releases the GIL while a program runs: on a CPU each run keeps one
    core busy); no padding, per-evaluation times, and a new number of runs costs nothing. ``"vmap"``: programs of
    :func:`runs_bucket` runs side by side.
    """

    def __init__(self, fn, space, budget, settings, n_init_range, stages=None, batch=None):
        self.batch = batch or default_batch()
        if self.batch not in BATCHING:
            raise ValueError(f"unknown batch {self.batch!r}; valid choices: {list(BATCHING)}")
        self.settings, self.budget, self.space = settings, budget, space
        self._ticks: dict = collections.defaultdict(list)
        tick = self._tick if self.batch == "map" else None
        self.parts = whole_run_parts(fn, space, budget, settings, n_init_range, stages, tick)
        self._compiled: dict = {}
        self._carry_shapes: dict = {}
        # Runs of "map" start from several threads; tracing is not thread-safe (numpyro's handlers are global).
        self._lock = threading.Lock()
        self.compile_seconds = 0.0  # tracing, lowering and XLA's compilation
        self.trace_seconds = 0.0  # of which tracing and lowering to StableHLO

    def _tick(self, tag, i, value):
        self._ticks[int(tag)].append(time.perf_counter())

    def _examples(self, width):
        dtype = self.settings.float_dtype
        example = RunValues.of(self.settings, self.space.dim, 1)
        example = example._replace(ucb_beta=np.asarray(example.ucb_beta, dtype))
        if width is None:
            return jax.random.key(0), RunValues(*map(jnp.asarray, example))
        return (jax.vmap(jax.random.key)(jnp.zeros(width, jnp.int32)),
                RunValues(*(jnp.zeros(width, np.asarray(v).dtype) for v in example)))

    @precision.float64
    def _program(self, width, part):
        """The compiled ``start`` (``part == "start"``) or a stage's ``advance`` for runs of ``width``."""
        with self._lock:
            return self._compile(width, part)

    def _compile(self, width, part):
        if (width, part) not in self._compiled:
            begin = time.perf_counter()
            key, values = self._examples(width)
            with jax.default_matmul_precision("highest"), _xla_cpu.serial_lapack():  # as the ask/tell step
                if part == "start":
                    fn = self.parts.start if width is None else jax.vmap(self.parts.start)
                    lowered = jax.jit(fn).lower(key, values)
                    self._carry_shapes[width] = lowered.out_info
                else:
                    def advance(carry, key, values, begin, end, tag):
                        return self.parts.advance(carry, key, values, begin, end, part, tag)

                    fn = advance if width is None else jax.vmap(advance, in_axes=(0, 0, 0, None, None, None))
                    carry = self._carry_shapes[width]
                    lowered = jax.jit(fn).lower(carry, key, values, np.int32(0), np.int32(0), np.int32(0))
                self.trace_seconds += time.perf_counter() - begin
                self._compiled[(width, part)] = lowered.compile(
                    compiler_options=_xla_cpu.compiler_options(jax.default_backend()))
            self.compile_seconds += time.perf_counter() - begin
        return self._compiled[(width, part)]

    def _carry(self, width, leaves):
        """The :class:`Carry` of ``leaves`` (:func:`carry_leaves`) for runs of ``width``, or ``None`` when they do not
        fit this program's carry (stored by another version of the program: the run starts afresh)."""
        self._program(width, "start")
        shapes = self._carry_shapes[width]
        expected, treedef = jax.tree_util.tree_flatten(shapes)
        if len(leaves) != len(expected):
            return None
        out = []
        for leaf, shape in zip(leaves, expected):
            if jnp.issubdtype(shape.dtype, jax.dtypes.prng_key):
                leaf = jax.random.wrap_key_data(jnp.asarray(leaf))
                if leaf.shape != shape.shape:
                    return None
            elif leaf.shape != shape.shape or leaf.dtype != shape.dtype:
                return None
            out.append(leaf)
        return jax.tree_util.tree_unflatten(treedef, out)

    def release(self) -> None:
        """Drop the compiled programs (they compile again when needed)."""
        self._compiled.clear()

    def _segments(self, position: int, segments: Segments, per_evaluation: float | None):
        """The next segment ``(stage, a, b)`` from ``position``."""
        stage, a, b = self.parts.pieces(position, self.budget)[0]
        count = b - a
        if segments.evaluations:
            count = min(count, segments.evaluations)
        if segments.seconds and per_evaluation:
            count = min(count, max(1, int(segments.seconds / per_evaluation)))
        return stage, a, a + count

    @precision.float64
    def run(self, seeds, values: list, workers: int | None = None, segments: Segments | None = None):
        """Runs ``i`` with seed ``seeds[i]`` and ``values[i]`` (:class:`RunValues`).

        Args:
          seeds, values: the runs.
          workers: host threads making ``"map"`` runs at once (default :func:`default_workers`).
          segments: how runs are cut and saved (:class:`Segments`; default: a stage at a time, nothing saved).
        Returns:
          ``(trace, info, seconds)``: NumPy arrays with a leading run axis; ``seconds`` ``(runs, budget)``
          the time of each evaluation (model step and objective) where the batch is ``"map"``, else the
          batch's time spread evenly.
        """
        segments = segments or Segments()
        width = None if self.batch == "map" else runs_bucket(len(seeds))
        for part in ("start", *self.parts.stages):  # compiled before the clock starts (step_seconds); start first
            self._program(width, part)
        dtype = self.settings.float_dtype
        stacked = RunValues(*(np.stack(column) for column in zip(*values)))
        stacked = stacked._replace(ucb_beta=stacked.ucb_beta.astype(dtype))
        seconds = np.zeros((len(seeds), self.budget))
        if self.batch == "map":
            @precision.float64  # in each worker thread: the scope is thread-local
            def one(r):
                key, run_values = jax.random.key(int(seeds[r])), RunValues(*(v[r] for v in stacked))
                seconds[r] = self._run(width, key, run_values, r, r, segments)
                return self._finish(self._last.pop(r), None)

            workers = min(len(seeds), workers or default_workers())
            self._last: dict = {}
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
        self._last = {}
        seconds[:] = self._run(width, keys, padded, list(range(len(seeds))), 0, segments)[:len(seeds)]
        return self._finish(self._last.pop(0), len(seeds)) + (seconds,)

    def _finish(self, carry, count):
        cut = (lambda a: np.asarray(a)) if count is None else (lambda a: np.asarray(a)[:count])
        return jax.tree_util.tree_map(cut, self.parts.finish(carry))

    def _run(self, width, key, values, runs, tag, segments: Segments) -> np.ndarray:
        """Make run(s) ``runs`` (an index, or the list of a batch) in segments; their carry is left in
        ``self._last[tag]``. Returns the seconds of each evaluation (``(budget,)``, or ``(width, budget)``)."""
        count = None if width is None else len(runs)
        seconds = np.zeros(self.budget if width is None else (width, self.budget))
        resumed = segments.resume(runs) if segments.resume else None
        carry = None
        if resumed is not None:
            position, leaves, done = resumed
            if width is not None:
                leaves = [np.concatenate([a, np.repeat(a[-1:], width - count, axis=0)]) for a in leaves]
            carry = self._carry(width, leaves)
            if carry is not None:
                seconds[..., :position] = np.asarray(done)[..., :position] if width is None else np.concatenate(
                    [done, np.repeat(done[-1:], width - count, axis=0)])[:, :position]
        if carry is None:
            begin = time.perf_counter()
            position, carry = self.parts.first, jax.block_until_ready(self._program(width, "start")(key, values))
            if position:
                seconds[..., :position] = (time.perf_counter() - begin) / position
        per_evaluation = None
        while position < self.budget:
            stage, a, b = self._segments(position, segments, per_evaluation)
            self._ticks.pop(tag, None)
            started = time.perf_counter()
            carry = jax.block_until_ready(self._program(width, stage)(carry, key, values, np.int32(a), np.int32(b),
                                                                      np.int32(tag)))
            ended = time.perf_counter()
            per_evaluation = (ended - started) / (b - a)
            ticks = np.asarray(self._ticks.pop(tag, []))
            if width is None and len(ticks) == b - a:
                seconds[a:b] = np.diff(np.concatenate([[started], ticks]))
                seconds[b - 1] += ended - ticks[-1]
            else:
                seconds[..., a:b] = per_evaluation
            position = b
            if segments.saved and position < self.budget:
                leaves = carry_leaves(carry)
                if width is not None:
                    leaves = [leaf[:count] for leaf in leaves]
                segments.saved(runs, position, leaves, seconds if width is None else seconds[:count])
        self._last[tag] = carry
        if segments.finished:
            trace, info = self._finish(carry, count)
            segments.finished(runs, trace, info, seconds if width is None else seconds[:count])
        return seconds


def default_workers() -> int:
    """Runs made at once by a ``"map"`` program: one per core on a CPU (a run of the compiled program keeps
    one core busy), one on an accelerator (where ``"vmap"`` is the way to run several)."""
    if jax.default_backend() != "cpu":
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


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


@precision.float64
def minimize_many(fn: Callable, space: Space, budget: int, seeds, model: str | ModelConfig = "gp",
                  ucb_beta=None, batch: str | None = None, workers: int | None = None, **options) -> ManyResult:
    """Minimise a JAX objective with one run per seed, all runs by one compiled program.

    This is :func:`jbo.study` with one arm.

    Args:
      fn: the objective (see :func:`run_function`); the benchmarks of :mod:`jbo.benchmarks` are such
        functions (``problem.evaluate``). It is traced inside jbo's program with JAX's x64 on, its inputs in
        the run's dtype (``dtype="float64"`` by default, or ``"float32"``).
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
