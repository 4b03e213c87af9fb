"""DNGO's Table 1 (Snoek et al. 2015): Branin and Hartmann6, 200 evaluations, GP vs DNGO vs random search.

The GP and DNGO in the paper's setting (:data:`_common.PAPER_GP`, :data:`_common.PAPER_DNGO`); runs are stored under
``"problem/method/budget"`` keys, the first runs' layout. ``ensemble`` (Pethick 2018) runs only when named.

    python experiments/dngo_table1.py [--seeds 30] [--problems branin hartmann6] [--methods gp dngo random ensemble]
"""

import argparse
import dataclasses
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import driver  # noqa: E402

BUDGET = 200
PAPER = {  # Snoek et al. 2015, Table 1: mean ± std of the best value over 10 runs
    "branin": {"SMAC": "0.655 ± 0.27", "TPE": "0.526 ± 0.13", "gp": "0.398 ± 0.00", "dngo": "0.398 ± 0.00"},
    "hartmann6": {"SMAC": "−2.977 ± 0.11", "TPE": "−2.823 ± 0.18", "gp": "−3.3166 ± 0.02", "dngo": "−3.319 ± 0.00"}}
METHODS = {"gp": dict(model="gp", **_common.PAPER_GP), "dngo": dict(model="dngo", **_common.PAPER_DNGO),
           "random": dict(model="random"), "ensemble": dict(model="ensemble", **_common.PAPER_DNGO)}
EXPERIMENT = driver.Experiment(
    name="dngo_table1", title="DNGO Table 1: Branin and Hartmann6 (Snoek et al. 2015)",
    problems={p: driver.Problem(p, budget=BUDGET) for p in PAPER}, arms=METHODS, seeds=30,
    default_arms=("gp", "dngo", "random"),
    about="Best value found; `std` over seeds, as the paper reports; paper: Spearmint's GP and DNGO over 10 runs."
          " `ask-tell` rows ran `jbo.minimize` seed by seed, before the compiled path.",
    paper={(p, m): row[m] for p, row in PAPER.items() for m in ("gp", "dngo")},
    columns={"std": lambda runs, _: f"{driver.best_values(runs).std(ddof=1) if len(runs) > 1 else 0.0:.4f}"},
    notes=lambda results: ["- Paper's other columns: " + "; ".join(
        f"{p}: SMAC {row['SMAC']}, TPE {row['TPE']}" for p, row in PAPER.items()) + ".",
        "- Where DNGO's Hartmann6 runs stall: section `dngo_boundary_hartmann6` (its suggestions on the box's faces)."])


def stored() -> dict:
    """The runs as ``{problem: {method: {seed: record}}}``."""
    view = {}
    for key, runs in _common.read_json(EXPERIMENT.results_file, {}).items():
        problem, method, _ = key.split("/")  # all at BUDGET evaluations
        view.setdefault(problem, {})[method] = runs
    return view


def report() -> dict:
    results = stored()  # every stored method has a row, those no longer declared too
    arms = dict.fromkeys([*METHODS, *sorted({m for cell in results.values() for m in cell})], {})
    return {EXPERIMENT.name: driver.render(dataclasses.replace(EXPERIMENT, arms=arms), results)}


def claims() -> list[dict]:
    """The paper's DNGO and GP rows: reproduced when jbo's mean best value is at most the paper's mean plus its
    standard deviation plus 1 % of |f*|."""
    rows, results = [], stored()
    for problem, paper in PAPER.items():
        for method in ("dngo", "gp"):
            runs, optimum = results.get(problem, {}).get(method), EXPERIMENT.problems[problem].build()[2]
            found = paper[method], "–", "not run"
            if runs:
                best = driver.best_values(runs)
                mean, std = (float(v.replace("−", "-")) for v in paper[method].split(" ± "))
                verdict = "yes" if best.mean() <= mean + std + 0.01 * abs(optimum) else "no"
                figure = f"{best.mean():.4f} ± {best.std(ddof=1):.4f} ({len(best)} seeds)"
                found = f"{paper[method]} (10 runs)", figure, verdict
            rows.append(_common.claim("Snoek et al. 2015, Table 1", f"{problem}, {method.upper()} best value at"
                                      f" {BUDGET} evaluations", *found, EXPERIMENT.name))
    return rows


def convergence_figures(experiment: driver.Experiment, results: dict, title: str | None = None) -> None:
    """A convergence figure per problem (simple regret, mean ± standard error): ``<figures>/<name>_<problem>.png``."""
    from jbo.plotting import plot_convergence

    os.makedirs(_common.FIGURES, exist_ok=True)
    for problem, arms in results.items():
        curves = {arm: [r["values"] for r in runs.values()] for arm, runs in arms.items() if runs}
        plot_convergence(curves, optimum=experiment.problems[problem].build()[2],
                         title=f"{problem}: {title or ' vs '.join(sorted(curves))}",
                         path=os.path.join(_common.FIGURES, f"{experiment.name}_{problem}.png"))


def figures() -> None:
    convergence_figures(EXPERIMENT, stored())


def main(argv=None):
    parser = argparse.ArgumentParser(description=EXPERIMENT.title)
    parser.add_argument("--seeds", type=int, default=EXPERIMENT.seeds)
    parser.add_argument("--problems", nargs="+", default=list(PAPER), choices=list(PAPER))
    parser.add_argument("--methods", nargs="+", default=list(EXPERIMENT.default_arms), choices=list(METHODS))
    _common.add_chunk_argument(parser)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    for problem in args.problems:  # driver.run, stored under "problem/method/budget"
        fn, space, _ = EXPERIMENT.problems[problem].build()
        for seeds, names in _common.missing_seeds(stored(), problem, args.methods, range(args.seeds)).items():
            arms = {m: METHODS[m] for m in names}
            for method, part, values, call in _common.run_arms(fn, space, BUDGET, seeds, arms, args.chunk):
                _common.merge_results(EXPERIMENT.results_file, [([f"{problem}/{method}/{BUDGET}", s], r) for s, r
                                                                in _common.seed_records(part, values, call).items()])
    _common.record_provenance(EXPERIMENT.name)
    _common.regenerate()


if __name__ == "__main__":
    main()
