"""Studies that survive and spread: a study killed and continued, and a study on a Dask cluster losing a worker.

Parts (results in experiments/results/bench_store.json; ``--report-only`` rewrites BENCHMARKS.md):

* ``kill``: a 3-arm x 6-seed study (Hartmann6, 100 evaluations; jbo's default GP with UCB and with EI, sharing a
  program, and random search) with a store, run uninterrupted, then again in a fresh store by processes each
  SIGKILLed once a quarter, a half and three quarters of the runs are stored, and a last process that finishes
  it: the wall time of each process, and whether the values equal the uninterrupted study's.
* ``dask``: a 3-arm x 6-seed study (Hartmann6, 60 evaluations; EI and UCB with MAP, random search) on a Dask
  ``LocalCluster`` of two worker processes, one SIGKILLed once four runs are stored: its values against the
  in-process study's.

    python experiments/bench_store.py kill dask
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

STUDY = r"""
import sys, time
import jbo
from jbo.benchmarks import get_problem
jbo.cache.enable_jax_cache()  # whole runs hold the objective: JAX's cache lets each process load them
problem = get_problem("hartmann6")
ARMS = {"gp": dict(), "gp-ei": dict(acquisition="ei"), "random": dict(model="random")}
start = time.perf_counter()
result = jbo.study(problem.evaluate, problem.space(), budget=100, seeds=range(6), arms=ARMS, store=sys.argv[1],
                   workers=1)
print("seconds", time.perf_counter() - start, flush=True)
"""
RUNS = 18


def results_path() -> str:
    return os.path.join(_common.RESULTS, "bench_store.json")


def _count(path: str, kind: str) -> int:
    from jbo import store

    return sum(len(s) for s in store.Store(path).runs(kind).values())


def _process(path: str, until=None) -> float:
    """Run the study in a fresh interpreter (its compiled programs from the persistent cache) until it ends or
    ``until()`` holds (then SIGKILL); the wall time."""
    env = dict(os.environ, PYTHONPATH=_common.ROOT, OPENBLAS_NUM_THREADS="1")
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", STUDY, path], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if until is None:
        out, err = proc.communicate()
        if proc.returncode:
            raise RuntimeError(err[-3000:])
        return time.perf_counter() - start
    while not until():
        if proc.poll() is not None:
            raise RuntimeError(f"the study ended before it was killed: {proc.stderr.read()[-3000:]}")
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return time.perf_counter() - start


def part_kill(args) -> dict:
    import numpy as np

    import jbo

    with tempfile.TemporaryDirectory() as folder:
        os.environ["JBO_CACHE_DIR"] = os.path.join(folder, "cache")
        whole = os.path.join(folder, "whole")
        _process(whole)  # warms the persistent cache: every later process loads the same programs
        again = os.path.join(folder, "again")
        uninterrupted = _process(again)
        killed = os.path.join(folder, "killed")
        seconds = []
        for fraction in (1 / 4, 1 / 2, 3 / 4):
            seconds.append(_process(killed, lambda f=fraction: _count(killed, "runs") >= int(f * RUNS)))
        made_before = _count(killed, "runs")
        seconds.append(_process(killed))
        a, b = jbo.StudyResult.load(again), jbo.StudyResult.load(killed)
        return {"uninterrupted_seconds": uninterrupted, "process_seconds": seconds, "runs_before_last": made_before,
                "runs": RUNS, "same_values": bool(np.array_equal(a.values, b.values)),
                "same_points": bool(np.array_equal(a.x, b.x))}


def part_dask(args) -> dict:
    import distributed
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem

    problem = get_problem("hartmann6")
    arms = {"ei": dict(inference="map", acquisition="ei"), "ucb": dict(inference="map", acquisition="ucb"),
            "random": dict(model="random")}
    with tempfile.TemporaryDirectory() as folder:
        local = jbo.study(problem.evaluate, problem.space(), budget=60, seeds=range(6), arms=arms,
                          store=os.path.join(folder, "local"))
        path = os.path.join(folder, "cluster")
        outcome = {}
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            def run():
                start = time.perf_counter()
                outcome["result"] = jbo.study(problem.evaluate, problem.space(), budget=60, seeds=range(6),
                                              arms=arms, store=path, executor=client)
                outcome["seconds"] = time.perf_counter() - start

            thread = threading.Thread(target=run)
            thread.start()
            while _count(path, "runs") < 4:
                time.sleep(0.2)
            os.kill(next(iter(client.run(os.getpid).values())), signal.SIGKILL)
            thread.join()
        return {"same_values": bool(np.array_equal(local.values, outcome["result"].values)),
                "seconds": outcome["seconds"], "runs": RUNS}


def report() -> None:
    results = _common.load_results("bench_store.json", {})
    lines = ["## Studies that survive and spread (bench_store)", ""]
    if "kill" in results:
        r = results["kill"]
        times = ", ".join(f"{s:.0f}" for s in r["process_seconds"])
        lines += [results["kill_header"].rstrip(), "",
                  f"A study of {r['runs']} runs (Hartmann6, 100 evaluations; the default GP with UCB and with EI, random "
                  f"search; one run at a time) with a store: uninterrupted, and SIGKILLed once a quarter, a half and "
                  f"three quarters of the runs were stored, then continued. The last process made "
                  f"{r['runs'] - r['runs_before_last']} of the {r['runs']} runs.", "",
                  "| uninterrupted [s] | processes killed, then the last [s] | same values | same points |",
                  "|---|---|---|---|",
                  f"| {r['uninterrupted_seconds']:.0f} | {times} | {r['same_values']} | {r['same_points']} |", ""]
    if "dask" in results:
        r = results["dask"]
        lines += [results["dask_header"].rstrip(), "",
                  f"A study of {r['runs']} runs (Hartmann6, 60 evaluations; EI and UCB with MAP, random search) on a Dask "
                  f"LocalCluster of 2 worker processes, one SIGKILLed once 4 runs were stored: {r['seconds']:.0f} s; "
                  f"the values equal the in-process study's: {r['same_values']}."]
    if not results:
        lines.append("Not run.")
    _common.update_section("bench_store", "\n".join(lines))


def claims() -> list[dict]:
    results = _common.load_results("bench_store.json", {})
    what = "A 3-arm x 6-seed study SIGKILLed three times and continued gives the uninterrupted study's values"
    if "kill" not in results:
        return [_common.claim("jbo", what, "same values; the last process well under the whole", "–", "not run",
                              "bench_store")]
    r = results["kill"]
    ok = r["same_values"] and r["process_seconds"][-1] < 0.5 * r["uninterrupted_seconds"]
    return [_common.claim("jbo", what, "same values; the last process well under the whole",
                          f"same: {r['same_values']}; last process {r['process_seconds'][-1]:.0f} s of "
                          f"{r['uninterrupted_seconds']:.0f} s", "yes" if ok else "no", "bench_store")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = ["kill", "dask"]
    _common.add_parts_argument(parser, parts)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, parts=parts, cache=False)
    if args is None:
        return
    for part in args.parts:
        print(f"running {part} ...", flush=True)
        result = {"kill": part_kill, "dask": part_dask}[part](args)
        print(json.dumps(result), flush=True)
        _common.record_provenance(f"bench_store_{part}")
        _common.merge_results(results_path(), [([part], result),
                                               ([part + "_header"], _common.header(f"bench_store_{part}"))])
    _common.regenerate()


if __name__ == "__main__":
    main()
