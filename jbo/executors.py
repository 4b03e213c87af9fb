"""Run objectives in parallel: one interface over local pools, Dask, Ray, submitit and a simulated cluster.

:func:`jbo.minimize` with ``n_workers=K`` keeps ``K`` evaluations in flight on an executor and,
as soon as one returns, tells its result and asks a new point with the others pending (they enter
the model as fantasies: Snoek et al. 2015, §3.3). All the loop needs from an executor is

- ``submit(fn, *args) -> future``, a future having ``done()`` and ``result()`` (``result`` raising
  when the worker died), and
- a way to wait for the first of several futures to finish: :func:`wait_first`. It uses the
  executor's own ``wait_first(futures)`` when it has one (:class:`SimulatedExecutor`: that is
  where its virtual clock advances), ``concurrent.futures.wait`` for ``concurrent.futures``
  futures, and polls ``done()`` otherwise (submitit's jobs).

An executor that has a ``now`` attribute has a clock: :func:`jbo.minimize` then records when each
evaluation was submitted and when it finished (``history[i]["submitted_at"]`` and
``["finished_at"]``).

What works as an executor (:func:`backend` adapts each):

- any ``concurrent.futures.Executor``: ``ThreadPoolExecutor``, ``ProcessPoolExecutor`` (the
  objective must then be picklable), Dask's ``client.get_executor()``;
- a Dask ``distributed.Client`` itself (its ``get_executor(pure=False)`` is used);
- :class:`RayExecutor`, a small ``concurrent.futures.Executor`` that submits Ray tasks (Ray has no
  executor of its own: ``ray.util`` 2.60 has a multiprocessing ``Pool`` and an ``ActorPool``, not a
  ``concurrent.futures.Executor``);
- a submitit executor (``submitit.AutoExecutor``, ``LocalExecutor``, ``DebugExecutor``, Slurm):
  its jobs have ``done()`` and ``result()``; :class:`SubmititExecutor` wraps them explicitly;
- :class:`SimulatedExecutor`, a cluster of ``n_workers`` with sampled evaluation durations and a
  virtual clock, so studies with hundreds of asynchronous workers run in minutes.

Dask, Ray and submitit are optional (``pip install -e ".[dask]"``, ``".[ray]"``,
``".[submitit]"``) and imported only when used.
"""

from __future__ import annotations

import concurrent.futures as cf
import heapq
import itertools
import math
import multiprocessing
import numbers
import pickle
import sys
import time
import traceback
import uuid
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from jbo import checks

__all__ = ["SimulatedExecutor", "SimulatedFuture", "RayExecutor", "SubmititExecutor", "ExecutorError",
           "Evaluation", "backend", "wait_first", "worker_count", "lognormal", "evaluate_safely", "plan",
           "run_parallel"]


class ExecutorError(RuntimeError):
    """The executor itself failed (its ``submit`` raised), not an evaluation.

    Attributes:
      result: the :class:`jbo.Result` of the evaluations told before the failure (they are also in
        the journal, if the run keeps one, with the points still in flight as pending records that
        ``resume=True`` re-submits).
    """

    def __init__(self, message: str, result=None):
        super().__init__(message)
        self.result = result


def evaluate_safely(fn: Callable, config: dict) -> tuple[Any, str | None, float]:
    """Call ``fn(config)``; an exception or a non-numeric/non-finite return is a failure, not a crash.

    ``fn`` returns the objective value, or ``(value, [c_1, ..., c_K])`` with constraint values known at
    evaluation (feasible when every ``c_k <= 0``); the result's value is then that pair.
    """
    start = time.perf_counter()
    try:
        result = fn(config)
        constraints = None
        if isinstance(result, (tuple, list)) and len(result) == 2 and np.ndim(result[1]) == 1:
            result, constraints = result
            constraints = [float(c) for c in constraints]
        value = float(np.asarray(result).reshape(()))
        error = None if math.isfinite(value) else f"non-finite value {value!r}"
        if constraints is not None:
            value = (value, constraints)
    except KeyboardInterrupt:
        raise
    except Exception as err:  # the objective is user code: record any failure and go on
        value, error = None, f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=3)}"
    return value, error, time.perf_counter() - start


