"""Ablations at the speed of running (issue #29's bars): ``jbo.study`` against one ``minimize_many`` per arm, and the
whole-run program against the ask/tell loop, on Hartmann6; each side a fresh process with an empty compilation cache.

Parts: ``grid`` (4 GP-MAP arms, 10 seeds at 60 evaluations: one study against four minimize_many calls, alternating
``--repeats`` times), ``seeds`` (the study over 5 seeds, then 6: the second call's compile time), ``many`` (``--seeds``
seeds at 100 evaluations, defaults: minimize_many against minimize seed after seed, and their per-seed best values),
``stages`` (three stagings of the whole-run program), ``compile`` (where XLA spends the grid's compile time, from
its per-pass timing log).

    python experiments/bench_study.py grid seeds --repeats 2; python experiments/bench_study.py many stages compile
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import _speed  # noqa: E402

GRID_BAR = 0.5  # a 4-arm study at most half the time of four minimize_many calls
SEEDS_BAR = 0.1  # a study over 6 seeds after one over 5 compiles at most 10 % of the first
MANY_BAR = 0.6  # minimize_many over 30 seeds at most 0.6× 30 sequential jbo.minimize, same best values
ARMS = {"ei": {"inference": "map", "acquisition": "ei"}, "ucb": {"inference": "map", "acquisition": "ucb"},
        "pi": {"inference": "map", "acquisition": "pi"},
        "ucb-beta4": {"inference": "map", "acquisition": "ucb", "ucb_beta": 4.0}}
STAGES = {"one size (104)": (104,), "default (56, 104)": None, "doubling (16, 32, 64, 104)": (16, 32, 64, 104)}


def process(kind: str, seeds: int = 10, stages=None) -> dict:
    """One part's fresh process (:func:`_speed.fresh`): the grid as a ``study`` or as ``calls`` (a minimize_many per
    arm), ``seeds`` (the study over 5 seeds, then 6), ``stages`` (the defaults at 100, staged), ``compile``."""
    start = time.perf_counter()
    import jbo
    from jbo import many, studies
    from jbo.benchmarks import get_problem

    p = get_problem("hartmann6")
    if kind == "study":
        r = jbo.study(p.evaluate, p.space(), budget=60, seeds=range(seeds), arms=ARMS)
        return {"seconds": time.perf_counter() - start, "compile": r.compile_seconds, "programs": len(r.programs),
                "best": r.best_values.mean(axis=1).tolist()}
    if kind == "calls":
        runs = [jbo.minimize_many(p.evaluate, p.space(), budget=60, seeds=range(seeds), **o) for o in ARMS.values()]
        return {"seconds": time.perf_counter() - start, "compile": [r.compile_seconds for r in runs],
                "best": [float(r.best_values.mean()) for r in runs]}
    if kind == "seeds":
        calls = {n: jbo.study(p.evaluate, p.space(), budget=60, seeds=range(n), arms=ARMS) for n in (5, 6)}
        return {"calls": [{"seeds": n, "seconds": r.seconds, "compile": r.compile_seconds} for n, r in calls.items()]}
    if kind == "stages":
        r = jbo.study(p.evaluate, p.space(), budget=100, seeds=range(seeds), arms={"gp": {}}, stages=stages)
        program = list(many._PROGRAMS.values())[-1]
        return {"seconds": r.seconds, "compile": r.compile_seconds, "trace": program.trace_seconds,
                "running": float(r.step_seconds.sum()), "best": r.best_values[0].tolist()}
    group = studies.plan(p.space(), 60, ARMS)[0]
    program = many.program_for(p.evaluate, p.space(), 60, group.settings, group.n_init_range)
    program._program(1)
    return {"arms": list(group.names), "compile": program.compile_seconds, "trace": program.trace_seconds}


def pass_seconds(log: str) -> tuple[dict, dict]:
    """XLA's per-pass timing log summed ``({pass: seconds}, {pipeline: seconds})`` over the passes that are not
    themselves pipelines (a nested pipeline is logged as a pass of its parent, and its passes too)."""
    pipeline_line = re.compile(r"Running HLO pass pipeline on module \S+: (\S+)")
    names, passes, pipelines, pipeline = set(pipeline_line.findall(log)), {}, {}, "?"
    for line in log.splitlines():
        if match := pipeline_line.search(line):
            pipeline = match.group(1)
        elif (match := re.search(r"HLO pass: (\S+) time: ([\d.]+) (us|ms|s)\b", line)) and match.group(1) not in names:
            seconds = float(match.group(2)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[match.group(3)]
            passes[match.group(1)] = passes.get(match.group(1), 0.0) + seconds
            pipelines[pipeline] = pipelines.get(pipeline, 0.0) + seconds
    return passes, pipelines


def part_compile(args) -> dict:
    out = _speed.fresh(process, "compile", stderr=True, env={"TF_CPP_MIN_LOG_LEVEL": "0",
                                                              "TF_CPP_VMODULE": "hlo_pass_pipeline=1"})
    passes, pipelines = pass_seconds(out.pop("stderr"))
    top = lambda d, n: dict(sorted(d.items(), key=lambda kv: -kv[1])[:n])
    return {**out, "passes_total": sum(passes.values()), "passes": top(passes, 12), "pipelines": top(pipelines, 8),
            "distinct_passes": len(passes)}


def part_grid(args) -> dict:
    runs = [(_speed.fresh(process, "study"), _speed.fresh(process, "calls")) for _ in range(args.repeats)]
    return {"study": [s for s, _ in runs], "minimize_many": [c for _, c in runs]}


PARTS = {"grid": part_grid,
         "seeds": lambda args: _speed.fresh(process, "seeds"),
         "many": lambda args: {"minimize_many": _speed.fresh(_speed.hartmann6, 100, args.seeds, {}),
                               "minimize": _speed.fresh(_speed.hartmann6, 100, args.seeds, {}, False)},
         "stages": lambda args: {k: _speed.fresh(process, "stages", args.stage_seeds, v) for k, v in STAGES.items()},
         "compile": part_compile}


def _same(many: dict) -> tuple[int, int]:
    """Seeds on which minimize_many's and minimize's best values agree to 1e-6, of how many."""
    return sum(abs(a - b) < 1e-6 for a, b in zip(many["minimize_many"]["best"], many["minimize"]["best"])), len(
        many["minimize_many"]["best"])


def claims() -> list[dict]:
    """Issue #29's bars, each ``yes`` when met by the stored figures, else ``no`` (``not run`` without them): the
    grid's study ≤ 0.5× the four calls (medians); the second study compiling ≤ 10 % of the first; minimize_many over
    30 seeds ≤ 0.6× sequential minimize, with the same best value (to 1e-6) on every seed."""
    results = _common.load_results("bench_study.json", {})
    rows = []
    what = "4-arm grid (GP-MAP ei, ucb, pi, ucb β=4; 10 seeds, Hartmann6 at 60): jbo.study vs four minimize_many calls"
    figure, verdict = "–", "not run"
    if "grid" in results:
        ratio = _speed.median(results["grid"]["study"]) / _speed.median(results["grid"]["minimize_many"])
        figure, verdict = f"{ratio:.2f}×", "yes" if ratio <= GRID_BAR else "no"
    rows.append(_common.claim("jbo", what, f"≤ {GRID_BAR}×", figure, verdict, "bench_study"))
    what = "The same study over 6 seeds after 5, one process: the second call's compile time vs the first's"
    figure, verdict = "–", "not run"
    if "seeds" in results:
        first, second = (c["compile"] for c in results["seeds"]["calls"][:2])
        share = second / first if first > 0 else float("inf")
        figure = f"{second:.1f} s of {first:.1f} s ({100 * share:.0f} %)"
        verdict = "yes" if share <= SEEDS_BAR else "no"
    rows.append(_common.claim("jbo", what, f"≤ {100 * SEEDS_BAR:.0f} %", figure, verdict, "bench_study"))
    what = "minimize_many, 30 seeds of Hartmann6 at 100 (defaults) vs 30 sequential jbo.minimize, identical results"
    figure, verdict = "–", "not run"
    if "many" in results:
        many, seq = results["many"]["minimize_many"], results["many"]["minimize"]
        (same, n), ratio = _same(results["many"]), many["wall"] / seq["wall"]
        figure = f"{ratio:.2f}×, {same}/{n} seeds the same"
        verdict = "yes" if ratio <= MANY_BAR and same == n == len(seq["best"]) else "no"
    rows.append(_common.claim("jbo", what, f"≤ {MANY_BAR}×, same best values", figure, verdict, "bench_study"))
    return rows


def _grid(r):
    study, calls = _speed.median(r["study"]), _speed.median(r["minimize_many"])
    best = {side: [round(b, 3) for b in r[side][0]["best"]] for side in r}
    return [f"GP-MAP arms `ei`, `ucb`, `pi`, `ucb` with `ucb_beta=4`, 10 seeds at 60 evaluations; medians of"
            f" {len(r['study'])} alternating runs; ratio study / calls **{study / calls:.2f}** (bar ≤ {GRID_BAR});"
            f" mean best per arm, study {best['study']}, calls {best['minimize_many']}:", "",
            *_speed.table(["path", "wall [s]", "compiling [s]", "programs"],
                          ["`jbo.study`, 4 arms", f"{study:.1f}", f"{_speed.median(r['study'], 'compile'):.1f}",
                           r["study"][0]["programs"]],
                          ["4 × `jbo.minimize_many`", f"{calls:.1f}",
                           f"{statistics.median(sum(x['compile']) for x in r['minimize_many']):.1f}", 4])]


def _many(r):
    (same, n), runs = _same(r), [r["minimize_many"], r["minimize"]]
    return [f"{n} seeds at 100 evaluations, defaults; ratio **{runs[0]['wall'] / runs[1]['wall']:.2f}** (bar ≤"
            f" {MANY_BAR}); the same best value (to 1e-6) on {same} of {n} seeds:", "",
            *_speed.table(["path", "wall [s]", "compiling [s]", "mean best ± s.e."],
                          *([path, f"{x['wall']:.1f}", f"{x['compile']:.1f}" if "compile" in x else "",
                             "{:.4f} ± {:.4f}".format(*_common.mean_se(x["best"]))]
                            for path, x in zip(["`jbo.minimize_many`", "`jbo.minimize`, seed after seed"], runs)))]


def _stages(r):
    seeds, columns = len(next(iter(r.values()))["best"]), ("compile", "trace", "running", "wall")
    return [f"The same runs ({seeds} seeds) staged three ways through `jbo.study`; running: the runs' seconds summed"
            " (two at a time: more than the wall time):", "",
            *_speed.table(["stages", "compiling [s]", "of which tracing [s]", "running [s]", "wall [s]"],
                          *([k, *(f"{v[c]:.1f}" for c in columns)] for k, v in r.items()))]


def _compile(r):
    xla = r["compile"] - r["trace"]
    return [f"The grid's program ({', '.join(r['arms'])}) compiles in {r['compile']:.1f} s: tracing and lowering"
            f" {r['trace']:.1f} s; XLA {xla:.1f} s, of which HLO passes {r['passes_total']:.1f} s"
            f" ({r['distinct_passes']} distinct) and code generation (LLVM) the rest, {xla - r['passes_total']:.1f} s."
            " The costliest passes:", "",
            *_speed.table(["HLO pass", "seconds"], *([k, f"{s:.2f}"] for k, s in list(r["passes"].items())[:8]))]


def report() -> dict:
    seeds = lambda r: [f"The same study over 5 seeds, then over 6 in the same process: compile seconds"
                       f" {r['calls'][0]['compile']:.1f}, then {r['calls'][1]['compile']:.1f}"
                       f" (bar ≤ {100 * SEEDS_BAR:.0f} %)."]
    text = _speed.render_parts("Ablations as one program (bench_study)", _common.load_results("bench_study.json", {}),
                               {"grid": _grid, "seeds": seeds, "many": _many, "stages": _stages, "compile": _compile})
    return {"bench_study": text + "\n\nThe machine was shared during the grid's first repeats (ratios 0.60, 0.63) and"
            " the stages part (load 4–5); the rows above are the last runs."}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--stage-seeds", type=int, default=10)
    _speed.run_parts(parser, PARTS, "bench_study", argv, cache=False)  # the parts run in fresh processes


if __name__ == "__main__":
    main()
