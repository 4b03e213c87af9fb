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
Each problem's variants run their missing seeds together in one ``jbo.study`` call (``--path compiled``,
the default: variants that differ only in values share one compiled program); ``--path ask-tell`` runs
one ``jbo.minimize`` per seed, as the stored rows made before the compiled path were. Results go to a
resumable JSON (finished (problem, variant, seed) triples are skipped; several processes can share it),
from which the BENCHMARKS.md section (mean best ± standard error) and one figure per problem are made;
``claims()`` decides whether jbo's two defaults hold up against the alternatives.

    python experiments/dngo_ablation.py [--seeds 10] [--problems branin hartmann3 hartmann6]
        [--variants refine-c1 anchors-c1 refine-c10 anchors-c10] [--path compiled|ask-tell] [--chunk N]
        [--budget N] [--results-dir DIR] [--report-only]
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
SECTION = "dngo_ablation"
RESULTS_FILE = "dngo_ablation.json"


def options(variant: str) -> dict:
    """The ``jbo.minimize`` / ``jbo.study`` options of a variant."""
    return dict(model="dngo", **_common.PAPER_DNGO, **VARIANTS[variant])


def run(problem: str, variant: str, seed: int, budget: int) -> dict:
    """One seed of one variant by ``jbo.minimize`` (``--path ask-tell``)."""
    import jbo
    from jbo.benchmarks import get_problem

    p = get_problem(problem)
    start = time.perf_counter()
    result = jbo.minimize(p.evaluate, p.space(), budget=budget, seed=seed, **options(variant))
    return {"values": [float(v) for v in result.values], "seconds": time.perf_counter() - start,
            "path": "ask-tell"}


def study_setup(budgets: dict):
    """``setup_of`` of :func:`_common.run_study_grid`: a problem's variants as the arms of one study."""
    def setup_of(problem: str, variants):
        from jbo.benchmarks import get_problem

        p = get_problem(problem)
        return p.evaluate, p.space(), budgets[problem], {v: options(v) for v in variants}

    return setup_of


def default_variant() -> str:
    """The variant that jbo's current DNGO defaults amount to."""
    from jbo import loop

    settings = loop.Settings(model="dngo")
    for name, options in VARIANTS.items():
        if (settings.maximize.num_steps == options["maximize"]["num_steps"]
                and settings.model.curvature_scale == options["curvature_scale"]):
            return name
    return ""


def _best(runs: dict):
    import numpy as np

    return np.array([np.nanmin(np.asarray(r["values"], dtype=float)) for r in runs.values()])


def _seconds(seconds: float) -> str:
    """Whole seconds, as the rows stored before compiled runs were; two digits below a second."""
    return f"{seconds:.0f}" if seconds >= 1 else f"{seconds:.2g}"


def report() -> None:
    write_report(_common.load_results(RESULTS_FILE, {}))


def write_report(results: dict) -> None:
    import numpy as np

    from jbo.benchmarks import get_problem
    from jbo.plotting import plot_convergence

    default = default_variant()
    lines = ["## DNGO ablation: acquisition refinement and curvature scale of the quadratic prior", "",
             _common.header(SECTION),
             "`jbo.minimize(model=\"dngo\")` with both choices explicit (see `experiments/dngo_ablation.py`): "
             "`refine` = 100 Adam steps from the best anchors, `anchors` = best of the Sobol + local anchors; "
             "`cN` = horseshoe scale N on diag(Λ). Best value found, mean ± standard error over seeds (seeds "
             "0 .. n-1), and the wall time of one run (`ask-tell`: `jbo.minimize` per seed; `compiled`: the"
             " variants' seeds in one `jbo.study`, compilation apart). "
             + (f"jbo's DNGO defaults are `{default}`." if default else ""),
             "Verdicts (summary table): a default holds on a problem when its mean best value is below the"
             " alternative's (the variant differing in that choice alone) or within one standard error of the"
             " difference; `yes` on every problem, `partly` on some, `no` on none.",
             "", "| problem (optimum) | evaluations | variant | path | seeds | best value (mean ± se) | worst seed"
             " | s / run | compile s |", "|---|---|---|---|---|---|---|---|---|"]
    figures = []
    for problem, by_variant in sorted(results.items()):
        p = get_problem(problem)
        curves = {}
        for variant in VARIANTS:
            for path, runs in _common.by_path(by_variant.get(variant, {})).items():
                values = [np.asarray(r["values"], dtype=float) for r in runs.values()]
                best = _best(runs)
                se = best.std(ddof=1) / np.sqrt(len(best)) if len(best) > 1 else float("nan")
                t = _common.timing(_common.calls_of(runs))
                mark = " (default)" if variant == default else ""
                lines.append(f"| {problem} ({p.optimum:.4f}) | {len(values[0])} | {variant}{mark} | {path} |"
                             f" {len(best)} | {best.mean():.4f} ± {se:.4f} | {best.max():.4f} | {_seconds(t['per_seed'])} |"
                             f" {_common.compile_text(t)} |")
                curves[variant if len(by_variant[variant]) == len(runs) else f"{variant} ({path})"] = values
        if curves:
            figure = _common.display_path(os.path.join(_common.FIGURES, f"dngo_ablation_{problem}.png"))
            if _common.PLOTS:
                os.makedirs(_common.FIGURES, exist_ok=True)
                plot_convergence(curves, optimum=p.optimum, path=os.path.join(_common.ROOT, figure),
                                 title=f"{problem}: DNGO, refinement × curvature scale")
            figures.append(f"`{figure}`")
    if figures:
        lines += ["", "Figures (simple regret, mean ± standard error): " + ", ".join(figures) + "."]
    _common.update_section(SECTION, "\n".join(lines))