class Evaluation:
    """The task sent to a worker: ``Evaluation(fn, token)(config) -> (value, error, seconds)``.

    It runs :func:`evaluate_safely` in the worker, so an exception or a non-finite
    value of ``fn`` comes back as a failed evaluation with its error text, not as a failed future.
    Each submission gets its own ``token``, which Dask uses as the task's key: two evaluations of
    the same configuration are two tasks, never one cached result.
    """

    def __init__(self, fn: Callable, token: str | None = None):
        self.fn = fn
        self.token = token if token is not None else uuid.uuid4().hex

    def __call__(self, config):
        return evaluate_safely(self.fn, config)

    def __dask_tokenize__(self):
        return ("jbo-evaluation", self.token)

    def __repr__(self):
        return f"Evaluation({getattr(self.fn, '__name__', type(self.fn).__name__)}, {self.token!r})"


# ----------------------------------------------------------------------------- the simulated cluster


def lognormal(median: float = 1.0, sigma: float = 0.5) -> Callable:
    """Durations drawn from a log-normal distribution: ``median * exp(sigma * N(0, 1))``."""
    _check_duration(median, "median")
    if not isinstance(sigma, numbers.Real) or not math.isfinite(sigma) or sigma < 0:
        raise ValueError(f"sigma must be a non-negative number, got {sigma!r}")
    return lambda rng, *args, **kwargs: float(median * math.exp(sigma * rng.standard_normal()))


def _check_duration(value, name="duration"):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


class SimulatedFuture(cf.Future):
    """A future of :class:`SimulatedExecutor`: done once the virtual clock reaches ``finished_at``.

    Attributes:
      submitted_at, started_at, finished_at: virtual times (a job waits for a free worker between
        the first two).
    """

    def __init__(self, executor: "SimulatedExecutor", submitted_at: float, started_at: float, finished_at: float):
        super().__init__()
        self._executor = executor
        self.submitted_at, self.started_at, self.finished_at = submitted_at, started_at, finished_at

    def result(self, timeout=None):
        """The result; if not finished yet, the virtual clock runs until it is (``timeout`` is ignored)."""
        self._executor._run_until_done(self)
        return super().result(0)

    def exception(self, timeout=None):
        self._executor._run_until_done(self)
        return super().exception(0)


