"""Compilation and the compiled path, measured side by side (issue 16's bars).

Parts (each stores its result, with the provenance of its run, in experiments/results/bench_compiled.json,
from which BENCHMARKS.md is regenerated: ``experiments/report.py``; ``--report-only``: only that):

* ``many``: 10 seeds of Hartmann6 at 60 evaluations, GP with MAP: ``jbo.minimize_many`` (one
  program for all seeds) against ``jbo.minimize`` seed after seed in one process. Each side runs in
  a fresh Python process with the persistent compilation cache off, so both pay their compilations.
* ``fresh``: a fresh Python process running ``jbo.minimize`` on Hartmann6 at 100 evaluations with
  the defaults (GP, slice sampling, EI), with an empty compilation cache and with a warm one,
  against Optuna's GPSampler doing the same run (``--peers-python``: an interpreter with optuna,
  see experiments/requirements-peers.txt). Runs alternate; medians over ``--repeats``.
* ``step``: the guide's (docs/guide.md) "write your own BO step" loop against ``jbo.Optimizer`` suggestions at the
  same N (same padded size, MAP), steady iterations only.
* ``parity``: 30 seeds of Hartmann6 at 100 evaluations with the defaults through ``minimize_many``
  and through ``minimize``: mean best and its standard error.

    python experiments/bench_compiled.py many fresh step --repeats 3 --peers-python /work/peers-venv/bin/python
    python experiments/bench_compiled.py parity --seeds 30
    python experiments/bench_compiled.py --report-only

Timings of paths against each other, not grids of runs: the parts call ``minimize_many`` and ``minimize``
themselves (``jbo.study``'s own bars are bench_study's).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402



def results_path() -> str:
    """The results JSON (under ``--results-dir`` when given)."""
    return os.path.join(_common.RESULTS, "bench_compiled.json")


MANY = r"""
import time, json
start = time.perf_counter()
import jbo
from jbo.benchmarks import get_problem
p = get_problem("hartmann6")
r = jbo.minimize_many(p.evaluate, p.space(), budget={budget}, seeds=range({seeds}), inference="map")
print(json.dumps({{"seconds": time.perf_counter() - start, "compile": r.compile_seconds,
                  "best": [float(b) for b in r.best_values]}}))
"""

SEQUENTIAL = r"""
import time, json
start = time.perf_counter()
import jbo
from jbo.benchmarks import get_problem
p = get_problem("hartmann6")
best, first = [], None
for seed in range({seeds}):
    r = jbo.minimize(p.evaluate, p.space(), budget={budget}, seed=seed, inference="map")
    best.append(r.best_value)
    first = first or time.perf_counter() - start
