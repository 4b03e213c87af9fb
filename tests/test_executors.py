"""Parallel and asynchronous evaluations: ``jbo.minimize(..., n_workers=K, executor=...)``.

Local thread and process pools, the simulated cluster (virtual clock, finishing order), Dask, Ray
and submitit's local executors, pending points in the journal (SIGKILL and resume), bad input.
Random search (``model="random"``) keeps them cheap: what is tested is the loop around the model
(the model's use of pending points is tests/test_core_loop.py's and the models' own tests').
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import json
import math
import os
import signal
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import jbo
from jbo import executors
from jbo import journal as journal_io
from jbo.executors import ExecutorError, SimulatedExecutor

TESTS = os.path.dirname(os.path.abspath(__file__))
RANDOM = dict(model="random")


def branin(config):
    x1, x2 = config["x1"], config["x2"]
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


def branin_elsewhere(parent_pid, config):
    """Branin, or a failure if it runs in the process ``parent_pid`` (it must run in a worker)."""
    if os.getpid() == parent_pid:
        raise RuntimeError("evaluated in the parent process")
    return branin(config)


def die_once(marker, parent_pid, config):
    """Kills its worker process the first time it runs (``marker`` remembers), then
    :func:`branin_elsewhere`."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return branin_elsewhere(parent_pid, config)
    os.close(fd)
    os._exit(3)


@pytest.fixture(scope="module")
def space():
    return jbo.Space({"x1": jbo.Real(-5.0, 10.0), "x2": jbo.Real(0.0, 15.0)})


@pytest.fixture
def importable_tests(monkeypatch):
    """Worker processes started from scratch (submitit, Dask, Ray) import this module by name."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([TESTS, os.environ.get("PYTHONPATH", "")]))


def records(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f.read().split("\n")[:-1] if line.strip()]


def check_run(res, budget, statuses="ok"):
    """A parallel run's result: the budget reached, each evaluation once, values right."""
    assert len(res.history) == budget
    assert sorted(h["id"] for h in res.history) == list(range(budget))
    for h in res.history:
        if statuses == "ok":
            assert h["status"] == "ok", h
        if h["status"] == "ok":
            assert h["value"] == pytest.approx(branin(h["config"]), rel=1e-12)
    ok = [h["value"] for h in res.history if h["status"] == "ok"]
    assert res.best_value == min(ok)


# ============================================================================ local pools


def test_thread_pool_keeps_four_in_flight_to_the_budget(space):
    lock, running, peak = threading.Lock(), [0], [0]

    def slow(config):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.3)
        with lock:
            running[0] -= 1
        return branin(config)

    with cf.ThreadPoolExecutor(4) as pool:
        res = jbo.minimize(slow, space, budget=12, seed=1, executor=pool, **RANDOM)  # n_workers: the pool's 4
    check_run(res, 12)
    assert peak[0] == 4


def test_default_process_pool_runs_to_the_budget_with_4_workers_and_survives_a_dead_worker(space, tmp_path):
    """The first evaluation kills its worker process: that breaks the pool, so it and the others in
    flight then are failed evaluations (with the error's text); a new pool evaluates the rest, each
    in a worker process (in this one, ``branin_elsewhere`` fails)."""
    fn = functools.partial(die_once, str(tmp_path / "died"), os.getpid())
    res = jbo.minimize(fn, space, budget=12, seed=2, n_workers=4, journal=tmp_path / "run.jsonl", **RANDOM)
    check_run(res, 12, statuses="any")
    failed = [h for h in res.history if h["status"] == "failed"]
    assert 1 <= len(failed) <= 4
    for h in failed:
        assert h["value"] is None and h["error"].startswith("the worker failed: BrokenProcessPool")
    assert sum(h["status"] == "ok" for h in res.history) >= 8  # the new pool evaluated the rest
    observations = journal_io.read(tmp_path / "run.jsonl")[1]
    assert [r["error"] for r in observations] == [h["error"] for h in res.history]


