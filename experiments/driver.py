"""The one driver of jbo's experiments: an experiment is a declaration (:class:`Experiment`: its problems, arms,
seeds and budgets, the paper's figures, how each claim is decided) that :func:`main` runs through
:func:`jbo.study` and :func:`report` renders.

Runs are stored per seed, ``results[problem][arm][str(seed)] = record`` (:func:`_common.seed_records`: the
objective's values in evaluation order, the call's wall and compile seconds, plus what
:attr:`Experiment.per_seed` adds), in ``experiments/results/<name>.json``. A rerun runs only the missing seeds,
the arms missing the same seeds as one study (arms that differ only in values share a compiled program).
Each study keeps its runs as they go in a store (``experiments/results/stores``; ``--no-store``: not), so that a
killed experiment continues where it stopped; once the study's records are in the results file its store is
removed. A script keeps only what is particular to it:

    EXPERIMENT = driver.Experiment(name="escape_ablation", title=..., problems={...}, arms={...})
    report, claims = driver.reporter(EXPERIMENT)
    if __name__ == "__main__":
        driver.main(EXPERIMENT)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Callable

import _common


@dataclasses.dataclass(frozen=True)
class Problem:
    """A benchmark of the registry (:func:`jbo.benchmarks.get_problem`) at a budget.

    Attributes:
      registry: the registry's name; dim: its dimension (``None``: the function's own); budget: evaluations,
        the initial design included; options: more keyword arguments of ``get_problem``; make: builds
        ``(objective, space, optimum)`` instead of the registry (a problem of the script's own).
    """

    registry: str = ""
    dim: int | None = None
    budget: int = 100
    options: dict = dataclasses.field(default_factory=dict)
    make: Callable | None = None

    def build(self):
        """``(objective, space, optimum)``: the JAX objective, its :class:`jbo.Space` and best value."""
        if self.make is not None:
            return self.make()
        from jbo.benchmarks import get_problem

        p = get_problem(self.registry, self.dim, **self.options)
        return p.evaluate, p.space(), p.optimum


@dataclasses.dataclass(frozen=True)
class Experiment:
    """A declaration of an experiment run as :func:`jbo.study` calls.

    Attributes:
      name: its section of BENCHMARKS.md and results file (``<name>.json``).
      title: the section's heading.
      problems: ``{name: Problem}``.
      arms: ``{name: options of jbo.minimize}`` (all else jbo's defaults).
      about: the section's first paragraph: what ran and how to read the table.
      seeds: how many seeds a run has by default (``0 .. seeds - 1``).
      default_arms: the arms run when none is named (``None``: all).
      paper: ``{(problem, arm): the paper's figure}``, shown in the table's last column.
      per_seed: ``(StudyResult, arm index, seed index) -> dict`` added to a seed's record (e.g. counts read
        from ``result.info``).
      columns: more table columns, ``{header: (runs, siblings) -> text}``: ``runs`` the row's records ``{seed:
        record}``, ``siblings`` every arm's records of the same problem and path ``{arm: {seed: record}}``.
      notes: ``(results) -> [lines]`` after the table (verdicts, figures).
      decide: ``(results) -> [claim dicts]`` (:func:`_common.claim`): the summary rows, decided from the data.
    """

    name: str
    title: str
    problems: dict
    arms: dict
    about: str = ""
    seeds: int = 10
    default_arms: tuple | None = None
    paper: dict = dataclasses.field(default_factory=dict)
    per_seed: Callable | None = None
    columns: dict = dataclasses.field(default_factory=dict)
    notes: Callable | None = None
    decide: Callable | None = None

    @property
    def results_file(self) -> str:
        return os.path.join(_common.RESULTS, f"{self.name}.json")

    def results(self) -> dict:
        return _common.read_json(self.results_file, {})


# --------------------------------------------------------------------------------------------------- running
def run(experiment: Experiment, problems, arms, seeds, chunk: int | None = None, store: bool = True) -> dict:
    """Every missing ``(problem, arm, seed)``, the arms that miss the same seeds in one study per problem (per
    ``chunk`` of seeds); each call's records are stored when it ends. With ``store``, the study keeps its runs in
    progress in a store (:func:`jbo.study`), which a rerun continues and which is removed once the study's records
    are merged. Returns the merged results."""
    import shutil

    import numpy as np

    results = experiment.results()
    for problem in problems:
        fn, space, _ = experiment.problems[problem].build()
        for missing, names in _common.missing_seeds(results, problem, arms, seeds).items():
            store_dir = os.path.join(_common.RESULTS, "stores", f"{experiment.name}_{problem}") if store else None
            for a, arm, part, values, call, result in _common.study_calls(
                    fn, space, experiment.problems[problem].budget, missing, {n: experiment.arms[n] for n in names},
                    chunk, store_dir):
                records = _common.seed_records(part, values, call)
                for s, seed in enumerate(part) if experiment.per_seed is not None else ():
                    records[str(seed)].update(experiment.per_seed(result, a, s))
                best = np.nanmin(np.asarray(values, float), axis=1)
                print(f"{problem} {arm} seeds {part}: best mean {best.mean():.5g} ({call['seconds']:.0f} s,"
                      f" compile {call['compile_seconds']:.0f} s)", flush=True)
                results = _common.merge_results(experiment.results_file,
                                                [([problem, arm, seed], r) for seed, r in records.items()])
            if store_dir is not None:  # every run it kept is in the results file now
                shutil.rmtree(store_dir, ignore_errors=True)
    return results


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """``--store`` (default) / ``--no-store``: :func:`run`'s ``store``."""
    parser.add_argument("--store", action=argparse.BooleanOptionalAction, default=True,
                        help="keep runs in progress in a store that a rerun continues (experiments/results/stores)")


def main(experiment: Experiment, argv=None) -> None:
    """The experiment's command line: run the missing seeds of the named problems and arms, record where they
    ran, regenerate BENCHMARKS.md (``--report-only``: only that)."""
    parser = argparse.ArgumentParser(description=experiment.title)
    parser.add_argument("--seeds", type=int, default=experiment.seeds)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--problems", nargs="+", default=list(experiment.problems), choices=list(experiment.problems))
    arms = list(experiment.default_arms or experiment.arms)
    parser.add_argument("--arms", "--variants", "--methods", dest="arms", nargs="+", default=arms,
                        choices=list(experiment.arms))
    add_store_argument(parser)
    _common.add_chunk_argument(parser)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    run(experiment, args.problems, args.arms, range(args.first_seed, args.first_seed + args.seeds), args.chunk,
        args.store)
    _common.record_provenance(experiment.name, accumulates=True)  # a grid grows run by run
    _common.regenerate()


# --------------------------------------------------------------------------------------------------- the report
def best_values(records: dict, seeds=None):
    """The best value of each stored run (``nan``-free), in seed order (only ``seeds`` when given)."""
    import numpy as np

    keys = sorted(records, key=int) if seeds is None else [str(s) for s in seeds]
    return np.array([np.nanmin(np.asarray(records[k]["values"], float)) for k in keys])


def table(experiment: Experiment, results: dict) -> list[str]:
    """One row per (problem, arm, path) of the stored runs: best value mean ± standard error and median, time per
    seed with compilation apart, the declared columns and the paper's figure."""
    import numpy as np

    extra = list(experiment.columns)
    paper = any(experiment.paper)
    lines = ["| problem (optimum) | evaluations | arm | path | seeds | best value (mean ± se) | median | s / seed"
             " | compile s |" + "".join(f" {c} |" for c in extra) + (" paper |" if paper else ""),
             "|---|---|---|---|---|---|---|---|---|" + "---|" * (len(extra) + paper)]
    for problem, declared in experiment.problems.items():
        optimum = None
        by_arm = {arm: _common.by_path(results.get(problem, {}).get(arm, {})) for arm in experiment.arms}
        for arm in experiment.arms:
            for path, runs in by_arm[arm].items():
                if optimum is None:
                    optimum = declared.build()[2]
                best = best_values(runs)
                mean, se = _common.mean_se(best)
                t = _common.timing(_common.calls_of(runs))
                cells = [f"{problem} ({optimum:.4g})", str(declared.budget), arm, path, str(len(best)),
                         f"{mean:.4g} ± {0.0 if len(best) < 2 else se:.2g}", f"{np.median(best):.4g}",
                         _common.seconds_text(t["per_seed"]), _common.compile_text(t)]
                siblings = {other: groups[path] for other, groups in by_arm.items() if path in groups}
                cells += [fn(runs, siblings) for fn in experiment.columns.values()]
                cells += [experiment.paper.get((problem, arm), "–")] if paper else []
                lines.append("| " + " | ".join(cells) + " |")
    return lines


def render(experiment: Experiment, results: dict) -> str:
    """The experiment's BENCHMARKS.md section: heading, provenance, what ran, the table, the notes."""
    lines = [f"## {experiment.title}", "", _common.header(experiment.name)]
    if experiment.about:
        lines += [experiment.about, ""]
    lines += table(experiment, results)
    if experiment.notes is not None:
        notes = experiment.notes(results)
        lines += [""] + notes if notes else []
    return "\n".join(lines)


def reporter(experiment: Experiment):
    """The ``report()`` and ``claims()`` of a script that declares ``experiment`` (what ``report.py`` calls)."""

    def report() -> dict:
        return {experiment.name: render(experiment, experiment.results())}

    def claims() -> list[dict]:
        return experiment.decide(experiment.results()) if experiment.decide is not None else []

    return report, claims