print(json.dumps({{"seconds": time.perf_counter() - start, "first_seed": first, "best": best}}))
"""

FRESH = r"""
import time, json
start = time.perf_counter()
import jbo
from jbo.benchmarks import get_problem
p = get_problem("hartmann6")
r = jbo.minimize(p.evaluate, p.space(), budget={budget}, seed=0, **{options})
print(json.dumps({{"seconds": time.perf_counter() - start, "best": r.best_value}}))
"""

OPTUNA = r"""
import time, json, sys
start = time.perf_counter()
sys.path.insert(0, {experiments!r})
import peers
values = peers.run_optuna_gp("hartmann6", {budget}, 0)
print(json.dumps({{"seconds": time.perf_counter() - start, "best": min(values)}}))
"""


def run_script(code: str, python: str = sys.executable, env: dict | None = None) -> dict:
    """Run ``code`` in a fresh interpreter; the wall time seen from here and the JSON it prints."""
    start = time.perf_counter()
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, env={**os.environ, **(env or {})},
                         cwd=_common.ROOT)
    wall = time.perf_counter() - start
    if out.returncode:
        raise RuntimeError(f"subprocess failed:\n{out.stderr[-3000:]}")
    return {"wall": wall, **json.loads(out.stdout.strip().splitlines()[-1])}


def part_many(args) -> dict:
    env = {"JBO_NO_CACHE": "1"}
    rows = {"minimize_many": [], "minimize": []}
    for _ in range(args.repeats):
        rows["minimize_many"].append(run_script(MANY.format(budget=60, seeds=10), env=env))
        rows["minimize"].append(run_script(SEQUENTIAL.format(budget=60, seeds=10), env=env))
    return rows


def part_fresh(args) -> dict:
    rows = {"jbo, empty cache": [], "jbo, warm cache": [], "optuna": [],
            "jbo (MAP), empty cache": [], "jbo (MAP), warm cache": []}
    for _ in range(args.repeats):
        for label, options in (("jbo", {}), ("jbo (MAP)", {"inference": "map"})):
            with tempfile.TemporaryDirectory() as cache:
                env = {"JBO_CACHE_DIR": cache, "JBO_NO_CACHE": ""}
                code = FRESH.format(budget=100, options=options)
                rows[f"{label}, empty cache"].append(run_script(code, env=env))
                rows[f"{label}, warm cache"].append(run_script(code, env=env))
        if args.peers_python:
            code = OPTUNA.format(experiments=os.path.dirname(os.path.abspath(__file__)), budget=100)
            rows["optuna"].append(run_script(code, python=args.peers_python,
                                             env={"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}))
    return {k: v for k, v in rows.items() if v}


def part_step(args) -> dict:
    """README loop vs Optimizer suggestions at the same N and padded size (in this process)."""
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem

    readme = open(os.path.join(_common.ROOT, "docs", "guide.md"), encoding="utf-8").read()
    block = re.search(r"```python\n(.*?)```", readme[readme.index("## Write your own BO step"):], re.S).group(1)
    timed = block.replace("for i in range(20):\n", "times = []\nfor i in range(20):\n    t0 = time.perf_counter()\n")
    assert "times = []" in timed
    timed = timed.replace("    y = np.append(", "    times.append(time.perf_counter() - t0)\n    y = np.append(")
    namespace = {"time": time}
    exec(compile("import time\n" + timed, "README", "exec"), namespace)
    own = namespace["times"][2:]  # the first two iterations compile

    problem = get_problem("hartmann6")
    opt = jbo.Optimizer(problem.space(), inference="map", n_init=8, seed=0)
    times = []
    for i in range(28):
        t0 = time.perf_counter()
        config = opt.ask(size=32)
        times.append((opt.last_info["phase"], time.perf_counter() - t0))
        opt.tell(config, problem.evaluate(config))
    steady = [t for phase, t in times if phase == "model"][2:]  # the first model suggestions compile
    return {"own_step": own, "optimizer": steady, "n": [8, 28],
            "own_median": float(np.median(own)), "optimizer_median": float(np.median(steady))}


def part_parity(args) -> dict:
    import jbo
    from jbo.benchmarks import get_problem

    problem = get_problem("hartmann6")
    start = time.perf_counter()
    many = jbo.minimize_many(problem.evaluate, problem.space(), budget=100, seeds=range(args.seeds))
    many_seconds = time.perf_counter() - start
    start = time.perf_counter()
    ask_tell = [jbo.minimize(problem.evaluate, problem.space(), budget=100, seed=s).best_value for s in range(args.seeds)]
    return {"minimize_many": [float(v) for v in many.best_values], "minimize": [float(v) for v in ask_tell],
            "many_seconds": many_seconds, "many_compile": many.compile_seconds,
            "minimize_seconds": time.perf_counter() - start}


def _parity(r: dict):
    """``((many mean, se), (minimize mean, se), difference, two standard errors of the difference)``."""
    (mm, ms), (am, ase) = _common.mean_se(r["minimize_many"]), _common.mean_se(r["minimize"])
    return (mm, ms), (am, ase), mm - am, 2 * (ms ** 2 + ase ** 2) ** 0.5


def claims() -> list[dict]:
    """The compiled path's quality parity: ``jbo.minimize_many`` and ``jbo.minimize`` over the same seeds of
    Hartmann6 at 100 evaluations with the defaults reach the same mean best: ``yes`` when the difference is
    within two standard errors of the difference, else ``no``. (Its speed bars, issue #29's, are
    bench_study's claims, measured there on one commit.)"""
    results = _common.load_results("bench_compiled.json", {})
    what = "Hartmann6 at 100 evaluations, defaults: minimize_many's mean best equals minimize's (same seeds)"
    bar = "difference within 2 s.e. of the difference"
    if "parity" not in results:
        return [_common.claim("jbo", what, bar, "–", "not run", "bench_compiled")]
    (mm, _), (am, _), diff, two_se = _parity(results["parity"])
    n = len(results["parity"]["minimize"])
    return [_common.claim("jbo", what, bar, f"{mm:.4f} vs {am:.4f} ({n} seeds; 2 s.e. {two_se:.4f})",
                          "yes" if abs(diff) <= two_se else "no", "bench_compiled")]


def report() -> None:
    _common.update_section("bench_compiled", write_report(_common.load_results("bench_compiled.json", {})))


def write_report(results: dict) -> str:
    lines = ["## Compilation and the compiled path (bench_compiled)"]
    med = lambda rows, key="wall": statistics.median(r[key] for r in rows)
    if "many" in results:
        r = results["many"]
        many, seq = med(r["minimize_many"]), med(r["minimize"])
        lines += ["", results["many_header"].rstrip()]
        lines += ["", "10 seeds of Hartmann6 at 60 evaluations, GP (MAP), each side in a fresh process without "
                  "the persistent cache (its compilations included); medians of "
                  f"{len(r['minimize'])} runs; ratio minimize_many / minimize **{many / seq:.2f}**:", "",
                  "| path | wall time [s] | of which compiling [s] | mean best |", "|---|---|---|---|",
                  f"| `jbo.minimize_many` (one program, 10 seeds) | {many:.1f} | "
                  f"{med(r['minimize_many'], 'compile'):.1f} | {statistics.mean(r['minimize_many'][0]['best']):.4f} |",
                  f"| `jbo.minimize`, seed after seed | {seq:.1f} | first seed {med(r['minimize'], 'first_seed'):.1f} | "
                  f"{statistics.mean(r['minimize'][0]['best']):.4f} |"]
    if "fresh" in results:
        r = results["fresh"]
        runs = lambda v: ", ".join(f"{x['wall']:.1f}" for x in v)
        rows = [f"| {k} | {med(v):.1f} | {runs(v)} | {v[0]['best']:.4f} |" for k, v in r.items()]
        ratio = ""
        if "optuna" in r:
            o = med(r["optuna"])
            ratio = (f"; jbo / Optuna: empty cache **{med(r['jbo, empty cache']) / o:.2f}**, "
                     f"warm cache **{med(r['jbo, warm cache']) / o:.2f}**")
        lines += ["", results["fresh_header"].rstrip()]
        lines += ["", "A fresh Python process running Hartmann6 at 100 evaluations with the defaults (jbo: GP, "
                  "slice sampling of 10 hyperparameter samples per suggestion, EI; Optuna: GPSampler, a MAP fit), "
                  "and jbo with MAP inference for comparison, wall time of the whole process; a warm cache "
                  "holds JAX's compiled programs and jbo's stored suggestion programs (loaded without "
                  f"tracing, `jbo.cache.StoredProgram`){ratio}:", "",
                  "| run | median [s] | runs [s] | best |", "|---|---|---|---|", *rows]
    if "step" in results:
        r = results["step"]
        lines += ["", results["step_header"].rstrip()]
        lines += ["", f"The README's \"write your own BO step\" loop (Matérn + RQ kernel, MAP, N = {r['n'][0]}–"
                  f"{r['n'][1]}, padded to 32) against `jbo.Optimizer` suggestions (Matérn, MAP, same N and "
                  f"padding), steady iterations; ratio **{r['own_median'] / r['optimizer_median']:.2f}**:", "",
                  "| loop | median per iteration [ms] |", "|---|---|",
                  f"| README step | {1000 * r['own_median']:.1f} |", f"| `jbo.Optimizer.ask` | {1000 * r['optimizer_median']:.1f} |"]
    if "parity" in results:
        r = results["parity"]
        (mm, ms), (am, ase), diff, two_se = _parity(r)
        lines += ["", results["parity_header"].rstrip()]
        lines += ["", f"Quality parity, Hartmann6 at 100 evaluations with the defaults, {len(r['minimize'])} seeds:"
                  f" difference {diff:+.4f}, two standard errors of the difference {two_se:.4f} (the summary's"
                  " verdict: `yes` when the difference is within them):", "",
                  "| path | mean best ± s.e. | wall time [s] |", "|---|---|---|",
                  f"| `jbo.minimize_many` | {mm:.4f} ± {ms:.4f} | {r['many_seconds']:.0f} "
                  f"(compiling {r['many_compile']:.0f}) |",
                  f"| `jbo.minimize` | {am:.4f} ± {ase:.4f} | {r['minimize_seconds']:.0f} |"]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = ["many", "fresh", "step", "parity"]
    _common.add_parts_argument(parser, parts)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--peers-python", default=None, help="an interpreter with optuna installed")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, parts=parts)
    if args is None:
        return
    for part in args.parts:
        print(f"running {part} ...", flush=True)
        result = {"many": part_many, "fresh": part_fresh, "step": part_step, "parity": part_parity}[part](args)
        _common.record_provenance("bench_compiled", accumulates=True)
        _common.merge_results(results_path(), [([part], result), ([part + "_header"], _common.header("bench_compiled"))])
    _common.regenerate()


if __name__ == "__main__":
    main()
