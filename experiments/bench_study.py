"""Ablations at the speed of running: ``jbo.study`` against one ``minimize_many`` per arm, and the
whole-run program against the ask/tell loop (issue 29's bars).

Parts (each writes experiments/results/bench_study.json; ``report`` writes the BENCHMARKS.md section):

* ``grid``: GP-MAP with ``ei``, ``ucb``, ``pi`` and ``ucb`` with ``ucb_beta=4``, 10 seeds of Hartmann6 at 60
  evaluations: one ``jbo.study`` in a fresh process against four ``jbo.minimize_many`` calls in another,
  each with an empty compilation cache (a new temporary cache directory), alternating, ``--repeats`` times.
* ``seeds``: in one process, ``jbo.study`` over 5 seeds, then over 6: the second call's compile seconds.
* ``many``: ``--seeds`` seeds of Hartmann6 at 100 evaluations with the defaults (GP, slice sampling, EI):
  ``minimize_many`` (the default stages, those ``jbo.minimize`` pads to) against ``jbo.minimize`` seed after
  seed, each in a fresh process with an empty cache; and the per-seed best values of both (parity).
* ``stages``: the same runs (``--stage-seeds`` seeds) through ``jbo.study`` with three staging choices: one size
  (the whole budget), the default (half, then whole), doubling from 16: compile and running seconds.

    python experiments/bench_study.py grid seeds --repeats 2
    python experiments/bench_study.py many --seeds 30
    python experiments/bench_study.py stages --stage-seeds 10
    python experiments/bench_study.py report
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

RESULTS = os.path.join(_common.RESULTS, "bench_study.json")

ARMS = """{"ei": dict(inference="map"), "ucb": dict(inference="map", acquisition="ucb"),
        "pi": dict(inference="map", acquisition="pi"),
        "ucb-beta4": dict(inference="map", acquisition="ucb", ucb_beta=4.0)}"""

STUDY = r"""
import time, json
start = time.perf_counter()
import jbo
from jbo.benchmarks import get_problem
p = get_problem("hartmann6")
r = jbo.study(p.evaluate, p.space(), budget={budget}, seeds=range({seeds}), arms={arms})
print(json.dumps({{"seconds": time.perf_counter() - start, "compile": r.compile_seconds, "programs": len(r.programs),
                  "best": r.best_values.mean(axis=1).tolist()}}))
"""

MANY_CALLS = r"""
import time, json
start = time.perf_counter()
import jbo
from jbo.benchmarks import get_problem
p = get_problem("hartmann6")
compile_seconds, best = [], []
for name, options in {arms}.items():
    r = jbo.minimize_many(p.evaluate, p.space(), budget={budget}, seeds=range({seeds}), **options)
    compile_seconds.append(r.compile_seconds)
    best.append(float(r.best_values.mean()))
print(json.dumps({{"seconds": time.perf_counter() - start, "compile": compile_seconds, "best": best}}))
"""

SEEDS = r"""
import time, json
import jbo
from jbo.benchmarks import get_problem
p = get_problem("hartmann6")
out = []
for seeds in (5, 6):
    r = jbo.study(p.evaluate, p.space(), budget={budget}, seeds=range(seeds), arms={arms})
    out.append({{"seeds": seeds, "seconds": r.seconds, "compile": r.compile_seconds}})
print(json.dumps({{"calls": out}}))
"""

MANY = r"""
import time, json
start = time.perf_counter()
import jbo
from jbo.benchmarks import get_problem
p = get_problem("hartmann6")
r = jbo.minimize_many(p.evaluate, p.space(), budget=100, seeds=range({seeds}))
print(json.dumps({{"seconds": time.perf_counter() - start, "compile": r.compile_seconds,
                  "best": r.best_values.tolist()}}))
"""

SEQUENTIAL = r"""
import time, json
start = time.perf_counter()
import jbo
from jbo.benchmarks import get_problem
p = get_problem("hartmann6")
best = [jbo.minimize(p.evaluate, p.space(), budget=100, seed=s).best_value for s in range({seeds})]
print(json.dumps({{"seconds": time.perf_counter() - start, "best": best}}))
"""

STAGES = r"""
import time, json
import jbo, jbo.many
from jbo.benchmarks import get_problem
p = get_problem("hartmann6")
r = jbo.study(p.evaluate, p.space(), budget=100, seeds=range({seeds}), arms={{"gp": {{}}}}, stages={stages})
program = list(jbo.many._PROGRAMS.values())[-1]
print(json.dumps({{"seconds": r.seconds, "compile": r.compile_seconds, "trace": program.trace_seconds,
                  "running": float(r.step_seconds.sum()), "best": r.best_values[0].tolist()}}))
"""


def run_script(code: str) -> dict:
    """``code`` in a fresh interpreter with an empty compilation cache: the wall time and the JSON it prints."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "JBO_CACHE_DIR": cache, "JBO_NO_CACHE": "", "OPENBLAS_NUM_THREADS": "1"}
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=_common.ROOT)
        wall = time.perf_counter() - start
    if out.returncode:
        raise RuntimeError(f"subprocess failed:\n{out.stderr[-3000:]}")
    return {"wall": wall, **json.loads(out.stdout.strip().splitlines()[-1])}