class SimulatedExecutor(cf.Executor):
    """A simulated cluster of ``n_workers`` with a virtual clock.

    ``submit(fn, *args)`` calls ``fn(*args)`` at once, in this process, but its future completes
    only when the virtual clock reaches the job's finishing time: the time it got a free worker
    (jobs queue first-in first-out when all ``n_workers`` are busy) plus a sampled duration. Waiting
    (:meth:`wait_first`, or a future's ``result()``) advances the clock to the earliest completion.
    The loop sees an ordinary executor and cannot tell the difference, so studies of hundreds of
    asynchronous workers take the time of the model's suggestions only.

    Args:
      n_workers: number of simulated workers.
      duration: the evaluation time: a number (the median of a log-normal with log-scale spread
        ``sigma``; exactly that number when ``sigma == 0``), a sequence of numbers (used in turn,
        one per submission: handy for tests), or a callable ``duration(rng, *args, **kwargs)``
        receiving a ``numpy.random.Generator`` and the submitted arguments (for :func:`jbo.minimize`:
        the configuration), so that the cost may depend on the configuration.
      sigma: log-normal spread of the duration when ``duration`` is a number.
      seed: seed of the durations' generator.

    Attributes:
      now: the virtual clock (starts at 0).
    """

    def __init__(self, n_workers: int, duration: float | Sequence[float] | Callable = 1.0, sigma: float = 0.0,
                 seed: int = 0):
        self.n_workers = check_workers(n_workers)
        if callable(duration):
            self._duration = duration
        elif isinstance(duration, numbers.Real) and not isinstance(duration, bool):
            median = _check_duration(duration)
            self._duration = lognormal(median, sigma) if sigma else (lambda rng, *a, **k: median)
        elif isinstance(duration, Iterable) and not isinstance(duration, (str, bytes)):
            values = [_check_duration(d) for d in duration]
            if not values:
                raise ValueError("duration must not be an empty sequence")
            it = iter(values)

            def take(rng, *args, **kwargs):
                try:
                    return next(it)
                except StopIteration:
                    raise ValueError(f"SimulatedExecutor: the {len(values)} durations given are used up") from None

            self._duration = take
        else:
            raise ValueError(f"duration must be a number, a sequence of numbers or a callable, got {duration!r}")
        self._rng = np.random.default_rng(seed)
        self._now = 0.0
        self._free = [0.0] * self.n_workers  # heap of the times at which each worker becomes free
        self._queue: list = []  # heap of (finished_at, sequence, future, outcome)
        self._sequence = itertools.count()
        self._shutdown = False

    @property
    def now(self) -> float:
        return self._now

    def submit(self, fn, /, *args, **kwargs) -> SimulatedFuture:
        if self._shutdown:
            raise RuntimeError("cannot schedule new futures after shutdown")
        duration = _check_duration(self._duration(self._rng, *args, **kwargs))
        try:
            outcome = (True, fn(*args, **kwargs))
        except Exception as err:  # delivered by the future, as a real worker would
            outcome = (False, err)
        start = max(self._now, heapq.heappop(self._free))
        future = SimulatedFuture(self, self._now, start, start + duration)
        heapq.heappush(self._free, future.finished_at)
        heapq.heappush(self._queue, (future.finished_at, next(self._sequence), future, outcome))
        return future

    def _advance(self) -> bool:
        """Move the clock to the next completion and complete every job finishing then."""
        if not self._queue:
            return False
        self._now = max(self._now, self._queue[0][0])
        while self._queue and self._queue[0][0] <= self._now:
            _, _, future, (ok, value) = heapq.heappop(self._queue)
            if future.set_running_or_notify_cancel():
                future.set_result(value) if ok else future.set_exception(value)
        return True

    def _run_until_done(self, future: cf.Future) -> None:
        while not future.done():
            if not self._advance():
                raise RuntimeError("the simulated future can never finish: it is not queued on this executor")

    def wait_first(self, futures: Iterable[cf.Future]) -> set:
        """The futures of ``futures`` that are done, advancing the clock to the first completion if none is."""
        futures = list(futures)
        while True:
            done = {f for f in futures if f.done()}
            if done or not futures:
                return done
            if not self._advance():
                raise RuntimeError("waiting on simulated futures that are not queued on this executor")

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop accepting jobs; ``wait=True`` runs the clock until every queued job has finished."""
        self._shutdown = True
        if cancel_futures:
            for _, _, future, _ in self._queue:
                future.cancel()
        if wait:
            while self._advance():
                pass

    def __repr__(self):
        return f"SimulatedExecutor(n_workers={self.n_workers}, now={self._now:g}, queued={len(self._queue)})"


# ----------------------------------------------------------------------------- adapters


def _remote_call(fn, *args, **kwargs):
    return fn(*args, **kwargs)


class RayExecutor(cf.Executor):
    """A ``concurrent.futures.Executor`` that runs each call as a Ray task.

    ``submit(fn, *args)`` is ``ray.remote(call).options(**options).remote(fn, *args).future()``:
    Ray pickles ``fn`` with cloudpickle (closures work) and the returned future is a
    ``concurrent.futures.Future``. A task whose worker died raises from ``result()`` (recorded as a
    failed evaluation by :func:`jbo.minimize`).

    Args:
      **options: Ray task options (``num_cpus=1``, ``num_gpus``, ``resources``, ``max_retries``, ...).
    Ray must be started (``ray.init(...)``) before the first submission, or Ray starts a local
    instance with its defaults. :meth:`shutdown` does not stop Ray (the caller owns it).
    """

    def __init__(self, **options):
        try:
            import ray
        except ImportError as err:
            raise ImportError('RayExecutor needs Ray: pip install "jbo[ray]" (or pip install ray)') from err
        self._ray = ray
        self._options = options
        self._call = ray.remote(_remote_call)
        if options:
            self._call = self._call.options(**options)
        self._shutdown = False

    def submit(self, fn, /, *args, **kwargs) -> cf.Future:
        if self._shutdown:
            raise RuntimeError("cannot schedule new futures after shutdown")
        return self._call.remote(fn, *args, **kwargs).future()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._shutdown = True


class JobFuture:
    """A submitit job seen as a future: ``done()``, ``result()``, ``cancel()``, ``exception()``."""

    def __init__(self, job):
        self.job = job

    def done(self) -> bool:
        return bool(self.job.done())

    def result(self, timeout=None):
        return self.job.result()

    def exception(self, timeout=None):
        return self.job.exception()

    def cancel(self) -> bool:
        try:
            self.job.cancel(check=False)
        except Exception:  # best effort: the job may be finished or gone
            return False
        return True

    def __repr__(self):
        return f"JobFuture({self.job!r})"


class SubmititExecutor:
    """Adapter of a submitit executor (``AutoExecutor``, ``SlurmExecutor``, ``LocalExecutor``,
    ``DebugExecutor``): ``submit`` returns a :class:`JobFuture`; :func:`wait_first` polls the jobs'
    ``done()`` (submitit itself polls Slurm; its local executor checks the job's process).

    Args:
      executor: the submitit executor, its parameters set (``update_parameters(timeout_min=...)``).
      poll: longest pause between two polls, in seconds (the pause grows from 0.05 s to it).
    """

    def __init__(self, executor, poll: float = 1.0):
        if not callable(getattr(executor, "submit", None)):
            raise TypeError(f"SubmititExecutor needs a submitit executor, got {type(executor).__name__}")
        self.executor = executor
        self.poll = float(poll)

    def submit(self, fn, /, *args, **kwargs) -> JobFuture:
        return JobFuture(self.executor.submit(fn, *args, **kwargs))

    def wait_first(self, futures) -> set:
        return _poll_first(futures, self.poll)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to release: submitit executors hold no pool, and each job is cancelled through its
        :class:`JobFuture` (the loop cancels the futures it still holds when it stops)."""

    def __repr__(self):
        return f"SubmititExecutor({self.executor!r})"


def _module(obj) -> str:
    return type(obj).__module__ or ""


def backend(executor):
    """``executor`` as the loop sees it (``submit`` + futures with ``done``/``result``).

    A Dask ``distributed.Client`` becomes ``client.get_executor(pure=False)``, a submitit executor a
    :class:`SubmititExecutor`; any other object with a ``submit`` method is used as it is.

    Raises:
      TypeError: ``executor`` has no callable ``submit``, or is a class rather than an executor.
    """
    if isinstance(executor, type):
        raise TypeError(f"executor must be an executor object, not the class {executor.__name__} "
                        f"(e.g. {executor.__name__}(4), not {executor.__name__})")
    if isinstance(executor, (SimulatedExecutor, SubmititExecutor, cf.Executor)):
        return executor
    module = _module(executor)
    if module.startswith("distributed") and callable(getattr(executor, "get_executor", None)):
        return executor.get_executor(pure=False)
    if module.startswith("submitit"):
        return SubmititExecutor(executor)
    if not callable(getattr(executor, "submit", None)):
        raise TypeError(
            f"executor must have a submit(fn, *args) method returning a future with done() and result() "
            f"(a concurrent.futures.Executor, a Dask Client or its get_executor(), jbo.executors.RayExecutor, "
            f"a submitit executor, jbo.executors.SimulatedExecutor); got {type(executor).__name__}")
    return executor


def worker_count(executor) -> int | None:
    """The number of workers an executor states (``n_workers``, or a stdlib pool's ``_max_workers``)."""
    for name in ("n_workers", "_max_workers"):
        value = getattr(executor, name, None)
        if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1:
            return int(value)
    return None


def check_workers(n_workers) -> int:
    """``n_workers`` as an int, or a ``ValueError`` naming it."""
    return checks.integer("n_workers", n_workers, 1)


def _poll_first(futures, longest: float = 1.0) -> set:
    futures = list(futures)
    pause = 0.05
    while futures:
        done = {f for f in futures if f.done()}
        if done:
            return done
        time.sleep(pause)
        pause = min(longest, pause * 1.5)
    return set()


def wait_first(executor, futures) -> set:
    """Block until at least one of ``futures`` is done; return those that are.

    Uses ``executor.wait_first`` when the executor has one (a virtual clock advances there),
    ``concurrent.futures.wait`` when every future is a ``concurrent.futures.Future``, and polls
    ``done()`` otherwise.
    """
    futures = list(futures)
    if not futures:
        return set()
    own = getattr(executor, "wait_first", None)
    if callable(own):
        return set(own(futures))
    if all(isinstance(f, cf.Future) for f in futures):
        return set(cf.wait(futures, return_when=cf.FIRST_COMPLETED).done)
    return _poll_first(futures)


def clock(executor) -> Callable[[], float] | None:
    """A function reading the executor's clock (its ``now``), or ``None`` when it has none."""
    if not hasattr(executor, "now"):
        return None
    return lambda: float(executor.now)


def outcome(future) -> tuple[Any, str | None, float | None]:
    """``(value, error, seconds)`` of a finished evaluation future; a future that raises (its
    worker died, the engine lost it) is a failed evaluation whose error is the exception's text."""
    try:
        result = future.result()
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # noqa: BLE001 - the engine's own errors (KilledWorker, RayTaskError, ...)
        return None, f"the worker failed: {type(err).__name__}: {err}", None
    if not (isinstance(result, tuple) and len(result) == 3):
        return None, f"the executor returned {type(result).__name__}, not the evaluation's result", None
    return result


# ----------------------------------------------------------------------------- the parallel loop


def plan(fn, n_workers, executor):
    """``(workers, engine)`` of a run: ``(None, None)`` for the sequential loop; ``engine`` is
    ``None`` for the default process pool. Raises on bad input, before anything runs."""
    workers = None if n_workers is None else check_workers(n_workers)
    if executor is None:
        if workers is None or workers == 1:
            return None, None
        _check_picklable(fn, workers)
        return workers, None
    engine = backend(executor)
    if workers is None:
        workers = worker_count(executor)
        if workers is None:
            raise ValueError(f"n_workers is required with an executor of type {type(executor).__name__} "
                             "(it does not say how many workers it has): the number of evaluations to keep in flight")
    if isinstance(executor, cf.ProcessPoolExecutor):
        context = getattr(executor, "_mp_context", None)
        spawned = context is not None and context.get_start_method() != "fork"
        _check_picklable(fn, workers, default=False, spawned=spawned)
    return workers, engine


def _check_picklable(fn, workers: int, default: bool = True, spawned: bool = True) -> None:
    where = (f"n_workers={workers} without an executor evaluates it in a local ProcessPoolExecutor" if default
             else "a ProcessPoolExecutor evaluates it in other processes")
    advice = ("define it at module level (a functools.partial of a module-level function works too), or pass "
              f"executor=concurrent.futures.ThreadPoolExecutor({workers}), a Dask, Ray or submitit executor "
              "(these pickle with cloudpickle)")
    try:
        pickle.dumps(fn)
    except Exception as err:
        raise TypeError(f"fn must be picklable: {where} ({type(err).__name__}: {err}); {advice}") from None
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    if spawned and getattr(fn, "__module__", None) == "__main__" and not getattr(module, "__file__", None):
        raise TypeError(f"fn is defined in an interactive session, which worker processes cannot import: {where}; "
                        f"{advice}")


def _default_pool(workers: int) -> cf.ProcessPoolExecutor:
    # spawn, not fork: this process runs JAX's threads, and a forked child may deadlock on their locks.
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))