def _neighbour(variant: str, choice: str) -> str:
    """The variant that differs from ``variant`` in ``choice`` alone (``"search"`` or ``"curvature"``)."""
    search, curvature = variant.split("-")
    if choice == "search":
        search = {"refine": "anchors", "anchors": "refine"}[search]
    else:
        curvature = {"c1": "c10", "c10": "c1"}[curvature]
    return f"{search}-{curvature}"


def claims() -> list[dict]:
    """jbo's two DNGO defaults against the alternatives (paper ``"jbo"``: design choices, no paper figure).

    For each choice (the acquisition search: anchors alone or 100 Adam steps; the curvature scale: 1 or
    10), the default variant is compared on every problem with the variant differing in that choice
    alone, at the problem's budget of :data:`BUDGETS`, over the seeds both ran. The default holds on a
    problem when its mean best value is below the alternative's or above it by at most one standard
    error of the difference (√(se₁² + se₂²)); ``yes`` when it holds on every problem, ``partly`` on
    some, ``no`` on none, ``not run`` without such pairs.
    """
    import numpy as np

    results = _common.load_results(RESULTS_FILE, {})
    default = default_variant() or "anchors-c1"
    label = "jbo's default" if default_variant() else "not jbo's default now"
    rows = []
    for choice, what in (("search", "acquisition search"), ("curvature", "curvature scale of the quadratic prior")):
        other = _neighbour(default, choice)
        held, parts, counts = [], [], set()
        for problem in sorted(results):
            runs = {v: {s: r for s, r in results[problem].get(v, {}).items() if len(r["values"]) == BUDGETS.get(problem)}
                    for v in (default, other)}
            seeds = sorted(set(runs[default]) & set(runs[other]), key=int)
            if len(seeds) < 2:
                continue
            a = _best({s: runs[default][s] for s in seeds})
            b = _best({s: runs[other][s] for s in seeds})
            se = np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
            held.append(bool(a.mean() <= b.mean() + se))
            parts.append(f"{problem}: {a.mean():.4f} vs {b.mean():.4f}")
            counts.add(len(seeds))
        verdict = "not run" if not held else "yes" if all(held) else "partly" if any(held) else "no"
        budgets = ", ".join(f"{p} {b}" for p, b in BUDGETS.items())
        seeds_text = "/".join(str(c) for c in sorted(counts))
        rows.append(_common.claim(
            "jbo", f"DNGO's {what}: `{default}` ({label}) no worse than `{other}` (mean best value; evaluations:"
                   f" {budgets})", "–", "; ".join(parts) + f" ({seeds_text} seeds)" if parts else "–", verdict,
            SECTION))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _common.add_grid_arguments(parser, VARIANTS, problems=BUDGETS)
    _common.add_path_arguments(parser)
    parser.add_argument("--budget", type=int, default=None,
                        help="evaluations per run for every problem (default: each problem's, BUDGETS); for checks")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    path = os.path.join(_common.RESULTS, RESULTS_FILE)
    budgets = {p: args.budget or b for p, b in BUDGETS.items()}
    before = _common.load_results(RESULTS_FILE, {})
    if args.path == "compiled":
        _common.run_study_grid(path, args.problems, args.variants, range(args.seeds), study_setup(budgets),
                               args.chunk)
    else:
        _common.run_grid(path, args.problems, args.variants, args.seeds,
                         lambda problem, variant, seed: run(problem, variant, seed, budgets[problem]),
                         lambda record: "")
    if _common.load_results(RESULTS_FILE, {}) != before:  # something ran
        _common.record_provenance(SECTION)
    _common.regenerate()


if __name__ == "__main__":
    main()