def test_a_default_pool_that_keeps_breaking_stops_the_run(space, tmp_path, monkeypatch):
    """Pools whose workers die before any evaluation returns (a script without the __main__ guard):
    one replacement, then an ExecutorError that says why, not a budget of failed evaluations."""
    from concurrent.futures.process import BrokenProcessPool

    from jbo import executors

    class DyingPool(cf.ThreadPoolExecutor):
        broken = False

        def submit(self, fn, /, *args, **kwargs):
            if self.broken:
                raise BrokenProcessPool("A process in the process pool was terminated abruptly")
            self.broken = True
            future = cf.Future()
            future.set_exception(BrokenProcessPool("A child process terminated abruptly"))
            return future

    pools = []
    monkeypatch.setattr(executors, "_default_pool", lambda workers: pools.append(DyingPool(workers)) or pools[-1])
    path = tmp_path / "run.jsonl"
    with pytest.raises(ExecutorError, match=r"twice in a row.*__main__") as err:
        jbo.minimize(branin, space, budget=10, n_workers=2, journal=path, **RANDOM)
    assert len(pools) == 2
    assert len(err.value.result.history) == len(journal_io.read(path)[1]) == 2
    assert all(h["error"].startswith("the worker failed: BrokenProcessPool") for h in err.value.result.history)


def test_failures_inside_workers_are_recorded(space):
    def flaky(config):
        if config["x1"] < 0:
            raise RuntimeError("boom")
        if config["x2"] < 5:
            return float("nan")
        return branin(config)

    class LosesThirdJob(cf.ThreadPoolExecutor):
        """A pool whose third job is lost by the 'cluster': its future raises."""

        submitted = 0

        def submit(self, fn, /, *args, **kwargs):
            self.submitted += 1
            if self.submitted == 3:
                future = cf.Future()
                future.set_exception(ConnectionError("node lost"))
                return future
            return super().submit(fn, *args, **kwargs)

    with LosesThirdJob(4) as pool:
        res = jbo.minimize(flaky, space, budget=16, seed=4, executor=pool, **RANDOM)
    check_run(res, 16, statuses="any")
    by_id = {h["id"]: h for h in res.history}
    assert by_id[2]["status"] == "failed"
    assert by_id[2]["error"] == "the worker failed: ConnectionError: node lost"
    for h in res.history:
        if h["id"] == 2:
            continue
        if h["config"]["x1"] < 0:
            assert h["status"] == "failed" and "RuntimeError: boom" in h["error"]
        elif h["config"]["x2"] < 5:
            assert h["status"] == "failed" and "non-finite value nan" in h["error"]
        else:
            assert h["status"] == "ok"


# ============================================================================ the simulated cluster


def reference_schedule(durations, workers, budget):
    """Finishing order and times of the asynchronous loop, by a direct event simulation: keep
    ``workers`` jobs running, tell every job finishing at the earliest time (ties by submission),
    then refill."""
    now, running, submitted, told, durations = 0.0, [], 0, [], list(durations)
    while len(told) < budget:
        while len(running) < workers and submitted < budget:
            running.append((now + durations[submitted], submitted, now))
            submitted += 1
        now = min(r[0] for r in running)
        for job in sorted(r for r in running if r[0] == now):
            running.remove(job)
            told.append((job[1], job[2], job[0]))
    return told