def run_parallel(opt, fn, budget: int, workers: int, engine, executor, size, told, result) -> None:
    """The asynchronous loop: keep ``workers`` evaluations in flight, tell each as it returns.

    Args:
      opt: the ask/tell side (a :class:`jbo.Optimizer`): ``pending`` (points sent to workers and not told,
        re-submitted first), ``ask_pending(size, submitted_at) -> (id, config)`` (a point journaled as
        pending before it leaves), ``record(config, value, error, seconds, ident=, times=)`` and
        ``n_observed``.
      fn: the objective; budget: evaluations in total; workers: evaluations in flight.
      engine: the executor as :func:`backend` adapts it, or ``None`` for a default process pool owned here.
      executor: the user's executor (for messages).
      size: ``n -> padded size`` of the model's buffers; told: called after every evaluation told.
      result: ``() -> Result`` of the evaluations told so far (carried by an :class:`ExecutorError`).
    """
    owned = engine is None
    if owned:
        engine = _default_pool(workers)
    now = clock(engine)
    token = uuid.uuid4().hex
    resubmit = [(entry["id"], entry["config"]) for entry in opt.pending]  # a resumed run's
    in_flight: dict = {}  # future -> (id, config, submitted_at)

    replaced = False  # the default pool was replaced and no evaluation has returned since

    def submit(ident, config):
        nonlocal engine, replaced
        task = Evaluation(fn, f"{token}-{ident}")
        try:
            return engine.submit(task, config)
        except BrokenProcessPool as err:
            if not owned:
                raise
            if replaced:  # broken again before any evaluation came back: replacing it again would not help
                raise BrokenProcessPool(f"{err} (twice in a row, before any evaluation returned: a script that runs "
                                        "jbo.minimize with worker processes needs the `if __name__ == "
                                        "\"__main__\":` guard, since spawned workers import it)") from err
            engine.shutdown(wait=False, cancel_futures=True)  # a worker died and broke the pool: a new one
            engine, replaced = _default_pool(workers), True
            return engine.submit(task, config)

    try:
        while True:
            while len(in_flight) < workers and opt.n_observed + len(in_flight) < budget:
                submitted = None if now is None else now()
                if resubmit:
                    ident, config = resubmit.pop(0)
                else:
                    ident, config = opt.ask_pending(size(opt.n_observed), submitted_at=submitted)
                try:
                    future = submit(ident, config)
                except Exception as err:
                    raise _submit_error(opt, executor if executor is not None else engine, err, result) from err
                in_flight[future] = (ident, config, submitted)
            if not in_flight:
                break
            done = wait_first(engine, in_flight)
            order = sorted(done, key=lambda f: (getattr(f, "finished_at", 0.0), in_flight[f][0]))
            for future in order:
                ident, config, submitted = in_flight.pop(future)
                value, error, seconds = outcome(future)
                replaced = replaced and seconds is None  # seconds: the evaluation ran (and returned)
                times = None
                if now is not None:
                    times = {"submitted_at": submitted, "finished_at": getattr(future, "finished_at", None) or now()}
                opt.record(config, value, error, seconds, ident=ident, times=times)
                told()
    finally:
        for future in in_flight:
            try:
                future.cancel()
            except Exception:  # best effort: the run is stopping anyway
                pass
        if owned:
            engine.shutdown(wait=not in_flight, cancel_futures=True)


def _submit_error(opt, executor, err: Exception, result) -> ExecutorError:
    pending = len(opt.pending)
    if opt.journal_path is not None:
        kept = (f"they are in the journal {opt.journal_path!r}, with the {pending} point(s) sent or being sent to "
                "workers as pending records that resume=True re-submits")
    else:
        kept = "no journal was kept: they are in this error's .result"
    return ExecutorError(
        f"executor {type(executor).__name__}: submit raised {type(err).__name__}: {err}. "
        f"{opt.n_observed} evaluation(s) were told before; {kept}", result=result())
