"""DNGO's Table 1 (Snoek et al. 2015): Branin and Hartmann6, 200 evaluations, GP vs DNGO vs random search, the GP
and DNGO in the paper's setting (:data:`_common.PAPER_GP`, :data:`_common.PAPER_DNGO`). Also the DNGO scripts' helpers.

    python experiments/dngo_table1.py [--seeds 30] [--problems branin hartmann6] [--methods gp dngo random]
"""

import argparse
import dataclasses
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import driver  # noqa: E402


class FirstRuns(driver.Experiment):
    """An experiment whose first runs are stored under ``"problem/method/budget"`` keys, new runs the driver's way."""

    def results(self) -> dict:
        view = {}
        for key, value in super().results().items():
            problem, *first = key.split("/")  # a first run's key: problem, method, budget
            for method, runs in ({first[0]: value} if first else value).items():
                view.setdefault(problem, {}).setdefault(method, {}).update(runs)
        return view


BUDGET = 200
PAPER = {  # Snoek et al. 2015, Table 1: mean ± std of the best value over 10 runs
    "branin": {"SMAC": "0.655 ± 0.27", "TPE": "0.526 ± 0.13", "gp": "0.398 ± 0.00", "dngo": "0.398 ± 0.00"},
    "hartmann6": {"SMAC": "−2.977 ± 0.11", "TPE": "−2.823 ± 0.18", "gp": "−3.3166 ± 0.02", "dngo": "−3.319 ± 0.00"}}
METHODS = {"gp": dict(model="gp", **_common.PAPER_GP), "dngo": dict(model="dngo", **_common.PAPER_DNGO),
           "random": dict(model="random")}
EXPERIMENT = FirstRuns(
    name="dngo_table1", title="DNGO Table 1: Branin and Hartmann6 (Snoek et al. 2015)",
    problems={p: driver.Problem(p, budget=BUDGET) for p in PAPER}, arms=METHODS, seeds=30,
    about="Best value found; `std` over seeds, as the paper reports; paper: Spearmint's GP and DNGO over 10 runs."
          " `ask-tell` rows ran `jbo.minimize` seed by seed, before the compiled path. The `ensemble` and"
          " `-1000steps` rows are history (runners retired; the command above ran `ensemble` at commit 0f47848);"
          " so are `dngo, 2026-11-26`, Hartmann6's first 10 DNGO runs (each seed's initial design a scrambled Sobol set"
          " of its own; today's DNGO started from those 10 designs is trapped on 2 of them, as then), and `dngo, shared"
          " design`, 30 runs of the code of 87bfd7b–72d0003, whose designs were one scrambled set shifted per seed.",
    paper={(p, m): row[m] for p, row in PAPER.items() for m in ("gp", "dngo")},
    columns={"std": lambda runs, _: f"{driver.best_values(runs).std(ddof=1) if len(runs) > 1 else 0.0:.4f}"},
    notes=lambda results: ["- Paper's other columns: " + "; ".join(
        f"{p}: SMAC {row['SMAC']}, TPE {row['TPE']}" for p, row in PAPER.items()) + ".",
        *first_runs_note(results.get("hartmann6", {})),
        "- Where DNGO's Hartmann6 runs stall: section `dngo_boundary_hartmann6` (its suggestions on the box's faces)."])


def first_runs_note(cell: dict) -> list[str]:
    """How likely the first 10 DNGO runs' trapped count is at the rate today's DNGO is trapped (Hartmann6)."""
    from hartmann6_traps import TRAP, pass_probability

    first, today = cell.get("dngo, 2026-11-26"), cell.get("dngo")
    if not first or not today:
        return []
    k_first, k_today = (int(sum(b > TRAP for b in driver.best_values(runs))) for runs in (first, today))
    n_first, n_today = len(first), len(today)
    chance = pass_probability(k_today / n_today, n_first, k_first)
    return [f"- `dngo, 2026-11-26` has {k_first} of {n_first} runs trapped; at today's rate ({k_today} of {n_today})"
            f" {n_first} runs have at most {k_first} trapped with probability {chance:.2f}."]


