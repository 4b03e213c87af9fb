"""Ablation of jbo's escape rule (:mod:`jbo.escape`) on problems it was not designed on.

The rule was developed on Hartmann6 (issue #2's trapping, BENCHMARKS.md core_quality). This script
measures it elsewhere: jbo's GP defaults (Matérn-5/2 ARD, slice sampling, log-EI) with the rule on and
off (the default), same seeds, on multimodal and unimodal problems of several dimensions:

* ``hartmann3`` (3-d, 4 local minima), 50 evaluations;
* ``levy4`` (Levy, 4-d, many local minima), 80 evaluations;
* ``alpine4`` (Alpine01, 4-d, many local minima), 80 evaluations;
* ``rosenbrock4`` (Rosenbrock, 4-d, one curved valley: where escaping can only cost), 80 evaluations.

Results go to a resumable JSON (finished (problem, variant, seed) triples are skipped; several processes
can share it) and a BENCHMARKS.md section: mean best ± standard error, median, the number of seeds where
each variant is better, and how many suggestions escaped.

    python experiments/escape_ablation.py [--seeds 10] [--problems ...] [--variants on off] [--report-only]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

PROBLEMS = {  # name: (registry name, dimension, budget)
    "hartmann3": ("hartmann3", None, 50),
    "levy4": ("levy", 4, 80),
    "alpine4": ("alpine01", 4, 80),
    "rosenbrock4": ("rosenbrock", 4, 80),
}
VARIANTS = {"on": {"escape": True}, "off": {"escape": False}}
OUT = os.path.join(_common.RESULTS, "escape_ablation.json")


def run(problem: str, variant: str, seed: int) -> dict:
    import jbo
    from jbo.benchmarks import get_problem

    name, dim, budget = PROBLEMS[problem]
    p = get_problem(name, dim)
    escaped = []
    start = time.perf_counter()
    result = jbo.minimize(p.evaluate, p.space(), budget=budget, seed=seed, **VARIANTS[variant],
                          callback=lambda opt: escaped.append(bool(opt.last_info.get("escape"))))
    return {"values": [float(v) for v in result.values], "escaped": int(sum(escaped)),
            "seconds": time.perf_counter() - start}


def write_report(results: dict) -> None:
    import numpy as np

    from jbo.benchmarks import get_problem

    lines = ["## Escape rule ablation (jbo.escape on problems it was not developed on)", "",
             _common.header(),
             "jbo's GP defaults with the escape rule on and off (the default), same seeds; budgets include the initial "
             "design. Best value found: mean ± standard error and median over seeds; `better` counts the seeds where "
             "this variant's best is lower by more than 1e-6; `escapes / run` is the mean number of suggestions "
             "made by the rule.", "",
             "| problem (optimum) | evaluations | variant | seeds | best value (mean ± se) | median | better | "
             "escapes / run | s / run |", "|---|---|---|---|---|---|---|---|---|"]
    for problem in PROBLEMS:
        by_variant = results.get(problem, {})
        name, dim, budget = PROBLEMS[problem]
        optimum = get_problem(name, dim).optimum
        seeds = sorted(set.intersection(*(set(by_variant.get(v, {})) for v in VARIANTS)), key=int)
        if not seeds:
            continue
        best = {v: np.array([np.nanmin(by_variant[v][s]["values"]) for s in seeds]) for v in VARIANTS}
        for variant in VARIANTS:
            b = best[variant]
            other = best["off" if variant == "on" else "on"]
            se = b.std(ddof=1) / np.sqrt(len(b)) if len(b) > 1 else float("nan")
            runs = [by_variant[variant][s] for s in seeds]
            lines.append(f"| {problem} ({optimum:.4g}) | {budget} | {variant}{' (default)' if variant == 'off' else ''}"
                         f" | {len(b)} | {b.mean():.4g} ± {se:.2g} | {np.median(b):.4g} | {int(np.sum(b < other - 1e-6))}"
                         f" | {np.mean([r['escaped'] for r in runs]):.1f} | {np.mean([r['seconds'] for r in runs]):.0f} |")
    _common.update_section("escape_ablation", "\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _common.add_grid_arguments(parser, VARIANTS, problems=PROBLEMS)
    args = parser.parse_args(argv)
    _common.setup()
    results = _common.grid_results(args, OUT, args.problems, run, lambda record: f", {record['escaped']} escapes")
    write_report(results)


if __name__ == "__main__":
    main()
