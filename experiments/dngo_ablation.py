"""Ablation of two DNGO defaults: gradient refinement of the acquisition and the quadratic prior's curvature scale.

Every variant runs ``jbo.minimize(model="dngo")`` with jbo's DNGO otherwise at its defaults (tanh 50-50-50
basis retrained every iteration, BLR with the quadratic prior mean of Snoek et al. 2015 eq. 9, 10 slice
samples, log-EI) and both choices spelled out, so the stored runs do not depend on what the defaults are:

* ``refine``: the acquisition's best anchors refined by 100 projected Adam steps (jbo's search for GPs), or
  ``anchors``: the best of the 1024 Sobol + 256 local anchors, no refinement;
* ``curvature_scale``: the scale of the horseshoe prior on the quadratic's curvatures diag(Λ), 1 (the
  default) or 10 (standardised output units per squared unit-cube distance: a curvature near 10 lets
  one coordinate span the standardised data's range over half the cube; under scale 1 that is the tail).

Problems and budgets: Branin and Hartmann6 at 200 evaluations (the paper's Table 1), Hartmann3 at 100.
Results go to a resumable JSON (finished (problem, variant, seed) triples are skipped; several processes
can share it), a BENCHMARKS.md section with mean best ± standard error, and one figure per problem.

    python experiments/dngo_ablation.py [--seeds 10] [--problems branin hartmann3 hartmann6]
        [--variants refine-c1 anchors-c1 refine-c10 anchors-c10] [--report-only]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

BUDGETS = {"branin": 200, "hartmann3": 100, "hartmann6": 200}
VARIANTS = {
    "refine-c1": dict(maximize={"num_steps": 100}, curvature_scale=1.0),
    "anchors-c1": dict(maximize={"num_steps": 0}, curvature_scale=1.0),
    "refine-c10": dict(maximize={"num_steps": 100}, curvature_scale=10.0),
    "anchors-c10": dict(maximize={"num_steps": 0}, curvature_scale=10.0),
}
OUT = os.path.join(_common.RESULTS, "dngo_ablation.json")


def run(problem: str, variant: str, seed: int, budget: int) -> dict:
    import jbo
    from jbo.benchmarks import get_problem

    p = get_problem(problem)
    start = time.perf_counter()
    result = jbo.minimize(p.evaluate, p.space(), budget=budget, seed=seed, model="dngo", **VARIANTS[variant])
    return {"values": [float(v) for v in result.values], "seconds": time.perf_counter() - start}


def default_variant() -> str:
    """The variant that jbo's current DNGO defaults amount to."""
    from jbo import loop

    settings = loop.Settings(model="dngo")
    for name, options in VARIANTS.items():
        if (settings.maximize.num_steps == options["maximize"]["num_steps"]
                and settings.model.curvature_scale == options["curvature_scale"]):
            return name
    return ""


def write_report(results: dict) -> None:
    import numpy as np

    from jbo.benchmarks import get_problem
    from jbo.plotting import plot_convergence

    default = default_variant()
    lines = ["## DNGO ablation: acquisition refinement and curvature scale of the quadratic prior", "",
             _common.header(),
             "`jbo.minimize(model=\"dngo\")` with both choices explicit (see `experiments/dngo_ablation.py`): "
             "`refine` = 100 Adam steps from the best anchors, `anchors` = best of the Sobol + local anchors; "
             "`cN` = horseshoe scale N on diag(Λ). Best value found, mean ± standard error over seeds (seeds "
             "0 .. n-1), and mean wall time of one run. " + (f"jbo's DNGO defaults are `{default}`." if default else ""),
             "", "| problem (optimum) | evaluations | variant | seeds | best value (mean ± se) | worst seed | s / run |",
             "|---|---|---|---|---|---|---|"]
    figures = []
    for problem, by_variant in sorted(results.items()):
        p = get_problem(problem)
        curves = {}
        for variant in VARIANTS:
            runs = by_variant.get(variant, {})
            if not runs:
                continue
            values = [np.asarray(r["values"], dtype=float) for r in runs.values()]
            best = np.array([np.nanmin(v) for v in values])
            se = best.std(ddof=1) / np.sqrt(len(best)) if len(best) > 1 else float("nan")
            seconds = np.mean([r["seconds"] for r in runs.values()])
            mark = " (default)" if variant == default else ""
            lines.append(f"| {problem} ({p.optimum:.4f}) | {len(values[0])} | {variant}{mark} | {len(best)} | "
                         f"{best.mean():.4f} ± {se:.4f} | {best.max():.4f} | {seconds:.0f} |")
            curves[variant] = values
        if curves:
            figure = os.path.join("experiments", "figures", f"dngo_ablation_{problem}.png")
            plot_convergence(curves, optimum=p.optimum, path=os.path.join(_common.ROOT, figure),
                             title=f"{problem}: DNGO, refinement × curvature scale")
            figures.append(f"`{figure}`")
    if figures:
        lines += ["", "Figures (simple regret, mean ± standard error): " + ", ".join(figures) + "."]
    _common.update_section("dngo_ablation", "\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _common.add_grid_arguments(parser, VARIANTS, problems=BUDGETS)
    args = parser.parse_args(argv)
    _common.setup()
    results = _common.grid_results(args, OUT, args.problems,
                                   lambda problem, variant, seed: run(problem, variant, seed, BUDGETS[problem]))
    write_report(results)


if __name__ == "__main__":
    main()