def part_grid(args) -> dict:
    rows = {"study": [], "minimize_many": []}
    for _ in range(args.repeats):
        rows["study"].append(run_script(STUDY.format(budget=60, seeds=10, arms=ARMS)))
        rows["minimize_many"].append(run_script(MANY_CALLS.format(budget=60, seeds=10, arms=ARMS)))
        print(rows["study"][-1]["wall"], rows["minimize_many"][-1]["wall"], flush=True)
    return rows


def part_seeds(args) -> dict:
    return run_script(SEEDS.format(budget=60, arms=ARMS))


def part_many(args) -> dict:
    many = run_script(MANY.format(seeds=args.seeds))
    print("minimize_many", many["wall"], flush=True)
    sequential = run_script(SEQUENTIAL.format(seeds=args.seeds))
    return {"minimize_many": many, "minimize": sequential}


def part_stages(args) -> dict:
    out = {}
    for label, stages in (("one size (104)", (104,)), ("default (56, 104)", None), ("doubling (16, 32, 64, 104)",
                                                                                   (16, 32, 64, 104))):
        out[label] = run_script(STAGES.format(seeds=args.stage_seeds, stages=stages))
        print(label, out[label]["wall"], flush=True)
    return out


def _mean_se(values):
    import numpy as np

    values = np.asarray(values, float)
    return values.mean(), values.std(ddof=1) / np.sqrt(len(values))


def report(results: dict) -> str:
    lines = ["## Ablations as one program (bench_study)"]
    med = lambda rows, key="wall": statistics.median(r[key] for r in rows)
    if "grid" in results:
        r = results["grid"]
        study, calls = med(r["study"]), med(r["minimize_many"])
        lines += ["", results["grid_header"].rstrip(), "",
                  "GP-MAP arms `ei`, `ucb`, `pi`, `ucb` with `ucb_beta=4`, 10 seeds of Hartmann6 at 60 evaluations; each "
                  f"side a fresh process with an empty compilation cache; medians of {len(r['study'])} alternating runs:",
                  "", "| path | wall [s] | compiling [s] | programs |", "|---|---|---|---|",
                  f"| `jbo.study`, 4 arms | {study:.1f} | {med(r['study'], 'compile'):.1f} | "
                  f"{r['study'][0]['programs']} |",
                  f"| 4 × `jbo.minimize_many` | {calls:.1f} | "
                  f"{statistics.median(sum(x['compile']) for x in r['minimize_many']):.1f} | 4 |", "",
                  f"Ratio study / minimize_many calls: **{study / calls:.2f}**; mean best per arm, study "
                  f"{[round(b, 3) for b in r['study'][0]['best']]}, calls {[round(b, 3) for b in r['minimize_many'][0]['best']]}."]
    if "seeds" in results:
        calls = results["seeds"]["calls"]
        lines += ["", f"The same study over 5 seeds, then over 6 in the same process: compile seconds "
                  f"{calls[0]['compile']:.1f}, then {calls[1]['compile']:.1f}."]
    if "many" in results:
        r = results["many"]
        many, seq = r["minimize_many"], r["minimize"]
        n = len(many["best"])
        same = sum(abs(a - b) < 1e-6 for a, b in zip(many["best"], seq["best"]))
        lines += ["", results["many_header"].rstrip(), "",
                  f"{n} seeds of Hartmann6 at 100 evaluations, defaults (GP, slice sampling, EI), each side a fresh "
                  "process with an empty cache:", "",
                  "| path | wall [s] | compiling [s] | mean best ± s.e. |", "|---|---|---|---|",
                  f"| `jbo.minimize_many` | {many['wall']:.1f} | {many['compile']:.1f} | "
                  "{:.4f} ± {:.4f} |".format(*_mean_se(many["best"])),
                  f"| `jbo.minimize`, seed after seed | {seq['wall']:.1f} | | "
                  "{:.4f} ± {:.4f} |".format(*_mean_se(seq["best"])), "",
                  f"Ratio: **{many['wall'] / seq['wall']:.2f}**; the same best value (to 1e-6) on {same} of {n} seeds."]
    if "stages" in results:
        r = results["stages"]
        lines += ["", results["stages_header"].rstrip(), "",
                  f"Staging of the whole-run program, {len(next(iter(r.values()))['best'])} seeds of the same runs "
                  "through `jbo.study`, fresh process, empty cache:", "",
                  "| stages | compiling [s] | of which tracing [s] | running [s] | wall [s] |", "|---|---|---|---|---|",
                  *[f"| {k} | {v['compile']:.1f} | {v['trace']:.1f} | {v['running']:.1f} | {v['wall']:.1f} |"
                    for k, v in r.items()]]
        lines += ["", "Running is the sum of the runs' seconds (two runs at a time, one per core: more than the wall "
                  "time). The default keeps `jbo.minimize`'s sizes, so a compiled run is the run it makes."]
    lines += ["", "Notes: the machine was shared with other test runs during the grid's first repeats (ratios 0.60 "
              "and 0.63 then, before the acquisition choice integrated its samples once) and the stages part "
              "(load 4–5); the rows above are the last runs."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="+", choices=["grid", "seeds", "many", "stages", "report"])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--stage-seeds", type=int, default=10)
    args = parser.parse_args()
    results = json.load(open(RESULTS)) if os.path.exists(RESULTS) else {}
    for part in args.parts:
        if part == "report":
            continue
        results[part] = globals()[f"part_{part}"](args)
        results[f"{part}_header"] = _common.header()
        with open(RESULTS, "w") as f:
            json.dump(results, f, indent=1)
    _common.update_section("bench_study", report(results))


if __name__ == "__main__":
    main()
