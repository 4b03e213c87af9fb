"""Pethick (2018), ensembled DNGO: one network against five whose acquisitions are aggregated by the mean, median or
max (eq. 30), in his setting (:data:`PETHICK`, described in the section); simple and cumulative regret.

    python experiments/ensemble_dngo.py [--seeds 30] [--problems sinone2 ...] [--arms dngo ensemble-mean ...] [--no-store]
"""

import dataclasses
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import driver  # noqa: E402
from dngo_table1 import command_line, convergence_figures, paired, verdict  # noqa: E402

N_INIT = {"sinone2": 20, "sinone3": 20, "sinone4": 20, "hartmann6": 20, "rosenbrock8": 100}  # then 200 rounds
# Fresh weights every iteration, no quadratic prior mean (§5.2); UCB μ - κσ with his code's κ = 4 (ucb_beta = κ²)
PETHICK = dict(**_common.PAPER_DNGO, training="retrain-reset", quadratic_prior=False, acquisition="ucb", ucb_beta=16.0,
               inference="map", maximize={"num_steps": 100},
               network=dict(hidden=[50, 50, 50], activation="relu_tanh", optimizer="adam", learning_rate=0.01,
                            final_lr_fraction=1.0, weight_decay=1e-4, num_steps=1000, batch_size=0))
EXPERIMENT = driver.Experiment(
    name="ensemble_dngo", title="Ensembled DNGO (Pethick 2018): 1 vs 5 networks, aggregators mean / median / max",
    problems={"sinone2": driver.Problem("sinone", 2, 220), "sinone3": driver.Problem("sinone", 3, 220),
              "sinone4": driver.Problem("sinone", 4, 220), "hartmann6": driver.Problem("hartmann6", budget=220),
              "rosenbrock8": driver.Problem("rosenbrock", 8, 300)},
    arms={"dngo": dict(model="dngo", **PETHICK),
          **{f"ensemble-{a}": dict(model="ensemble", n_networks=5, aggregator=a, **PETHICK)
             for a in ("mean", "median", "max")}},
    seeds=30)


def final_regrets(runs: dict, optimum: float):
    """The final simple and cumulative regrets ``(r_T, R_T)`` of stored runs (cut to the shortest), one per seed."""
    import numpy as np

    from jbo import metrics

    values = np.array([r["values"][:min(len(r["values"]) for r in runs.values())] for r in runs.values()])
    return metrics.simple_regret(values, optimum)[:, -1], metrics.cumulative_regret(values, optimum)[:, -1]


