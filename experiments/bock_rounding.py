"""How far a relative 1e-15 perturbation of the targets moves BOCK's suggestions (issue #57 item 3): two ask/tell
runs of one model on Styblinski-Tang-d (seed 0, d/5 design points), the second told every value times 1 + 1e-15.

    python experiments/bock_rounding.py [--dims 20 100] [--steps 3] [--seeds 5] [--rows bock bock-w ...]
    python experiments/bock_rounding.py --dims 20 --seeds 5 --adam-steps 0 10 20 40 80 200

``--adam-steps`` measures where the difference grows: the first model step of the default BOCK with its Adam search
cut to that many steps (the best point visited so far).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import bock_table1 as t1  # noqa: E402

RESULTS_FILE, SECTION = "bock_rounding.json", "bock_rounding"
RELATIVE, BAR = 1e-15, 1e-8  # issue #57's bound on the first three model suggestions at d = 20
#: label -> (model, options): BOCK's four models (the claim's), then the GP for comparison. The stored rows with
#: BOCK's search changed (Adam's step, epsilon, schedule) were an investigation: their runner is retired.
ROWS = {"bock": ("bock", {}), "bock (the paper's units)": ("bock", {"units": "objective"}),
        "bock-w": ("bock-w", {}), "bock-b": ("bock-b", {}), "gp": ("gp", {})}


def perturbed_runs(model: str, dim: int, steps: int, n_init: int, seed: int = 0, **options) -> dict:
    """Two runs told values ``RELATIVE`` apart: per model step, the largest difference of their suggestions
    (box-width units) and the largest relative difference of their hyperparameter means."""
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem

    problem = get_problem("styblinski_tang", dim)
    space = problem.space()
    width = np.array([space.params[n].high - space.params[n].low for n in space.names])
    runs = [jbo.Optimizer(space, model=model, seed=seed, n_init=n_init, **options) for _ in range(2)]
    moved, fit_moved = [], []
    for i in range(n_init + steps):
        configs = [run.ask() for run in runs]
        if i >= n_init:
            x = [np.array([c[n] for n in space.names], float) for c in configs]
            moved.append(float(np.max(np.abs(x[0] - x[1]) / width)))
            means = [np.array([np.mean(v) for k, v in sorted(run.last_info.items()) if k.startswith("hyperparameters")])
                     for run in runs]
            fit_moved.append(float(np.max(np.abs(means[0] - means[1]) / np.maximum(np.abs(means[0]), 1e-300))))
        for k, (run, config) in enumerate(zip(runs, configs)):
            run.tell(config, float(problem.evaluate(config)) * (1.0 + RELATIVE * k))
    return {"model": model, "options": options, "dim": dim, "n_init": n_init, "moved": moved, "fit_moved": fit_moved}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0, 1, ... (each a pair of runs)")
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=list(ROWS))
    parser.add_argument("--adam-steps", type=int, nargs="+", default=None,
                        help="instead of the rows: BOCK's first model step after this many Adam steps")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, cache=False)
    if args is None:
        return
    if args.adam_steps is not None:
        for dim in args.dims:
            for steps in args.adam_steps:
                for seed in range(args.seeds):
                    row = perturbed_runs("bock", dim, 1, n_init=dim // 5, seed=seed, maximize={"num_steps": steps})
                    print(steps, dim, seed, row["moved"], flush=True)
                    _common.merge_result(os.path.join(_common.RESULTS, RESULTS_FILE),
                                         [f"{ADAM_STEPS}{steps}/{dim}/{seed}"], {**row, "seed": seed})
        _common.record_provenance(SECTION, accumulates=True)
        _common.regenerate()
        return
    for dim in args.dims:
        for label in args.rows:
            for seed in range(args.seeds):
                row = perturbed_runs(ROWS[label][0], dim, args.steps, n_init=dim // 5, seed=seed, **ROWS[label][1])
                print(label, dim, seed, row["moved"], row["fit_moved"], flush=True)
                key = f"{label}/{dim}" + (f"/{seed}" if seed else "")  # seed 0 under the key of the first runs
                _common.merge_result(os.path.join(_common.RESULTS, RESULTS_FILE), [key], {**row, "seed": seed})
    _common.record_provenance(SECTION, accumulates=True)
    _common.regenerate()


ADAM_STEPS = "bock, Adam steps "  # the label of a row of --adam-steps, followed by the number of steps


def by_row(rows: dict) -> dict:
    """``{label: {dim: {seed: row}}}`` of the stored pairs of runs (a key ``label/dim`` is seed 0's)."""
    out = {}
    for key, row in rows.items():
        label, dim, *seed = key.split("/")
        out.setdefault(label, {}).setdefault(int(dim), {})[int(seed[0]) if seed else 0] = row
    return out


def largest(by_seed: dict, steps: int = 3) -> float:
    """The largest move of the first ``steps`` model suggestions over the stored seeds."""
    return max(max(r["moved"][:steps]) for r in by_seed.values())


def report() -> dict:
    rows = _common.load_results(RESULTS_FILE, {})
    lines = ["## BOCK's suggestions under a 1e-15 perturbation of the targets (bock_rounding)", "",
             _common.header(SECTION)]
    if not rows:
        return {SECTION: "\n".join(lines + ["Not run."])}
    by_label = by_row(rows)
    by_steps = {int(label[len(ADAM_STEPS):]): by_label.pop(label) for label in list(by_label)
                if label.startswith(ADAM_STEPS)}
    dims = sorted({d for runs in by_label.values() for d in runs})
    header = ["row", *(f"d = {d}: seed 0 moved at model steps 1, 2, ..." for d in dims),
              *(f"d = {d}: seeds within {BAR:g} (largest move)" for d in dims), "fits moved at step 1"]
    for retired in (False, True):  # BOCK's models, then its search changed
        table = []
        for label, runs in by_label.items():
            if (label not in ROWS) == retired:
                moved = [", ".join(f"{m:.1e}" for m in runs[d][0]["moved"]) if 0 in runs.get(d, {}) else "–"
                         for d in dims]
                within = [f"{sum(max(r['moved'][:3]) <= BAR for r in runs[d].values())} of {len(runs[d])}"
                          f" ({largest(runs[d]):.1e})" if d in runs else "–" for d in dims]
                fits = max(r["fit_moved"][0] for by_seed in runs.values() for r in by_seed.values())
                table.append([label, *moved, *within, f"{fits:.1e}"])
        lines += t1.table(header, table) + [""]
    for dim in sorted({d for runs in by_steps.values() for d in runs}):
        steps = sorted(t for t in by_steps if dim in by_steps[t])
        seeds = sorted({s for t in steps for s in by_steps[t][dim]})
        table = [[f"seed {seed}", *(f"{by_steps[t][dim][seed]['moved'][0]:.1e}" if seed in by_steps[t][dim] else "–"
                                    for t in steps)] for seed in seeds]
        lines += [f"#### BOCK (default), d = {dim}: the first model step's move after this many of Adam's steps"
                  " (`--adam-steps`)", ""]
        lines += t1.table(["seed", *(f"{t} steps" for t in steps)], table) + [""]
    lines += ["Two runs told values 1e-15 apart (Styblinski-Tang-d, d/5 design points; seeds 0, 1, ...): per model"
              " step, the largest coordinate difference of their suggestions (box widths), and of their fits'"
              " hyperparameter means (relative). Cause: the fits and the anchors' scores agree to rounding; Adam's"
              " iterates then cross stiff ridges of BOCK's acquisition back and forth at the step size, which"
              " amplifies the difference step after step (last table: nothing moves before 20 steps, then"
              " exponential growth; the GP's smoother score stays at rounding). Measured apart, not stored: an ascent"
              " that takes only Armijo-accepted RMSprop steps still amplifies ~10× per step across a ridge (4 of 5"
              " seeds within the bar) and ends 0.02–0.17 log-EI below Adam; damped Newton from Adam's best point does"
              " not converge in 12 steps (the region is not concave); a noise floor of 1e-3 keeps 1 of the 2"
              " diverging seeds. No search tried meets the bar without a lower acquisition value. Second table,"
              " BOCK's search changed (runner retired; the commands above, the last at commit 88f6456): the 10×"
              " smaller step stays at rounding but scores lower (log-EI 0.27–0.29 below BOCK's step on"
              " Rosenbrock-20); neither a decaying step nor Adam's epsilon at 1e-4 is a cure."]
    return {SECTION: "\n".join(lines)}


def claims() -> list[dict]:
    rows = by_row(_common.load_results(RESULTS_FILE, {}))
    what = ("BOCK's four models, d = 20: a relative 1e-15 perturbation of the targets moves the first three model"
            " suggestions")
    worst = {label: rows[label][20] for label in list(ROWS)[:4] if 20 in rows.get(label, {})}
    if len(worst) < 4:
        return [_common.claim("jbo", what, f"≤ {BAR:g}", "–", "not run", SECTION)]
    figure = ", ".join(f"{k} {largest(v):.0e}" for k, v in worst.items())
    seeds = min(len(v) for v in worst.values())
    return [_common.claim("jbo", what, f"≤ {BAR:g}", f"{figure} (largest over {seeds}+ seeds)",
                          "yes" if max(map(largest, worst.values())) <= BAR else "no", SECTION)]


if __name__ == "__main__":
    main()
