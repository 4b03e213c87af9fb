"""Where do DNGO's and the GP's suggestions go? A diagnostic of DNGO's Hartmann6 failures.

In ``dngo_table1.py`` half of DNGO's Hartmann6 runs stall above −3.2. This script reruns GP and DNGO
(jbo's defaults, as in that table) on a box problem and measures, per run, the share of model-based
suggestions with at least one coordinate on a face of the search box (within 1e-6 of a bound, in
unit-cube units), the best value and the distance from the best point to the nearest known minimiser
(unit-cube units). A Sobol design or a GP rarely puts a point exactly on a face; a model whose mean
extrapolates beyond the data pushes the acquisition optimiser there.

    python experiments/dngo_boundary.py [--problem hartmann6] [--seeds 10] [--budget 60] [--methods gp dngo]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

FACE_TOLERANCE = 1e-6


def run(problem_name: str, method: str, seed: int, budget: int) -> dict:
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem

    problem = get_problem(problem_name)
    start = time.perf_counter()
    result = jbo.minimize(problem.evaluate, problem.space(), budget=budget, seed=seed, model=method)
    seconds = time.perf_counter() - start
    lo, hi = problem.bounds[:, 0], problem.bounds[:, 1]
    x = np.array([[h["config"][n] for n in problem.names] for h in result.history])
    unit = (x - lo) / (hi - lo)
    n_init = jbo.loop.Settings().initial_size(problem.dim)
    on_face = np.any((unit < FACE_TOLERANCE) | (unit > 1 - FACE_TOLERANCE), axis=1)
    best = unit[int(np.nanargmin(result.values))]
    argmins = (np.atleast_2d(problem.argmins) - lo) / (hi - lo)
    return {"values": [float(v) for v in result.values], "seconds": seconds,
            "face_share_model": float(on_face[n_init:].mean()), "face_share_design": float(on_face[:n_init].mean()),
            "best_distance": float(np.min(np.linalg.norm(argmins - best, axis=1)))}


def write_report(results: dict, args) -> None:
    import numpy as np

    lines = [f"## DNGO vs GP: suggestions on the faces of the box ({args.problem})", "", _common.header(),
             "Share of model-based suggestions with a coordinate on a face of the box (within 1e-6 of a bound),"
             " best value and distance (unit cube) from the best point to the nearest known minimiser; mean ±"
             " std over seeds, jbo defaults (the settings of `dngo_table1.py`).", "",
             "| method | seeds | evaluations | share of suggestions on a face | best value | distance to argmin |"
             " s / run |", "|---|---|---|---|---|---|---|"]
    for key, runs in sorted(results.items()):
        method, budget = key.split("/")
        rows = list(runs.values())

        def stat(field, fmt):
            v = np.array([r[field] for r in rows])
            return f"{v.mean():{fmt}} ± {v.std():{fmt}}"

        best = np.array([np.nanmin(r["values"]) for r in rows])
        lines.append(f"| {method} | {len(rows)} | {budget} | {stat('face_share_model', '.2f')} |"
                     f" {best.mean():.4f} ± {best.std():.4f} | {stat('best_distance', '.3f')} |"
                     f" {np.mean([r['seconds'] for r in rows]):.0f} |")
    lines += ["", "Per seed (share on a face / best value):", ""]
    for key, runs in sorted(results.items()):
        cells = [f"{s}: {r['face_share_model']:.2f} / {np.nanmin(r['values']):.3f}" for s, r in sorted(
            runs.items(), key=lambda kv: int(kv[0]))]
        lines.append(f"- {key}: " + "; ".join(cells))
    _common.update_section(f"dngo_boundary_{args.problem}", "\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="hartmann6")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--methods", nargs="+", default=["gp", "dngo"])
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args(argv)
    _common.setup()
    import json

    path = os.path.join(_common.RESULTS, f"dngo_boundary_{args.problem}.json")
    results = json.load(open(path)) if os.path.exists(path) else {}
    if not args.report_only:
        for method in args.methods:
            for seed in range(args.seeds):
                key = f"{method}/{args.budget}"
                if str(seed) in results.get(key, {}):
                    continue
                record = run(args.problem, method, seed, args.budget)
                print(f"{key} seed {seed}: face share {record['face_share_model']:.2f}, best"
                      f" {min(record['values']):.4f} ({record['seconds']:.0f} s)", flush=True)
                results = _common.merge_result(path, [key, str(seed)], record)
    write_report(results, args)


if __name__ == "__main__":
    main()
