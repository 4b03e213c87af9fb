"""Studies that survive (``jbo.study(..., store=PATH)``): killed and continued, they give the values of an
uninterrupted study; a finished store runs nothing; a store of another study is refused; a store reads while it
grows; runs made on an executor meet in the store."""

import concurrent.futures
import json
import multiprocessing
import os

import numpy as np
import pytest

import jbo
from jbo import store as store_lib
from jbo.benchmarks import get_problem
from jbo.studies import Segmenting

BRANIN = get_problem("branin")
SMALL = dict(inference="map", maximize=dict(num_anchors=128, num_local=8, top_k=2, num_steps=10))
ARMS = {"ei": dict(SMALL, acquisition="ei"), "ucb": dict(SMALL, acquisition="ucb", ucb_beta=3.0),
        "random": dict(model="random")}
BUDGET, SEEDS = 12, range(6)
SEGMENTS = Segmenting(evaluations=2, seconds=60.0)

CHILD = r"""
import sys
import jbo
from jbo.benchmarks import get_problem
from jbo.studies import Segmenting
jbo.cache.enable_jax_cache(sys.argv[1] + "-jax")  # the whole-run programs compile once for the four processes
SMALL = dict(inference="map", maximize=dict(num_anchors=128, num_local=8, top_k=2, num_steps=10))
ARMS = {"ei": dict(SMALL, acquisition="ei"), "ucb": dict(SMALL, acquisition="ucb", ucb_beta=3.0),
        "random": dict(model="random")}
problem = get_problem("branin")
jbo.study(problem.evaluate, problem.space(), budget=12, seeds=range(6), arms=ARMS, store=sys.argv[1], workers=1,
          segments=Segmenting(evaluations=2, seconds=60.0))
"""


def _count(path, kind):
    return sum(len(seeds) for seeds in store_lib.Store(path).runs(kind).values())


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    path = tmp_path_factory.mktemp("uninterrupted") / "store"
    return jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=SEEDS, arms=ARMS, store=str(path),
                     segments=SEGMENTS), str(path)


def test_a_study_killed_three_times_continues_to_the_uninterrupted_values(uninterrupted, tmp_path, sigkill_when):
    reference, _ = uninterrupted
    path = str(tmp_path / "store")
    seen = []
    # Killed with a run in progress, after some runs, after most: the store loads every time, and keeps the work.
    for ready in (lambda: _count(path, "partial") >= 1, lambda: _count(path, "runs") >= 4,
                  lambda: _count(path, "runs") >= 10):
        assert sigkill_when(CHILD, path, ready, timeout=400) == -9
        partial = jbo.StudyResult.load(path)
        seen.append(int(partial.finished.sum()))
        assert partial.values.shape[-1] == BUDGET and partial.finished.sum() < 3 * 6
        unfinished = ~partial.finished
        assert np.all(np.isnan(partial.values[..., -1][unfinished]))  # masked where not made yet
    assert seen == sorted(seen) and seen[-1] >= 10  # nothing made before a kill is lost
    left = 3 * 6 - seen[-1]
    result = jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=SEEDS, arms=ARMS, store=path,
                       segments=SEGMENTS)
    assert left < 3 * 6 / 2  # the last call made fewer than half the runs
    np.testing.assert_array_equal(result.values, reference.values)
    np.testing.assert_array_equal(result.x, reference.x)
    np.testing.assert_array_equal(result.info["score"], reference.info["score"])
    assert jbo.StudyResult.load(path).finished.all()


def test_a_finished_store_runs_nothing_and_reads_back(uninterrupted):
    reference, path = uninterrupted
    again = jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=SEEDS, arms=ARMS, store=path)
    assert again.programs == () and again.compile_seconds == 0.0
    np.testing.assert_array_equal(again.values, reference.values)
    loaded = jbo.StudyResult.load(path)
    assert loaded.arms == tuple(ARMS) and loaded.finished.all()
    np.testing.assert_array_equal(loaded.best_so_far, reference.best_so_far)
    assert loaded.best_configs == reference.best_configs
    # Fewer seeds or arms: read from the store, nothing made
    some = jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=[4, 1], arms={"ucb": ARMS["ucb"]},
                     store=path)
    assert some.programs == ()
    np.testing.assert_array_equal(some.values[0], reference.values[1][[4, 1]])


def test_a_store_of_another_study_is_refused_and_new_arms_are_added(uninterrupted, tmp_path):
    _, path = uninterrupted
    changed = dict(ARMS, ucb=dict(ARMS["ucb"], ucb_beta=2.0))
    with pytest.raises(ValueError, match=r"arm 'ucb' ucb_beta: stored 3\.0, given 2\.0"):
        jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=SEEDS, arms=changed, store=path)
    with pytest.raises(ValueError, match="budget"):
        jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET + 1, seeds=SEEDS, arms=ARMS, store=path)
    with pytest.raises(ValueError, match="space"):
        jbo.study(BRANIN.evaluate, jbo.Space({"x1": jbo.Real(-5.0, 10.0), "x2": jbo.Real(0.0, 14.0)}),
                  budget=BUDGET, seeds=SEEDS, arms=ARMS, store=path)
    with pytest.raises(ValueError, match="objective"):
        jbo.study(get_problem("rosenbrock", dim=2).evaluate, BRANIN.space(), budget=BUDGET, seeds=SEEDS,
                  arms=ARMS, store=path)
    copy = tmp_path / "copy"
    os.makedirs(copy)
    with open(os.path.join(path, store_lib.HEADER)) as f:
        header = json.load(f)
    with open(copy / store_lib.HEADER, "w") as f:
        json.dump(header, f)
    grown = jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=[0],
                      arms={"pi": dict(SMALL, acquisition="pi")}, store=str(copy))
    assert set(json.load(open(copy / store_lib.HEADER))["arms"]) == set(ARMS) | {"pi"}
    assert grown.arms == ("pi",)


