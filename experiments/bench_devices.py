"""Studies per device (issue #29, item 5): runs per second of whole ``jbo.study`` grids on this machine's JAX
device, merged beside the other devices' rows in ``experiments/results/bench_devices.json``.

Studies (``--studies``; each one ``jbo.study`` call in this process, its compilation timed apart):

* ``gp-map-grid``: issue #29's ablation grid, GP-MAP with ``ei``, ``ucb``, ``pi`` and ``ucb`` with
  ``ucb_beta=4``, ``--seeds`` seeds of Hartmann6 at 60 evaluations: four arms, one program.
* ``gp-default``: the default GP (slice-sampled hyperparameters, Yeo-Johnson targets, UCB in a trust region),
  ``--seeds`` seeds of Hartmann6 at 100 evaluations.
* ``bock-rosenbrock20``: BOCK (the paper's model, started at the box's centre, ``experiments/bock_table1.py``'s
  protocol) on its normalised 20-d Rosenbrock, ``--bock-seeds`` seeds at ``--bock-budget`` evaluations (the
  paper's 200 by default; less is said so in the table).

Runs per second = runs / (wall time - compile time); on a CPU the runs of a program go one after another
(``lax.map``), on an accelerator side by side (``vmap``: :func:`jbo.many.default_batch`), so this is the figure
that tells how much a study gains from the card. Rows are stored after each study, so a run stopped at its
time limit keeps the studies it finished.

    python experiments/bench_devices.py [--studies gp-map-grid gp-default bock-rosenbrock20] [--seeds 10]
        [--bock-seeds 5] [--bock-budget 200] [--results-dir DIR] [--report-only]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

SECTION = "bench_devices"
RESULTS_FILE = "bench_devices.json"
GRID_ARMS = {"ei": dict(inference="map", acquisition="ei"), "ucb": dict(inference="map", acquisition="ucb"),
             "pi": dict(inference="map", acquisition="pi"),
             "ucb-beta4": dict(inference="map", acquisition="ucb", ucb_beta=4.0)}
STUDIES = ("gp-map-grid", "gp-default", "bock-rosenbrock20")
DESCRIPTION = {
    "gp-map-grid": "GP-MAP ei / ucb / pi / ucb β=4, Hartmann6, 60 evaluations",
    "gp-default": "default GP (slice sampling), Hartmann6, 100 evaluations",
    "bock-rosenbrock20": "BOCK (paper's model, centre start), normalised Rosenbrock-20 (the paper: 200 evaluations)",
}


def study_of(name: str, bock_budget: int):
    """``(fn, space, budget, arms)`` of one study."""
    from jbo.benchmarks import get_problem

    if name == "bock-rosenbrock20":
        import bock_table1 as t1

        p = t1.problem_of("rosenbrock", 20)
        model, extra = t1.VARIANTS["bock"]
        return p.evaluate, p.space(), bock_budget, {"bock": {"model": model, **t1.START, **extra, "n_init": 2}}
    p = get_problem("hartmann6")
    if name == "gp-map-grid":
        return p.evaluate, p.space(), 60, GRID_ARMS
    return p.evaluate, p.space(), 100, {"gp": {}}


def measure(name: str, seeds: int, bock_budget: int) -> dict:
    import numpy as np

    import jbo

    fn, space, budget, arms = study_of(name, bock_budget)
    start = time.perf_counter()
    result = jbo.study(fn, space, budget, range(seeds), arms)
    wall = time.perf_counter() - start
    runs = len(result.arms) * seeds
    running = wall - result.compile_seconds
    return {"arms": list(result.arms), "seeds": seeds, "budget": budget, "runs": runs, "wall_seconds": wall,
            "compile_seconds": result.compile_seconds, "runs_per_second": runs / max(running, 1e-9),
            "best_mean": [float(np.nanmean(np.nanmin(result.values[a], axis=1))) for a in range(len(result.arms))]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", nargs="+", default=list(STUDIES), choices=STUDIES)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--bock-seeds", type=int, default=5)
    parser.add_argument("--bock-budget", type=int, default=200)
    _common.add_output_arguments(parser)
    started = _common.start_device_run(parser, argv, SECTION, RESULTS_FILE)
    if started is None:
        return
    args, path, device = started
    for name in args.studies:
        seeds = args.bock_seeds if name == "bock-rosenbrock20" else args.seeds
        row = measure(name, seeds, args.bock_budget)
        _common.merge_result(path, [device, name], row)
        print(f"{device} {name}: {row['runs']} runs, {row['runs_per_second']:.3f} runs/s, wall"
              f" {row['wall_seconds']:.0f} s, compile {row['compile_seconds']:.0f} s, best {row['best_mean']}",
              flush=True)
    _common.regenerate()


def claims() -> list[dict]:
    """Issue #29, item 5: runs per second of the same study on an accelerator against the 2-core CPU, for each
    study measured on both (``yes`` when every accelerator is faster on every such study)."""
    results = _common.load_results(RESULTS_FILE, {})
    cpus = {d: r for d, r in results.items() if _common.on_cpu(d)}
    pairs = [(d, c, s, r[s], cpus[c][s]) for d, r in results.items() if not _common.on_cpu(d) for c in cpus
             for s in r if s in cpus[c] and _comparable(r[s], cpus[c][s])]
    what = "Whole studies through jbo.study on an accelerator: runs per second against the 2-core CPU"
    if not pairs:
        return [_common.claim("jbo", what, "faster", "no study measured on both", "not run", SECTION)]
    figure = "; ".join(f"{s} ({g['runs']} runs) {d} {g['runs_per_second']:.3g} vs {c} {u['runs_per_second']:.3g}"
                       f" runs/s ({g['runs_per_second'] / u['runs_per_second']:.1f}×)" for d, c, s, g, u in pairs)
    verdict = "yes" if all(g["runs_per_second"] > u["runs_per_second"] for *_, g, u in pairs) else "no"
    return [_common.claim("jbo", what, "faster", figure, verdict, SECTION)]


def _comparable(a: dict, b: dict) -> bool:
    return all(a[key] == b[key] for key in ("budget", "arms", "seeds"))


def report() -> None:
    results = _common.load_results(RESULTS_FILE, {})
    if not results:
        return
    lines = ["## Whole studies per device", "", _common.PER_DEVICE_HEADER, "",
             "One `jbo.study` call per row, a device's rows in one or two processes without the compilation cache;"
             " runs = arms × seeds."
             " Runs per second exclude compilation (its seconds apart): on a CPU a program's runs go one after"
             " another, on an accelerator side by side (`vmap`). Best: mean best value per arm. Each device ran"
             " with its own Python stack (its machine line under the table).", "",
             "| device | study | runs (seeds) | evaluations | runs / s | wall [s] | compile [s]"
             " | best (mean per arm) |",
             "|---|---|---|---|---|---|---|---|"]
    for device, rows in results.items():
        for name, r in rows.items():
            best = ", ".join(f"{b:.4g}" for b in r["best_mean"])
            lines.append(f"| {device} | {DESCRIPTION.get(name, name)} | {r['runs']} ({r['seeds']}) | {r['budget']} |"
                         f" {r['runs_per_second']:.3g} | {r['wall_seconds']:.0f} | {r['compile_seconds']:.0f} |"
                         f" {best} |")
    lines += ["", *_common.device_provenance(SECTION, results)]
    _common.update_section(SECTION, "\n".join(lines))


if __name__ == "__main__":
    main()