def test_simulated_cluster_tells_in_finishing_order_and_keeps_k_in_flight(space, tmp_path):
    durations = [5, 1, 3, 2, 2, 7, 1, 1, 1, 1, 4, 0.5]
    workers, budget = 3, len(durations)
    sim = SimulatedExecutor(workers, duration=durations)
    seen = []
    res = jbo.minimize(branin, space, budget=budget, seed=5, executor=sim, journal=tmp_path / "sim.jsonl",
                       callback=lambda opt: seen.append((opt.history[-1]["id"], sim.now, len(opt.state.pending))),
                       **RANDOM)
    check_run(res, budget)
    expected = reference_schedule(durations, workers, budget)
    assert [(h["id"], h["submitted_at"], h["finished_at"]) for h in res.history] == expected
    assert [(i, t) for i, t, _ in seen] == [(h["id"], h["finished_at"]) for h in res.history]  # told on return
    assert sim.now == max(h["finished_at"] for h in res.history) == 11.0
    # right after every refill, K evaluations are in flight (fewer only once the budget is all sent)
    for t in sorted({h["submitted_at"] for h in res.history}):
        running = sum(h["submitted_at"] <= t < h["finished_at"] for h in res.history)
        finished = sum(h["finished_at"] <= t for h in res.history)
        assert running == min(workers, budget - finished), t
    # the journal: a pending record when sent, the observation (same id) when returned
    lines = records(tmp_path / "sim.jsonl")
    pending = [r for r in lines if r["type"] == "pending"]
    observations = [r for r in lines if r["type"] == "observation"]
    assert [r["id"] for r in pending] == list(range(budget))
    assert [r["id"] for r in observations] == [h["id"] for h in res.history]
    submitted = {i: t for i, t, _ in expected}
    for r in pending:
        assert r["status"] == "pending" and len(r["x"]) == 2 and r["submitted_at"] == submitted[r["id"]]
    for r in observations:
        assert r["config"] == pending[r["id"]]["config"] and r["x"] == pending[r["id"]]["x"]
        assert r["finished_at"] == res.history[[h["id"] for h in res.history].index(r["id"])]["finished_at"]