def test_a_store_reads_while_a_study_writes_it(tmp_path, sigkill_when):
    """Every read of a store a running study writes to succeeds, whatever moment it falls on."""
    path = str(tmp_path / "store")
    reads = []

    def read_and_wait():
        if os.path.exists(os.path.join(path, store_lib.HEADER)) and (_count(path, "runs") or _count(path, "partial")):
            loaded = jbo.StudyResult.load(path)
            reads.append(int(np.isfinite(loaded.values).sum()))
        return len(reads) >= 25 and reads[-1] > reads[0]

    assert sigkill_when(CHILD, path, read_and_wait, timeout=400) == -9
    assert reads == sorted(reads)  # values only accumulate


def test_runs_made_on_a_process_pool_meet_in_the_store(uninterrupted, tmp_path):
    reference, _ = uninterrupted
    path = str(tmp_path / "store")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        result = jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=[0, 5], arms=ARMS,
                           store=path, executor=pool, segments=SEGMENTS)
    np.testing.assert_array_equal(result.values, reference.values[:, [0, 5]])  # the same programs: the same values
    assert _count(path, "runs") == 6 and _count(path, "partial") == 0
    with pytest.raises(ValueError, match="needs a store"):
        jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=[0], arms=ARMS, executor=pool)


def test_points_can_be_left_out_of_a_store(uninterrupted, tmp_path):
    reference, _ = uninterrupted
    result = jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=[2], arms={"random": ARMS["random"]},
                       store=str(tmp_path / "store"), store_points=False)  # random search: a program of its own
    np.testing.assert_array_equal(result.values[0], reference.values[2][[2]])
    assert np.all(np.isnan(result.x)) and result.best_configs == [[None]]


@pytest.mark.slow
def test_a_study_on_a_dask_cluster_survives_a_killed_worker(uninterrupted, tmp_path):
    """Two worker processes; one is SIGKILLed once runs are in the store: Dask starts another and sends its tasks
    again, which continue from the store; the values are the in-process study's."""
    import signal
    import threading
    import time

    distributed = pytest.importorskip("distributed")
    reference, _ = uninterrupted
    path = str(tmp_path / "store")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        outcome = {}

        def run():
            outcome["result"] = jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=SEEDS, arms=ARMS,
                                          store=path, executor=client, segments=SEGMENTS)

        thread = threading.Thread(target=run)
        thread.start()
        deadline = time.monotonic() + 600
        while _count(path, "runs") < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        pids = client.run(os.getpid)
        os.kill(next(iter(pids.values())), signal.SIGKILL)
        thread.join(timeout=900)
    assert "result" in outcome
    np.testing.assert_array_equal(outcome["result"].values, reference.values)


def test_a_store_written_before_an_option_existed_continues(uninterrupted, tmp_path):
    """An arm stored without an option jbo has since added (at its default) is the same arm."""
    _, path = uninterrupted
    copy = tmp_path / "older"
    os.makedirs(copy)
    header = json.load(open(os.path.join(path, store_lib.HEADER)))
    for arm in header["arms"].values():
        arm["maximize"].pop("screen", None)
    json.dump(header, open(copy / store_lib.HEADER, "w"))
    jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=[0], arms={"random": ARMS["random"]},
              store=str(copy))


def test_runs_side_by_side_continue_from_their_segments(tmp_path, monkeypatch):
    """batch="vmap": a study interrupted after some segments continues the batch from the stored carries and
    gives the values of the uninterrupted study (same batched programs)."""
    from jbo import studies

    arms = {"ei": ARMS["ei"]}
    whole = jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=[0, 1, 2], arms=arms, batch="vmap",
                      store=str(tmp_path / "whole"), segments=SEGMENTS)
    calls = {"n": 0}
    original = studies._segments

    def interrupting(kept, runs, segmenting, budget):
        segments = original(kept, runs, segmenting, budget)

        def saved(r, position, leaves, seconds):
            segments.saved(r, position, leaves, seconds)
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt

        return segments._replace(saved=saved)

    monkeypatch.setattr(studies, "_segments", interrupting)
    path = str(tmp_path / "killed")
    with pytest.raises(KeyboardInterrupt):
        jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=[0, 1, 2], arms=arms, batch="vmap",
                  store=path, segments=SEGMENTS)
    assert _count(path, "partial") == 3 and _count(path, "runs") == 0
    monkeypatch.setattr(studies, "_segments", original)
    result = jbo.study(BRANIN.evaluate, BRANIN.space(), budget=BUDGET, seeds=[0, 1, 2], arms=arms, batch="vmap",
                       store=path, segments=SEGMENTS)
    np.testing.assert_array_equal(result.values, whole.values)
