"""Ablations at the speed of running (issue #29's bars) on Hartmann6, each side a fresh process with an empty
compilation cache: a 4-arm ``jbo.study`` against four ``minimize_many`` calls (``grid``), the study over 5 seeds then
6 (``seeds``), ``minimize_many`` against ``minimize`` seed after seed (``many``).

    python experiments/bench_study.py grid seeds --repeats 2; python experiments/bench_study.py many
"""

from __future__ import annotations

import os
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


def process(kind: str, seeds: int = 10) -> dict:
    """A part's fresh process (:func:`_speed.fresh`), its seconds counted from before ``import jbo``: the grid as one
    ``study`` or as ``calls`` (a minimize_many per arm), ``seeds`` (the study over 5 seeds, then 6), or the defaults
    at 100 evaluations as one ``many`` program or as ``sequential`` minimize calls."""
    start = time.perf_counter()
    import jbo
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
    if kind == "many":
        r = jbo.minimize_many(p.evaluate, p.space(), budget=100, seeds=range(seeds))
        return {"seconds": time.perf_counter() - start, "compile": r.compile_seconds, "best": r.best_values.tolist()}
    best = [jbo.minimize(p.evaluate, p.space(), budget=100, seed=seed).best_value for seed in range(seeds)]
    return {"seconds": time.perf_counter() - start, "best": best}


def part_grid(args) -> dict:
    runs = [(_speed.fresh(process, "study"), _speed.fresh(process, "calls")) for _ in range(args.repeats)]
    return {"study": [s for s, _ in runs], "minimize_many": [c for _, c in runs]}


def part_many(args) -> dict:
    return {"minimize_many": _speed.fresh(process, "many", args.seeds),
            "minimize": _speed.fresh(process, "sequential", args.seeds)}


def _same(many: dict) -> tuple[int, int]:
    """Seeds on which minimize_many's and minimize's best values agree to 1e-6, of how many."""
    pairs = list(zip(many["minimize_many"]["best"], many["minimize"]["best"]))
    return sum(abs(a - b) < 1e-6 for a, b in pairs), len(many["minimize_many"]["best"])


def _grid(r):
    study, calls = _speed.median(r["study"]), _speed.median(r["minimize_many"])
    best = {side: [round(b, 3) for b in r[side][0]["best"]] for side in r}
    return [f"GP-MAP arms `ei`, `ucb`, `pi`, `ucb` with `ucb_beta=4`, 10 seeds at 60 evaluations; medians of"
            f" {len(r['study'])} alternating runs; ratio study / calls **{study / calls:.2f}** (bar ≤ {GRID_BAR});"
            f" mean best per arm, study {best['study']}, calls {best['minimize_many']} (the machine was shared during"
            " earlier repeats, ratios 0.60, 0.63):", "",
            *_speed.table(["path", "wall [s]", "compiling [s]", "programs"],
                          ["`jbo.study`, 4 arms", f"{study:.1f}", f"{_speed.median(r['study'], 'compile'):.1f}",
                           r["study"][0]["programs"]],
                          ["4 × `jbo.minimize_many`", f"{calls:.1f}",
                           f"{statistics.median(sum(x['compile']) for x in r['minimize_many']):.1f}", 4])]


def _seeds(r):
    return [f"The same study over 5 seeds, then over 6 in the same process: compile seconds"
            f" {r['calls'][0]['compile']:.1f}, then {r['calls'][1]['compile']:.1f} (bar ≤ {100 * SEEDS_BAR:.0f} %)."]


def _many(r):
    (same, n), runs = _same(r), [r["minimize_many"], r["minimize"]]
    return [f"{n} seeds at 100 evaluations, defaults; ratio **{runs[0]['wall'] / runs[1]['wall']:.2f}** (bar ≤"
            f" {MANY_BAR}); the same best value (to 1e-6) on {same} of {n} seeds:", "",
            *_speed.table(["path", "wall [s]", "compiling [s]", "mean best ± s.e."],
                          *([path, f"{x['wall']:.1f}", f"{x['compile']:.1f}" if "compile" in x else "",
                             "{:.4f} ± {:.4f}".format(*_common.mean_se(x["best"]))]
                            for path, x in zip(["`jbo.minimize_many`", "`jbo.minimize`, seed after seed"], runs)))]