def progress(runs: dict) -> str:
    """The median best value at half, three quarters and all of the shortest run's evaluations, and how many runs
    still improved (by more than 1e-3) in the last quarter: a slow search and a trapped one read differently."""
    import numpy as np

    n = min(len(r["values"]) for r in runs.values())
    best = np.array([np.fmin.accumulate(np.asarray(r["values"][:n], float)) for r in runs.values()])
    marks = [n // 2, 3 * n // 4, n]
    medians = " / ".join(f"{np.nanmedian(best[:, m - 1]):.3g}" for m in marks)
    late = int(np.sum(best[:, marks[1] - 1] - best[:, -1] > 1e-3))
    return f"{medians} ({late} of {len(best)})"


def _mean_std(x) -> str:
    import numpy as np

    return f"{np.mean(x):.3g} ± {np.std(x, ddof=1):.2g}" if len(x) > 1 else f"{np.mean(x):.3g} (1 seed)"


def experiment(problem: str) -> driver.Experiment:
    """The experiment on one problem: its initial design in the arms, its final regrets in the table's columns."""
    declared = EXPERIMENT.problems[problem]
    optimum = declared.build()[2]
    return dataclasses.replace(
        EXPERIMENT, problems={problem: declared},
        arms={a: {**o, "n_init": N_INIT[problem]} for a, o in EXPERIMENT.arms.items()},
        columns={"simple regret r_T": lambda runs, _: _mean_std(final_regrets(runs, optimum)[0]),
                 "cumulative regret R_T": lambda runs, _: _mean_std(final_regrets(runs, optimum)[1]),
                 "median best at T/2 / 3T/4 / T (runs improving after 3T/4)": lambda runs, _: progress(runs)})


def report() -> dict:
    import numpy as np

    results = EXPERIMENT.results()
    lines = [f"## {EXPERIMENT.title}", "", _common.header(EXPERIMENT.name),
             "Pethick's setting: fresh weights every iteration, no quadratic prior mean, UCB κ = 4, ReLU-ReLU-tanh"
             " 50-50-50 networks (Adam at 0.01, L2 1e-4, 1000 full-batch epochs), BLR α, β by MAP, the acquisition"
             " search pinned; budgets include the initial design (20 Sobol points, 100 for 8-d) and 200 rounds."
             " Regrets over all evaluations, mean ± std over seeds.",
             "Pethick shows these problems in figures only (Figs. 3, 4b, 6, 9): the summary counts his finding (the"
             " ensemble ahead) reproduced when the mean ensemble's mean r_T and R_T are both below one network's.", ""]
    for problem in (p for p in EXPERIMENT.problems if results.get(p)):
        lines += [f"### {problem} (Pethick: {N_INIT[problem]} initial points + 200 rounds)", "",
                  *driver.table(experiment(problem), {problem: results[problem]}), ""]
    behind = []
    for problem, declared in EXPERIMENT.problems.items():
        one, five = paired(results.get(problem, {}), ("dngo", "ensemble-mean"), declared.budget)
        if not one:
            continue
        optimum = declared.build()[2]
        if np.mean(final_regrets(five, optimum)[0]) > np.mean(final_regrets(one, optimum)[0]):
            _, max_runs = paired(results.get(problem, {}), ("dngo", "ensemble-max"), declared.budget)
            behind.append(f"{problem}: one network {progress(one)}, the ensemble {progress(five)}"
                          + (f", the max aggregator's {progress(max_runs)}" if max_runs else ""))
    if behind:
        lines.append("Where the mean ensemble ends behind one network, how the runs progress (median best at T/2 /"
                     " 3T/4 / T over the seeds both ran; runs still improving after 3T/4): " + "; ".join(behind)
                     + ". A run still improving at the end is slow, not trapped.")
    lines.append("Figures (`report.py --figures`): `experiments/figures/ensemble_dngo_<problem>.png`.")
    return {EXPERIMENT.name: "\n".join(lines)}


def claims() -> list[dict]:
    """Pethick's finding per problem, over the seeds both ran to his budget: ``yes`` when the 5-network ensemble
    (mean aggregator) has a lower mean final simple regret and mean cumulative regret than one network, ``partly``
    one of the two. His figures give no values."""
    import numpy as np

    results, rows = EXPERIMENT.results(), []
    for problem, declared in EXPERIMENT.problems.items():
        what = (f"{problem}: 5×DNGO (mean aggregator) ahead of one DNGO network: final simple regret r_T and"
                f" cumulative regret R_T at {declared.budget} evaluations")
        paper = f"ensemble ahead (Fig. {'3 / Fig. 6' if 'sinone' in problem else '4b / Fig. 9'}, figures only; 10 runs)"
        one, five = paired(results.get(problem, {}), ("dngo", "ensemble-mean"), declared.budget)
        if not one:
            rows.append(_common.claim("Pethick 2018", what, paper, "–", "not run", EXPERIMENT.name))
            continue
        (r1, c1), (r5, c5) = ([float(np.mean(x)) for x in final_regrets(runs, declared.build()[2])]
                              for runs in (one, five))
        figure = f"r_T {r5:.3g} vs DNGO {r1:.3g}; R_T {c5:.3g} vs {c1:.3g} ({len(one)} seeds)"
        rows.append(_common.claim("Pethick 2018", what, paper, figure, verdict([r5 < r1, c5 < c1]), EXPERIMENT.name))
    return rows


def figures() -> None:
    convergence_figures(EXPERIMENT, EXPERIMENT.results(), "UCB, retrain-reset, no quadratic prior")


def main(argv=None) -> None:
    """:func:`driver.main`, each problem's arms with its initial design (:func:`experiment`)."""
    args = command_line(EXPERIMENT, argv)
    if args is None:
        return
    for problem in args.problems:
        driver.run(experiment(problem), [problem], args.arms, range(args.seeds), args.chunk, args.store)
    _common.record_provenance(EXPERIMENT.name)
    _common.regenerate()


if __name__ == "__main__":
    main()