def test_simulated_executor_clock_queue_and_durations():
    sim = SimulatedExecutor(2, duration=[1.0, 2.0, 1.5])
    calls = []
    futures = [sim.submit(lambda i: calls.append(i) or i * 10, i) for i in range(3)]
    assert calls == [0, 1, 2]  # evaluated at once, in process
    assert not any(f.done() for f in futures) and sim.now == 0.0
    assert [f.finished_at for f in futures] == [1.0, 2.0, 2.5]  # the third waited for a free worker
    assert futures[2].started_at == 1.0
    assert sim.wait_first(futures) == {futures[0]} and sim.now == 1.0
    assert futures[2].result() == 20 and sim.now == 2.5 and futures[1].done()  # result() runs the clock
    failing = SimulatedExecutor(1, duration=0.5).submit(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.result()
    a = SimulatedExecutor(4, duration=2.0, sigma=0.5, seed=7)
    b = SimulatedExecutor(4, duration=2.0, sigma=0.5, seed=7)
    da = [a.submit(int).finished_at for _ in range(200)]
    db = [b.submit(int).finished_at for _ in range(200)]
    assert da == db and len(set(da)) > 150
    # log-normal: the median of the durations is the given one
    sim = SimulatedExecutor(100000, duration=2.0, sigma=0.5, seed=1)
    assert np.median([sim.submit(int).finished_at for _ in range(4000)]) == pytest.approx(2.0, rel=0.05)
    cost = SimulatedExecutor(1, duration=lambda rng, config: config["epochs"] / 10)
    assert cost.submit(lambda c: 0, {"epochs": 30}).finished_at == pytest.approx(3.0)
    for bad in (-1.0, float("nan"), [], "slow"):
        with pytest.raises(ValueError, match="duration"):
            SimulatedExecutor(2, duration=bad)


def test_many_simulated_workers(space):
    sim = SimulatedExecutor(16, duration=1.0)
    res = jbo.minimize(branin, space, budget=40, seed=6, executor=sim, **RANDOM)
    check_run(res, 40)
    finished = np.array([h["finished_at"] for h in res.history])
    assert np.all(np.diff(finished) >= 0)
    assert np.bincount(finished.astype(int)).tolist() == [0, 16, 16, 8]


# ============================================================================ real engines


def test_dask_local_cluster_runs_a_minimisation_with_4_workers(space, importable_tests):
    distributed = pytest.importorskip("distributed", reason='Dask is the "dask" extra: pip install -e ".[dask]"')
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        fn = functools.partial(branin_elsewhere, os.getpid())
        res = jbo.minimize(fn, space, budget=8, seed=7, n_workers=4, executor=client.get_executor(), **RANDOM)
        check_run(res, 8)
        res = jbo.minimize(fn, space, budget=8, seed=7, n_workers=4, executor=client, **RANDOM)  # the client itself
        check_run(res, 8)


def test_submitit_local_executor_runs_a_minimisation_with_4_workers(space, tmp_path, importable_tests):
    submitit = pytest.importorskip("submitit", reason='submitit is the "submitit" extra: pip install -e ".[submitit]"')
    executor = submitit.AutoExecutor(folder=tmp_path / "jobs", cluster="local")
    executor.update_parameters(timeout_min=5)
    fn = functools.partial(branin_elsewhere, os.getpid())
    res = jbo.minimize(fn, space, budget=5, seed=8, n_workers=4, executor=executor, **RANDOM)
    check_run(res, 5)
    debug = submitit.AutoExecutor(folder=tmp_path / "debug", cluster="debug")  # in-process, run when polled
    res = jbo.minimize(branin, space, budget=6, seed=8, n_workers=3, executor=debug, **RANDOM)
    check_run(res, 6)


def test_ray_runs_a_minimisation_with_4_workers(space, importable_tests):
    ray = pytest.importorskip("ray", reason='Ray is the "ray" extra (pip install -e ".[ray]"); not installed here')
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        fn = functools.partial(branin_elsewhere, os.getpid())
        res = jbo.minimize(fn, space, budget=6, seed=9, n_workers=4, executor=executors.RayExecutor(num_cpus=1),
                           **RANDOM)
        check_run(res, 6)
    finally:
        ray.shutdown()


# ============================================================================ pending points: journal and resume


def test_resume_resubmits_the_pending_points_first(space, tmp_path):
    path = tmp_path / "run.jsonl"

    def crash_after_5(opt):
        if opt.n_observed == 5:
            raise Crash

    with pytest.raises(Crash):
        sim = SimulatedExecutor(4, duration=[3, 1, 4, 1, 5, 9, 2, 6])
        jbo.minimize(branin, space, budget=12, seed=10, executor=sim, journal=path, callback=crash_after_5, **RANDOM)
    header, observations, pending = journal_io.read_run(path)
    assert len(observations) == 5 and [r["id"] for r in pending] == [4, 5, 7]  # sent, never returned
    opt = jbo.Optimizer.resume(path)
    assert opt.pending == [{"id": r["id"], "config": r["config"]} for r in pending]
    assert len(opt.state.pending) == 3  # the model treats them as running
    opt.close()
    calls = []

    def f(config):
        calls.append(config)
        return branin(config)

    res = jbo.minimize(f, space, budget=12, journal=path, resume=True, executor=SimulatedExecutor(2, duration=1.0))
    check_run(res, 12)
    assert calls[:3] == [r["config"] for r in pending] and len(calls) == 7
    lines = records(path)
    observed = [r["id"] for r in lines if r["type"] == "observation"]
    assert sorted(observed) == list(range(12))  # every id told once: nothing lost, nothing twice
    assert [r["id"] for r in lines if r["type"] == "pending"] == list(range(12))  # no new record for re-sent ones
    assert res.history[:5] == [{k: r[k] for k in ("config", "value", "status", "error", "seconds", "id",
                                                   "submitted_at", "finished_at")} for r in observations]


def test_sequential_resume_evaluates_the_pending_points_and_ask_tell_tells_them_by_config(space, tmp_path):
    path = tmp_path / "run.jsonl"
    with pytest.raises(Crash):
        jbo.minimize(branin, space, budget=9, seed=11, executor=SimulatedExecutor(4, duration=[1, 2, 3, 4, 5]),
                     journal=path, callback=lambda opt: opt.n_observed == 2 and _crash(), **RANDOM)
    _, observations, pending = journal_io.read_run(path)
    assert len(observations) == 2 and len(pending) == 3
    opt = jbo.Optimizer.resume(path)
    first = opt.pending[0]
    opt.tell(first["config"], 1.5)  # told by config: the observation carries the pending point's id
    opt.close()
    assert records(path)[-1]["id"] == first["id"] and records(path)[-1]["x"] == pending[0]["x"]
    calls = []

    def f(config):
        calls.append(config)
        return branin(config)

    res = jbo.minimize(f, space, budget=9, journal=path, resume=True)  # sequential: no executor
    assert len(res.history) == 9 and calls[:2] == [r["config"] for r in pending[1:]]
    ids = [h.get("id") for h in res.history]
    assert ids[:5] == [r["id"] for r in observations] + [first["id"]] + [r["id"] for r in pending[1:]]
    assert journal_io.read_run(path)[2] == []


class Crash(Exception):
    pass


def _crash():
    raise Crash


def test_old_journals_read_and_resume_in_parallel(space, tmp_path):
    header, observations, pending = journal_io.read_run(os.path.join(TESTS, "data", "journal-v0-gp.jsonl"))
    assert pending == [] and observations and all("id" not in r for r in observations)
    path = tmp_path / "seq.jsonl"
    first = jbo.minimize(branin, space, budget=4, seed=12, journal=path, **RANDOM)  # sequential: no ids
    assert [r["type"] for r in records(path)] == ["settings"] + ["observation"] * 4
    assert all("id" not in r for r in records(path))
    with cf.ThreadPoolExecutor(2) as pool:
        res = jbo.minimize(branin, space, budget=8, journal=path, resume=True, executor=pool)
    assert res.history[:4] == first.history and len(res.history) == 8
    assert sorted(h["id"] for h in res.history[4:]) == [0, 1, 2, 3]


SIGKILL_SCRIPT = textwrap.dedent(
    """
    import concurrent.futures as cf, math, sys, time
    import jbo

    def branin(config):
        x1, x2 = config["x1"], config["x2"]
        b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
        return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10

    def slow(config):  # durations differ with the point: results return out of order
        time.sleep(0.2 + 0.6 * (config["x1"] + 5) / 15)
        return branin(config)

    space = jbo.Space({"x1": jbo.Real(-5.0, 10.0), "x2": jbo.Real(0.0, 15.0)})
    with cf.ThreadPoolExecutor(4) as pool:
        jbo.minimize(slow, space, budget=16, seed=13, journal=sys.argv[1], executor=pool, model="random")
    """
)


def _complete_records(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f.read().split("\n")[:-1] if line.strip()]


def test_sigkill_with_pending_evaluations_then_resume_loses_nothing(space, tmp_path, sigkill_when):
    path = str(tmp_path / "killed.jsonl")
    status = sigkill_when(SIGKILL_SCRIPT, path, timeout=180,
                          ready=lambda: sum(r["type"] == "observation" for r in _complete_records(path)) >= 6)
    assert status == -signal.SIGKILL
    header, before, pending = journal_io.read_run(path)
    assert 6 <= len(before) < 16 and pending, "no evaluation was in flight when the run was killed"
    assert all(r["type"] == "pending" for r in pending) and len(pending) <= 4
    calls = []

    def f(config):
        calls.append(config)
        return branin(config)

    with cf.ThreadPoolExecutor(4) as pool:
        res = jbo.minimize(f, space, journal=path, resume=True, budget=16, executor=pool)
    assert len(res.history) == 16 and len(calls) == 16 - len(before)
    # every result returned before the kill is in the journal and the history, unchanged
    for record, h in zip(before, res.history):
        assert h["config"] == record["config"] and h["value"] == record["value"] and h["id"] == record["id"]
    # every point pending at the kill was re-submitted (first) and told, with its own id
    key = lambda c: (c["x1"], c["x2"])  # noqa: E731 - threads start them in any order
    assert sorted(calls[: len(pending)], key=key) == sorted([r["config"] for r in pending], key=key)
    lines = _complete_records(path)
    told = [r for r in lines if r["type"] == "observation"]
    assert sorted(r["id"] for r in told) == list(range(16))
    for r in pending:
        (answer,) = [t for t in told if t["id"] == r["id"]]
        assert answer["config"] == r["config"] and answer["x"] == r["x"]
    assert all(h["status"] == "ok" for h in res.history)


# ============================================================================ bad input


@pytest.mark.parametrize("bad", [0, -2, 1.5, 2.0, True, "4"])
def test_n_workers_must_be_a_positive_integer(space, tmp_path, bad):
    path = tmp_path / "run.jsonl"
    with pytest.raises(ValueError, match=r"n_workers must be a positive integer, got"):
        jbo.minimize(branin, space, budget=4, n_workers=bad, journal=path, **RANDOM)
    assert not path.exists()  # refused before anything started


def test_an_executor_without_submit_or_a_size_is_refused(space, tmp_path):
    path = tmp_path / "run.jsonl"
    with pytest.raises(TypeError, match=r"executor must have a submit\(fn, \*args\) method.*got object"):
        jbo.minimize(branin, space, budget=4, executor=object(), journal=path, **RANDOM)
    with pytest.raises(TypeError, match=r"not the class ThreadPoolExecutor"):
        jbo.minimize(branin, space, budget=4, executor=cf.ThreadPoolExecutor, journal=path, **RANDOM)

    class Engine:
        def submit(self, fn, *args):
            return cf.ThreadPoolExecutor(1).submit(fn, *args)

    with pytest.raises(ValueError, match="n_workers is required with an executor of type Engine"):
        jbo.minimize(branin, space, budget=4, executor=Engine(), journal=path, **RANDOM)
    assert not path.exists()
    res = jbo.minimize(branin, space, budget=4, executor=Engine(), n_workers=2, **RANDOM)
    check_run(res, 4)


def test_the_default_pool_needs_a_picklable_objective(space, tmp_path):
    path = tmp_path / "run.jsonl"
    with pytest.raises(TypeError, match=r"fn must be picklable: n_workers=2 without an executor .*ThreadPoolExecutor"):
        jbo.minimize(lambda c: 0.0, space, budget=4, n_workers=2, journal=path, **RANDOM)
    local = 1.0
    with pytest.raises(TypeError, match="fn must be picklable: a ProcessPoolExecutor"):
        with cf.ProcessPoolExecutor(2) as pool:
            jbo.minimize(lambda c: local, space, budget=4, executor=pool, journal=path, **RANDOM)
    assert not path.exists()


def test_an_executor_that_raises_on_submit_loses_nothing(space, tmp_path):
    path = tmp_path / "run.jsonl"

    class Breaks(SimulatedExecutor):
        """A cluster that goes away after 7 submissions."""

        count = 0

        def submit(self, fn, /, *args, **kwargs):
            self.count += 1
            if self.count > 7:
                raise OSError("scheduler unreachable")
            return super().submit(fn, *args, **kwargs)

    with pytest.raises(ExecutorError) as err:
        jbo.minimize(branin, space, budget=12, seed=14, executor=Breaks(3, duration=[1, 2, 3, 1, 2, 3, 1]),
                     journal=path, **RANDOM)
    message = str(err.value)
    assert "executor Breaks: submit raised OSError: scheduler unreachable" in message
    assert str(path) in message and "resume=True re-submits" in message
    _, observations, pending = journal_io.read_run(path)
    told = err.value.result.history
    assert len(told) == len(observations) == 6 and [r["id"] for r in pending] == [5, 7]  # in flight, refused
    assert [r["id"] for r in observations] == [h["id"] for h in told]
    assert [r["value"] for r in observations] == [h["value"] for h in told]
    res = jbo.minimize(branin, space, budget=12, journal=path, resume=True, executor=SimulatedExecutor(3))
    check_run(res, 12)
    assert res.history[:6] == told  # nothing told was lost
    assert {h["id"] for h in res.history[6:8]} == {5, 7}  # the lost ones first

    # without a journal, the error itself carries what was told
    with pytest.raises(ExecutorError, match="no journal was kept") as err:
        jbo.minimize(branin, space, budget=12, seed=14, executor=Breaks(3, duration=1.0), **RANDOM)
    assert len(err.value.result.history) == 6 and err.value.result.best_value < math.inf


# ============================================================================ README


def test_readme_parallel_example_runs(tmp_path, monkeypatch, capsys):
    sys.path.insert(0, TESTS)
    try:
        from test_readme import python_block
    finally:
        sys.path.remove(TESTS)
    monkeypatch.chdir(tmp_path)
    code = python_block("Parallel and asynchronous evaluations")
    assert 'model="dngo"' in code
    code = code.replace('model="dngo"', 'model="random"')  # the engine is the point here, not the model
    exec(compile(code, "README.md: Parallel and asynchronous evaluations", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip()
