"""Ablations at the speed of running: ``jbo.study`` against one ``minimize_many`` per arm, and the
whole-run program against the ask/tell loop (issue 29's bars).

Parts (each stores its result, with the provenance of its run, in experiments/results/bench_study.json;
BENCHMARKS.md is then regenerated from the stored results, ``experiments/report.py``; ``report`` alone only
regenerates it):

* ``grid``: GP-MAP with ``ei``, ``ucb``, ``pi`` and ``ucb`` with ``ucb_beta=4``, 10 seeds of Hartmann6 at 60
  evaluations: one ``jbo.study`` in a fresh process against four ``jbo.minimize_many`` calls in another,
  each with an empty compilation cache (a new temporary cache directory), alternating, ``--repeats`` times.
* ``seeds``: in one process, ``jbo.study`` over 5 seeds, then over 6: the second call's compile seconds.
* ``many``: ``--seeds`` seeds of Hartmann6 at 100 evaluations with the defaults (GP, slice sampling, EI):
  ``minimize_many`` (the default stages, those ``jbo.minimize`` pads to) against ``jbo.minimize`` seed after
  seed, each in a fresh process with an empty cache; and the per-seed best values of both (parity).
* ``compile``: where XLA spends the grid program's compile time: the program compiled once in a fresh
  process with XLA's per-pass timing log on (``TF_CPP_VMODULE=hlo_pass_pipeline=1``); the HLO passes summed
  by name and by pipeline, the rest of XLA's time being code generation (LLVM).
* ``stages``: the same runs (``--stage-seeds`` seeds) through ``jbo.study`` with three staging choices: one size
  (the whole budget), the default (half, then whole), doubling from 16: compile and running seconds.

    python experiments/bench_study.py grid seeds --repeats 2
    python experiments/bench_study.py many --seeds 30
    python experiments/bench_study.py stages --stage-seeds 10
    python experiments/bench_study.py compile
    python experiments/bench_study.py report          # or --report-only

Timings of calls against each other (fresh processes, empty caches), so the parts keep their drivers.
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

# Issue #29's bars.
GRID_BAR = 0.5  # a 4-arm study at most half the time of four minimize_many calls
SEEDS_BAR = 0.1  # a study over 6 seeds after one over 5 compiles at most 10 % of the first
MANY_BAR = 0.6  # minimize_many over 30 seeds at most 0.6× 30 sequential jbo.minimize, same best values


def results_path() -> str:
    """The results JSON (under ``--results-dir`` when given)."""
    return os.path.join(_common.RESULTS, "bench_study.json")

ARMS = """{"ei": dict(inference="map", acquisition="ei"), "ucb": dict(inference="map", acquisition="ucb"),
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

COMPILE = r"""
import json
import jbo
from jbo import many, studies
from jbo.benchmarks import get_problem
p = get_problem("hartmann6")
group = studies.plan(p.space(), {budget}, {arms})[0]
program = many.program_for(p.evaluate, p.space(), {budget}, group.settings, group.n_init_range)
program._program(1)
print(json.dumps({{"arms": list(group.names), "compile": program.compile_seconds, "trace": program.trace_seconds}}))
"""
PASS_LINE = re.compile(r"HLO pass: (\S+) time: ([\d.]+) (us|ms|s)\b")
PIPELINE_LINE = re.compile(r"Running HLO pass pipeline on module \S+: (\S+)")


def pass_seconds(log: str) -> tuple[dict, dict]:
    """XLA's per-pass timing log summed ``({pass: seconds}, {pipeline: seconds})`` over the passes that are
    not themselves pipelines (a nested pipeline is logged as a pass of its parent, and its passes too)."""
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
    names = set(PIPELINE_LINE.findall(log))
    passes, pipelines, pipeline = {}, {}, "?"
    for line in log.splitlines():
        match = PIPELINE_LINE.search(line)
        if match:
            pipeline = match.group(1)
            continue
        match = PASS_LINE.search(line)
        if match and match.group(1) not in names:
            seconds = float(match.group(2)) * scale[match.group(3)]
            passes[match.group(1)] = passes.get(match.group(1), 0.0) + seconds
            pipelines[pipeline] = pipelines.get(pipeline, 0.0) + seconds
    return passes, pipelines


def run_script(code: str, env: dict | None = None, stderr: bool = False) -> dict:
    """``code`` in a fresh interpreter with an empty compilation cache: the wall time and the JSON it prints."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "JBO_CACHE_DIR": cache, "JBO_NO_CACHE": "", "OPENBLAS_NUM_THREADS": "1", **(env or {})}
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=_common.ROOT)
        wall = time.perf_counter() - start
    if out.returncode:
        raise RuntimeError(f"subprocess failed:\n{out.stderr[-3000:]}")
    return {"wall": wall, **json.loads(out.stdout.strip().splitlines()[-1]), **({"stderr": out.stderr} if stderr else {})}


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


def part_compile(args) -> dict:
    out = run_script(COMPILE.format(budget=60, arms=ARMS), stderr=True,
                     env={"TF_CPP_MIN_LOG_LEVEL": "0", "TF_CPP_VMODULE": "hlo_pass_pipeline=1"})
    passes, pipelines = pass_seconds(out.pop("stderr"))
    top = lambda d, n: dict(sorted(d.items(), key=lambda kv: -kv[1])[:n])
    return {**out, "passes_total": sum(passes.values()), "passes": top(passes, 12), "pipelines": top(pipelines, 8),
            "distinct_passes": len(passes)}


def part_stages(args) -> dict:
    out = {}
    for label, stages in (("one size (104)", (104,)), ("default (56, 104)", None), ("doubling (16, 32, 64, 104)",
                                                                                   (16, 32, 64, 104))):
        out[label] = run_script(STAGES.format(seeds=args.stage_seeds, stages=stages))
        print(label, out[label]["wall"], flush=True)
    return out


def claims() -> list[dict]:
    """Issue #29's bars, each ``yes`` when met by the stored figures, else ``no`` (``not run`` without them):
    the 4-arm grid's ``jbo.study`` wall time ≤ 0.5× four ``minimize_many`` calls (medians of the repeats);
    the second study (6 seeds after 5, one process) compiling ≤ 10 % of the first; ``minimize_many`` over
    30 seeds of Hartmann6 at 100 ≤ 0.6× 30 sequential ``jbo.minimize``, with the same best value (to
    1e-6) on every seed."""
    results = _common.load_results("bench_study.json", {})
    med = lambda rows, key="wall": statistics.median(r[key] for r in rows)
    rows = []
    what = "4-arm grid (GP-MAP ei, ucb, pi, ucb β=4; 10 seeds, Hartmann6 at 60): jbo.study vs four minimize_many calls"
    if "grid" in results:
        ratio = med(results["grid"]["study"]) / med(results["grid"]["minimize_many"])
        rows.append(_common.claim("jbo", what, f"≤ {GRID_BAR}×", f"{ratio:.2f}×", "yes" if ratio <= GRID_BAR else "no",
                                  "bench_study"))
    else:
        rows.append(_common.claim("jbo", what, f"≤ {GRID_BAR}×", "–", "not run", "bench_study"))
    what = "The same study over 6 seeds after 5, one process: the second call's compile time vs the first's"
    if "seeds" in results:
        first, second = (c["compile"] for c in results["seeds"]["calls"][:2])
        share = second / first if first > 0 else float("inf")
        rows.append(_common.claim("jbo", what, f"≤ {100 * SEEDS_BAR:.0f} %",
                                  f"{second:.1f} s of {first:.1f} s ({100 * share:.0f} %)",
                                  "yes" if share <= SEEDS_BAR else "no", "bench_study"))
    else:
        rows.append(_common.claim("jbo", what, f"≤ {100 * SEEDS_BAR:.0f} %", "–", "not run", "bench_study"))
    what = "minimize_many, 30 seeds of Hartmann6 at 100 (defaults) vs 30 sequential jbo.minimize, identical results"
    bar = f"≤ {MANY_BAR}×, same best values"
    if "many" in results:
        many, seq = results["many"]["minimize_many"], results["many"]["minimize"]
        ratio, n = many["wall"] / seq["wall"], len(many["best"])
        same = sum(abs(a - b) < 1e-6 for a, b in zip(many["best"], seq["best"]))
        met = ratio <= MANY_BAR and same == n == len(seq["best"])
        rows.append(_common.claim("jbo", what, bar, f"{ratio:.2f}×, {same}/{n} seeds the same", "yes" if met else "no",
                                  "bench_study"))
    else:
        rows.append(_common.claim("jbo", what, bar, "–", "not run", "bench_study"))
    return rows


def report() -> None:
    _common.update_section("bench_study", write_report(_common.load_results("bench_study.json", {})))


def write_report(results: dict) -> str:
    lines = ["## Ablations as one program (bench_study)"]
    med = lambda rows, key="wall": statistics.median(r[key] for r in rows)
    if "grid" in results:
        r = results["grid"]
        study, calls = med(r["study"]), med(r["minimize_many"])
        lines += ["", results["grid_header"].rstrip(), "",
                  "GP-MAP arms `ei`, `ucb`, `pi`, `ucb` with `ucb_beta=4`, 10 seeds of Hartmann6 at 60 evaluations; each "
                  f"side a fresh process with an empty compilation cache; medians of {len(r['study'])} alternating runs;"
                  f" ratio study / minimize_many calls **{study / calls:.2f}** (bar ≤ {GRID_BAR}); mean best per arm,"
                  f" study {[round(b, 3) for b in r['study'][0]['best']]},"
                  f" calls {[round(b, 3) for b in r['minimize_many'][0]['best']]}:",
                  "", "| path | wall [s] | compiling [s] | programs |", "|---|---|---|---|",
                  f"| `jbo.study`, 4 arms | {study:.1f} | {med(r['study'], 'compile'):.1f} | "
                  f"{r['study'][0]['programs']} |",
                  f"| 4 × `jbo.minimize_many` | {calls:.1f} | "
                  f"{statistics.median(sum(x['compile']) for x in r['minimize_many']):.1f} | 4 |"]
    if "seeds" in results:
        calls = results["seeds"]["calls"]
        header = results.get("seeds_header")
        lines += ["", header.rstrip()] if header and header != results.get("grid_header") else []
        lines += ["", f"The same study over 5 seeds, then over 6 in the same process: compile seconds "
                  f"{calls[0]['compile']:.1f}, then {calls[1]['compile']:.1f}"
                  f" (bar ≤ {100 * SEEDS_BAR:.0f} % of the first)."]
    if "many" in results:
        r = results["many"]
        many, seq = r["minimize_many"], r["minimize"]
        n = len(many["best"])
        same = sum(abs(a - b) < 1e-6 for a, b in zip(many["best"], seq["best"]))
        lines += ["", results["many_header"].rstrip(), "",
                  f"{n} seeds of Hartmann6 at 100 evaluations, defaults (GP, slice sampling, EI), each side a fresh "
                  f"process with an empty cache; ratio **{many['wall'] / seq['wall']:.2f}** (bar ≤ {MANY_BAR}); the same"
                  f" best value (to 1e-6) on {same} of {n} seeds:", "",
                  "| path | wall [s] | compiling [s] | mean best ± s.e. |", "|---|---|---|---|",
                  f"| `jbo.minimize_many` | {many['wall']:.1f} | {many['compile']:.1f} | "
                  "{:.4f} ± {:.4f} |".format(*_common.mean_se(many["best"])),
                  f"| `jbo.minimize`, seed after seed | {seq['wall']:.1f} | | "
                  "{:.4f} ± {:.4f} |".format(*_common.mean_se(seq["best"]))]
    if "stages" in results:
        r = results["stages"]
        lines += ["", results["stages_header"].rstrip(), "",
                  f"Staging of the whole-run program, {len(next(iter(r.values()))['best'])} seeds of the same runs "
                  "through `jbo.study`, fresh process, empty cache. Running is the sum of the runs' seconds (two runs at"
                  " a time, one per core: more than the wall time); the default keeps `jbo.minimize`'s sizes, so a"
                  " compiled run is the run it makes:", "",
                  "| stages | compiling [s] | of which tracing [s] | running [s] | wall [s] |", "|---|---|---|---|---|",
                  *[f"| {k} | {v['compile']:.1f} | {v['trace']:.1f} | {v['running']:.1f} | {v['wall']:.1f} |"
                    for k, v in r.items()]]
    if "compile" in results:
        r = results["compile"]
        xla = r["compile"] - r["trace"]
        lines += ["", results["compile_header"].rstrip(), "",
                  f"Where the grid's program (arms {', '.join(r['arms'])}: one program) spends its {r['compile']:.1f} s"
                  f" of compilation: tracing and lowering {r['trace']:.1f} s; XLA {xla:.1f} s, of which its HLO passes"
                  f" {r['passes_total']:.1f} s ({r['distinct_passes']} distinct passes, from XLA's per-pass timing log)"
                  f" and the rest, {xla - r['passes_total']:.1f} s, code generation (LLVM). The costliest passes:", "",
                  "| HLO pass | seconds |", "|---|---|",
                  *[f"| {name} | {seconds:.2f} |" for name, seconds in list(r["passes"].items())[:8]]]
    lines += ["", "Summary verdicts: each of issue #29's bars (grid, seeds, many) is `yes` when the figures above meet"
              " it. The machine was shared during the grid's first repeats (ratios 0.60, 0.63, before the acquisition"
              " choice integrated its samples once) and the stages part (load 4–5); the rows above are the last runs."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parts = ["grid", "seeds", "many", "stages", "compile", "report"]
    _common.add_parts_argument(parser, parts)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--stage-seeds", type=int, default=10)
    _common.add_output_arguments(parser)
    # cache=False: this process only records; the parts run in fresh processes of their own
    args = _common.start(parser, argv, parts=parts, cache=False)
    if args is None:
        return
    for part in args.parts:
        if part == "report":
            continue
        result = globals()[f"part_{part}"](args)
        _common.record_provenance("bench_study")
        _common.merge_results(results_path(), [([part], result), ([f"{part}_header"], _common.header("bench_study"))])
    _common.regenerate()


if __name__ == "__main__":
    main()