def _stages(r):  # a retired part: no runner, its stored result renders
    seeds, columns = len(next(iter(r.values()))["best"]), ("compile", "trace", "running", "wall")
    return [f"The same runs ({seeds} seeds) staged three ways through `jbo.study` (`stages=`), on a shared machine"
            " (load 4–5); running: the runs' seconds summed (two at a time: more than the wall time):", "",
            *_speed.table(["stages", "compiling [s]", "of which tracing [s]", "running [s]", "wall [s]"],
                          *([k, *(f"{v[c]:.1f}" for c in columns)] for k, v in r.items()))]


def _compile(r):  # a retired part: no runner, its stored result renders
    xla = r["compile"] - r["trace"]
    return [f"The grid's program ({', '.join(r['arms'])}) compiles in {r['compile']:.1f} s: tracing and lowering"
            f" {r['trace']:.1f} s; XLA {xla:.1f} s, of which HLO passes {r['passes_total']:.1f} s"
            f" ({r['distinct_passes']} distinct, from XLA's per-pass timing log) and code generation (LLVM) the rest,"
            f" {xla - r['passes_total']:.1f} s. The costliest passes:", "",
            *_speed.table(["HLO pass", "seconds"], *([k, f"{s:.2f}"] for k, s in list(r["passes"].items())[:8]))]


SECTION = _speed.Parts("bench_study", "Ablations as one program (bench_study)",
                       blocks={"grid": _grid, "seeds": _seeds, "many": _many, "stages": _stages, "compile": _compile},
                       runners={"grid": part_grid, "seeds": lambda args: _speed.fresh(process, "seeds"),
                                "many": part_many},
                       options={"--repeats": 2, "--seeds": 30}, cache=False)
report = SECTION.report


def claims() -> list[dict]:
    """Issue #29's bars: the grid's study ≤ 0.5× the four calls (medians); the second study compiling ≤ 10 % of the
    first; minimize_many over 30 seeds ≤ 0.6× sequential minimize, the same best value on every seed."""

    def grid(r):
        ratio = _speed.median(r["study"]) / _speed.median(r["minimize_many"])
        return f"{ratio:.2f}×", "yes" if ratio <= GRID_BAR else "no"

    def seeds(r):
        first, second = (c["compile"] for c in r["calls"][:2])
        share = second / first if first > 0 else float("inf")
        return f"{second:.1f} s of {first:.1f} s ({100 * share:.0f} %)", "yes" if share <= SEEDS_BAR else "no"

    def many(r):
        (same, n), ratio = _same(r), r["minimize_many"]["wall"] / r["minimize"]["wall"]
        ok = ratio <= MANY_BAR and same == n == len(r["minimize"]["best"])
        return f"{ratio:.2f}×, {same}/{n} seeds the same", "yes" if ok else "no"

    return [SECTION.claim("grid", "4-arm grid (GP-MAP ei, ucb, pi, ucb β=4; 10 seeds, Hartmann6 at 60): jbo.study"
                          " vs four minimize_many calls", f"≤ {GRID_BAR}×", grid),
            SECTION.claim("seeds", "The same study over 6 seeds after 5, one process: the second call's compile time"
                          " vs the first's", f"≤ {100 * SEEDS_BAR:.0f} %", seeds),
            SECTION.claim("many", "minimize_many, 30 seeds of Hartmann6 at 100 (defaults) vs 30 sequential"
                          " jbo.minimize, identical results", f"≤ {MANY_BAR}×, same best values", many)]


if __name__ == "__main__":
    SECTION.main()
