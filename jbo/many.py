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

import time
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbo import checks, loop
from jbo.data import multiple_of_8
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
      run ``jbo.minimize(..., seed=seed)`` would make on the same data); ``ucb_beta`` overrides the
      setting and may be traced (``vmap`` over it).
    """
    if "seed" in options:
        raise ValueError("seed is not an option of run_function: pass the key (jax.random.key(seed)) to run")
    budget = checks.integer("budget", budget, 1, integral_floats=True)
    settings = loop.Settings.create(model, **options)
    _enable_dtype(settings.dtype)
    program, budget, dtype = settings.program(), int(budget), settings.float_dtype
    size = capacity(budget)
    n_init = min(settings.initial_size(space.dim), budget) if settings.model.uses_initial_design else 0
    objective = _objective(fn, space, dtype)
    design_table = loop.design_table(settings, space, np.float64)
    anchor_table = np.asarray(loop.anchor_table(settings, space))

    def run(key, ucb_beta=None):
        ucb_beta = jnp.asarray(settings.ucb_beta if ucb_beta is None else ucb_beta, dtype)
        x = jnp.full((size, space.dim), 0.5, dtype)
        y = jnp.full((size,), jnp.nan, dtype)
        if n_init:
            points = loop._design(jax.random.fold_in(key, loop.DESIGN_STREAM), space, n_init,
                                  jnp.asarray(design_table, dtype), settings.design == "centre").astype(dtype)
            x, y = x.at[:n_init].set(points), y.at[:n_init].set(jax.vmap(objective)(points))
        history = loop.History(x, y, jnp.arange(size) < n_init)
        state = settings.model.init(space, dtype, jax.random.fold_in(key, loop.INIT_STREAM))
        pending = Pending.empty(space.dim, dtype)
        table = jnp.asarray(anchor_table, dtype)

        def body(carry, i):
            history, state, fitted = carry
            x, state, fitted, _ = loop.suggestion(program, space, state, fitted, history, pending, table,
                                                  loop.suggestion_key(key, i), ucb_beta)
            x = x.astype(dtype)
            history = loop.History(history.x.at[i].set(x), history.y.at[i].set(objective(x)),
                                   history.mask.at[i].set(True))
            return (history, state, fitted), None

        carry = (history, state, jnp.asarray(False))
        (history, _, _), _ = jax.lax.scan(body, carry, jnp.arange(n_init, budget))
        return Trace(history.x[:budget], history.y[:budget])

    return run


BATCHING = ("vmap", "map")


def minimize_many(fn: Callable, space: Space, budget: int, seeds, model: str | ModelConfig = "gp",
                  ucb_beta=None, batch: str | None = None, **options) -> ManyResult:
    """Minimise a JAX objective with one run per seed, all runs in one compiled program.

    Args:
      fn: the objective (see :func:`run_function`); the benchmarks of :mod:`jbo.benchmarks` are such
        functions (``problem.evaluate``).
      space: the search space.
      budget: evaluations per run.
      seeds: the runs' seeds (each run is what ``jbo.minimize(..., seed=seed)`` computes).
      model, **options: as for :class:`jbo.Optimizer`.
      ucb_beta: one UCB weight per seed (``(S,)``), a scalar, or ``None`` (the setting's).
      batch: how the program runs the seeds: ``"vmap"`` (side by side: one batched run, what an
        accelerator is for) or ``"map"`` (one after the other inside the program, ``lax.map``).
        Default: ``"vmap"`` on a GPU/TPU, ``"map"`` on a CPU, where batched runs wait for each
        other's loops (a batched sampler or L-BFGS runs until its slowest seed is done) and gain
        no parallelism (BENCHMARKS.md, design choices).
    Returns:
      :class:`ManyResult`.
    """
    batch = batch or ("map" if jax.default_backend() == "cpu" else "vmap")
    if batch not in BATCHING:
        raise ValueError(f"unknown batch {batch!r}; valid choices: {list(BATCHING)}")
    seeds = np.asarray(list(seeds) if not isinstance(seeds, np.ndarray) else seeds)
    if seeds.ndim != 1 or len(seeds) == 0 or not np.issubdtype(seeds.dtype, np.integer):
        raise ValueError(f"seeds must be a non-empty sequence of integers, got {seeds!r}")
    start = time.perf_counter()
    run = run_function(fn, space, budget, model, **options)
    settings = loop.Settings.create(model, **options)
    beta = np.broadcast_to(np.asarray(settings.ucb_beta if ucb_beta is None else ucb_beta, np.float64), seeds.shape)
    keys = jax.vmap(jax.random.key)(jnp.asarray(seeds))
    program = jax.jit(jax.vmap(run) if batch == "vmap" else lambda k, b: jax.lax.map(lambda a: run(*a), (k, b)))
    with jax.default_matmul_precision("highest"):  # as the ask/tell step (loop.full_precision)
        compiled = program.lower(keys, jnp.asarray(beta, settings.float_dtype)).compile()
    compile_seconds = time.perf_counter() - start
    trace = jax.block_until_ready(compiled(keys, jnp.asarray(beta, settings.float_dtype)))
    x, values = np.asarray(trace.x, np.float64), np.asarray(trace.y, np.float64)
    best_so_far = np.minimum.accumulate(np.where(np.isnan(values), np.inf, values), axis=1)
    best_values = best_so_far[:, -1]
    best_configs = []
    for row, vals in zip(x, values):
        ok = np.flatnonzero(np.isfinite(vals))
        best_configs.append(space.decode(row[ok[np.argmin(vals[ok])]]) if len(ok) else None)
    return ManyResult(seeds, values, best_values, best_so_far, best_configs, x, time.perf_counter() - start,
                      compile_seconds)
