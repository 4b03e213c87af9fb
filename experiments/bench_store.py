"""Studies that survive and spread (issue #53), against the uninterrupted in-process study's values: a study with a
store SIGKILLed three times and continued (``kill``), and one on a Dask cluster losing a worker (``dask``).

    python experiments/bench_store.py kill dask
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import _speed  # noqa: E402

RUNS = 18
ARMS = {"gp": {}, "gp-ei": {"acquisition": "ei"}, "random": {"model": "random"}}  # the kill part's
MAP_ARMS = {"ei": {"inference": "map", "acquisition": "ei"}, "ucb": {"inference": "map", "acquisition": "ucb"},
            "random": {"model": "random"}}  # the dask part's


def study(store: str, budget: int = 100, arms=None, **options):
    """The study of 6 seeds of Hartmann6 kept in ``store``."""
    import jbo
    from jbo.benchmarks import get_problem

    p = get_problem("hartmann6")
    return jbo.study(p.evaluate, p.space(), budget=budget, seeds=range(6), arms=arms or ARMS, store=store, **options)


def child(store: str) -> None:
    """A process of the kill part: the study one run at a time, its programs from JAX's persistent cache."""
    import jbo

    jbo.cache.enable_jax_cache()  # whole runs hold the objective: JAX's cache lets each process load them
    study(store, workers=1)


def _count(path: str) -> int:
    from jbo import store

    return sum(len(s) for s in store.Store(path).runs("runs").values())


def _process(path: str, until=None) -> float:
    """:func:`child` in a fresh interpreter until it ends or ``until()`` holds (then SIGKILLed): its wall time."""
    code = (f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); import bench_store;"
            f" bench_store.child({path!r})")
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=err,
                                env=dict(os.environ, PYTHONPATH=_common.ROOT, OPENBLAS_NUM_THREADS="1"))
        failed = until is None and proc.wait() != 0
        while until is not None and not until() and not failed:
            failed = proc.poll() is not None  # it ended before it was killed
            time.sleep(0.1)
        proc.kill()
        proc.wait()
        if failed:
            err.seek(0)
            raise RuntimeError(f"the study failed or ended before it was killed: {err.read()[-3000:]}")
    return time.perf_counter() - start


def part_kill(args) -> dict:
    import numpy as np

    import jbo

    with tempfile.TemporaryDirectory() as folder:
        os.environ["JBO_CACHE_DIR"] = os.path.join(folder, "cache")
        _process(os.path.join(folder, "whole"))  # warms the persistent cache: every later process loads the programs
        again, killed = os.path.join(folder, "again"), os.path.join(folder, "killed")
        uninterrupted = _process(again)
        seconds = [_process(killed, lambda f=f: _count(killed) >= int(f * RUNS)) for f in (1 / 4, 1 / 2, 3 / 4)]
        made_before = _count(killed)
        seconds.append(_process(killed))
        a, b = jbo.StudyResult.load(again), jbo.StudyResult.load(killed)
        return {"uninterrupted_seconds": uninterrupted, "process_seconds": seconds, "runs_before_last": made_before,
                "runs": RUNS, "same_values": bool(np.array_equal(a.values, b.values)),
                "same_points": bool(np.array_equal(a.x, b.x))}


def part_dask(args) -> dict:
    import distributed
    import numpy as np

    with tempfile.TemporaryDirectory() as folder:
        local, path, outcome = study(os.path.join(folder, "local"), 60, MAP_ARMS), os.path.join(folder, "cluster"), {}
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            def run():
                start = time.perf_counter()
                outcome["result"] = study(path, 60, MAP_ARMS, executor=client)
                outcome["seconds"] = time.perf_counter() - start

            thread = threading.Thread(target=run)
            thread.start()
            while _count(path) < 4:
                time.sleep(0.2)
            os.kill(next(iter(client.run(os.getpid).values())), signal.SIGKILL)
            thread.join()
        return {"same_values": bool(np.array_equal(local.values, outcome["result"].values)),
                "seconds": outcome["seconds"], "runs": RUNS}


def _kill(r):
    return [f"A study of {r['runs']} runs (Hartmann6, 100 evaluations; the default GP with UCB and with EI, random"
            " search; one run at a time) with a store: uninterrupted, and SIGKILLed once a quarter, a half and three"
            f" quarters of the runs were stored, then continued. The last process made"
            f" {r['runs'] - r['runs_before_last']} of the {r['runs']} runs.", "",
            *_speed.table(["uninterrupted [s]", "processes killed, then the last [s]", "same values", "same points"],
                          [f"{r['uninterrupted_seconds']:.0f}", ", ".join(f"{s:.0f}" for s in r["process_seconds"]),
                           r["same_values"], r["same_points"]])]


def _dask(r):
    return [f"A study of {r['runs']} runs (Hartmann6, 60 evaluations; EI and UCB with MAP, random search) on a Dask"
            " LocalCluster of 2 worker processes, one SIGKILLed once 4 runs were stored:"
            f" {r['seconds']:.0f} s; the values equal the in-process study's: {r['same_values']}."]


SECTION = _speed.Parts("bench_store", "Studies that survive and spread (bench_store)",
                       blocks={"kill": _kill, "dask": _dask}, runners={"kill": part_kill, "dask": part_dask},
                       cache=False, own_provenance=True)
report = SECTION.report


def claims() -> list[dict]:
    """The killed study's values are the uninterrupted one's, and its last process takes under half its time."""

    def decide(r):
        ok = r["same_values"] and r["process_seconds"][-1] < 0.5 * r["uninterrupted_seconds"]
        figure = (f"same: {r['same_values']}; last process {r['process_seconds'][-1]:.0f} s of"
                  f" {r['uninterrupted_seconds']:.0f} s")
        return figure, "yes" if ok else "no"

    what = "A 3-arm x 6-seed study SIGKILLed three times and continued gives the uninterrupted study's values"
    return [SECTION.claim("kill", what, "same values; the last process well under the whole", decide)]


if __name__ == "__main__":
    SECTION.main()