# --------------------------------------------------------------------------------------------------- shared helpers
def command_line(experiment: driver.Experiment, argv=None, peers=()):
    """:func:`driver.main`'s options, for a script that runs ``experiment`` itself (``peers``: methods run outside
    ``jbo.study``); ``None`` once ``--report-only`` is done."""
    parser = argparse.ArgumentParser(description=experiment.title)
    parser.add_argument("--seeds", type=int, default=experiment.seeds)
    parser.add_argument("--problems", nargs="+", default=list(experiment.problems), choices=list(experiment.problems))
    parser.add_argument("--arms", "--methods", dest="arms", nargs="+", choices=[*experiment.arms, *peers],
                        default=[*(experiment.default_arms or experiment.arms), *peers])
    driver.add_store_argument(parser)
    _common.add_chunk_argument(parser)
    _common.add_output_arguments(parser)
    return _common.start(parser, argv)


def paired(cell: dict, arms, budget: int) -> list[dict]:
    """Each arm's runs ``{seed: record}`` of a problem on the seeds that all ``arms`` ran to ``budget``."""
    runs = [{s: r for s, r in cell.get(arm, {}).items() if len(r["values"]) == budget} for arm in arms]
    seeds = sorted(set.intersection(*map(set, runs)), key=int)
    return [{s: r[s] for s in seeds} for r in runs]


def verdict(held: list[bool]) -> str:
    """``yes`` when every check holds, ``partly`` some, ``no`` none, ``not run`` without checks."""
    return "not run" if not held else "yes" if all(held) else "partly" if any(held) else "no"


def convergence_figures(experiment: driver.Experiment, results: dict, title: str | None = None) -> None:
    """A convergence figure per problem (simple regret, mean ± standard error): ``<figures>/<name>_<problem>.png``."""
    from jbo.plotting import plot_convergence

    for problem, arms in results.items():
        curves = {arm: [r["values"] for r in runs.values()] for arm, runs in arms.items() if runs}
        plot_convergence(curves, optimum=experiment.problems[problem].build()[2],
                         title=f"{problem}: {title or ' vs '.join(sorted(curves))}",
                         path=os.path.join(_common.FIGURES, f"{experiment.name}_{problem}.png"))


# --------------------------------------------------------------------------------------------------- Table 1
def report() -> dict:
    results = EXPERIMENT.results()  # every stored method has a row, the retired ones too
    arms = dict.fromkeys([*METHODS, *sorted({m for cell in results.values() for m in cell})], {})
    return {EXPERIMENT.name: driver.render(dataclasses.replace(EXPERIMENT, arms=arms), results)}


def claims() -> list[dict]:
    """The paper's DNGO and GP rows: reproduced when jbo's mean best value is at most the paper's mean plus its
    standard deviation plus 1 % of |f*|."""
    rows, results = [], EXPERIMENT.results()
    for problem, paper in PAPER.items():
        optimum = EXPERIMENT.problems[problem].build()[2]
        for method in ("dngo", "gp"):
            runs = results.get(problem, {}).get(method)
            found = paper[method], "–", "not run"
            if runs:
                best = driver.best_values(runs)
                mean, std = (float(v.replace("−", "-")) for v in paper[method].split(" ± "))
                held = best.mean() <= mean + std + 0.01 * abs(optimum)
                figure = f"{best.mean():.4f} ± {best.std(ddof=1):.4f} ({len(best)} seeds)"
                if problem == "hartmann6":
                    figure += trapped(best)
                found = f"{paper[method]} (10 runs)", figure, "yes" if held else "no"
            what = f"{problem}, {method.upper()} best value at {BUDGET} evaluations"
            rows.append(_common.claim("Snoek et al. 2015, Table 1", what, *found, EXPERIMENT.name))
    return rows


def trapped(best) -> str:
    """Hartmann6: the runs that end outside the global minimum's basin (best above ``hartmann6_traps.TRAP``) and the
    chance, at that rate (95 % interval), that 10 runs all reach it, as the paper's 10 runs did."""
    from hartmann6_traps import TRAP, wilson

    k, n = int(sum(b > TRAP for b in best)), len(best)
    low, high = wilson(k, n)
    return (f"; {k} of {n} trapped: 10 runs all reach the basin with probability {(1 - k / n) ** 10:.2g}"
            f" ({(1 - high) ** 10:.2g}–{(1 - low) ** 10:.2g})")


def figures() -> None:
    convergence_figures(EXPERIMENT, EXPERIMENT.results())


if __name__ == "__main__":
    driver.main(EXPERIMENT)
