"""Whole studies per device (issue #29, item 5): runs per second of ``jbo.study`` on this machine's JAX device,
compilation timed apart, merged beside other devices' rows.

    python experiments/bench_devices.py [--studies gp-map-grid gp-default bock-rosenbrock20] [--bock-budget 200]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import _speed  # noqa: E402
import bench_study  # noqa: E402  (issue #29's ablation grid, bench_study.ARMS)

SECTION, RESULTS_FILE = "bench_devices", "bench_devices.json"
DESCRIPTION = {
    "gp-map-grid": "GP-MAP ei / ucb / pi / ucb β=4, Hartmann6, 60 evaluations",
    "gp-default": "default GP (slice sampling), Hartmann6, 100 evaluations",
    "bock-rosenbrock20": "BOCK (paper's model, centre start), normalised Rosenbrock-20 (the paper: 200 evaluations)",
}


def measure(name: str, seeds: int, bock_budget: int) -> dict:
    """One ``jbo.study`` of ``name``: runs per second = runs / (wall time - compile time)."""
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem

    if name == "bock-rosenbrock20":  # bock_table1's protocol: the paper's model, started at the box's centre
        import bock_table1 as t1

        p, (model, extra) = t1.problem_of("rosenbrock", 20), t1.VARIANTS["bock"]
        budget, arms = bock_budget, {"bock": {"model": model, **t1.START, **extra, "n_init": 2}}
    else:
        p = get_problem("hartmann6")
        budget, arms = (60, bench_study.ARMS) if name == "gp-map-grid" else (100, {"gp": {}})
    start = time.perf_counter()
    result = jbo.study(p.evaluate, p.space(), budget, range(seeds), arms)
    wall, runs, compile_seconds = time.perf_counter() - start, len(result.arms) * seeds, result.compile_seconds
    return {"arms": list(result.arms), "seeds": seeds, "budget": budget, "runs": runs, "wall_seconds": wall,
            "compile_seconds": compile_seconds, "runs_per_second": runs / max(wall - compile_seconds, 1e-9),
            "best_mean": [float(np.nanmean(np.nanmin(result.values[a], axis=1))) for a in range(len(result.arms))]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", nargs="+", default=list(DESCRIPTION), choices=list(DESCRIPTION))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--bock-seeds", type=int, default=5)
    parser.add_argument("--bock-budget", type=int, default=200)
    _common.add_output_arguments(parser)
    started = _common.start_device_run(parser, argv, SECTION, RESULTS_FILE)
    if started is None:
        return
    args, path, device = started
    for name in args.studies:
        row = measure(name, args.bock_seeds if name == "bock-rosenbrock20" else args.seeds, args.bock_budget)
        _common.merge_result(path, [device, name], row)
        print(f"{device} {name}: {row['runs_per_second']:.3f} runs/s, compile {row['compile_seconds']:.0f} s",
              flush=True)
    _common.regenerate()


def claims() -> list[dict]:
    """Runs per second of the same study (budget, arms, seeds): ``yes`` when every accelerator beats the CPU."""
    results = _common.load_results(RESULTS_FILE, {})
    cpus = {d: r for d, r in results.items() if _common.on_cpu(d)}
    pairs = [(d, c, s, r[s], cpus[c][s]) for d, r in results.items() if not _common.on_cpu(d) for c in cpus
             for s in r if s in cpus[c] and all(r[s][k] == cpus[c][s][k] for k in ("budget", "arms", "seeds"))]
    what = "Whole studies through jbo.study on an accelerator: runs per second against the 2-core CPU"
    if not pairs:
        return [_common.claim("jbo", what, "faster", "no study measured on both", "not run", SECTION)]
    figure = "; ".join(f"{s} ({g['runs']} runs) {d} {g['runs_per_second']:.3g} vs {c} {u['runs_per_second']:.3g}"
                       f" runs/s ({g['runs_per_second'] / u['runs_per_second']:.1f}×)" for d, c, s, g, u in pairs)
    verdict = "yes" if all(g["runs_per_second"] > u["runs_per_second"] for *_, g, u in pairs) else "no"
    return [_common.claim("jbo", what, "faster", figure, verdict, SECTION)]


def report() -> dict:
    results = _common.load_results(RESULTS_FILE, {})
    rows = [[device, DESCRIPTION.get(name, name), f"{r['runs']} ({r['seeds']})", r["budget"],
             f"{r['runs_per_second']:.3g}", f"{r['wall_seconds']:.0f}", f"{r['compile_seconds']:.0f}",
             ", ".join(f"{b:.4g}" for b in r["best_mean"])]
            for device, studies in results.items() for name, r in studies.items()]
    return {SECTION: "\n".join([
        "## Whole studies per device", "", _common.PER_DEVICE_HEADER, "",
        "One `jbo.study` call per row, without the compilation cache; runs = arms × seeds; runs per second exclude"
        " compilation: a CPU runs a program's runs one after another, an accelerator side by side (`vmap`). Best:"
        " mean best value per arm.", "",
        *_speed.table(["device", "study", "runs (seeds)", "evaluations", "runs / s", "wall [s]", "compile [s]",
                       "best (mean per arm)"], *rows), "",
        *_common.device_provenance(SECTION, results)])} if results else {}


if __name__ == "__main__":
    main()
