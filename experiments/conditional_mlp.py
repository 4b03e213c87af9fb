"""Jenatton et al. (2017), Fig. 4 (and Swersky et al. 2014, Sec. 3.2): BO of an MLP's conditional space, average rank.

Methods: ``arc``, ``tree``, ``gp`` (structure-blind, inactive columns filled randomly: the paper's
gp-baseline) and ``random`` by default; ``independent`` and ``marginal`` on request. Models not
registered in ``jbo.models.NAMES`` are skipped with a message. The problem is jbo's MLP tuning problem
(``jbo.benchmarks.mlp``: 0-4 hidden layers, the shared topology of the paper's Fig. 3, bottom) on
scikit-learn's shipped data sets (``breast_cancer``, ``wine``, ``iris``, ``digits``) instead of the
paper's 45 LIBSVM data sets; each data set's split and network seed are fixed (``seed=0`` of the
problem), and the BO seed varies.

Protocol as in the paper: 85 iterations (evaluations, the initial design included), initialised with
one random point per conditional path (5 points, the same for every model-based method of a seed).
Ranking as in the paper: the best error so far is averaged over seeds per data set, the methods are
ranked per data set at every iteration (1 = best, ties share the mean rank;
``jbo.metrics.ranks_over_time``) and the ranks are averaged over data sets; the band is one standard
error over data sets (the paper draws two). With 4 data sets the rank curves are coarse; the table
also gives the mean rank over (data set, seed) pairs and the final errors.

Each run is one ``jbo.minimize`` (the MLP objective trains scikit-learn networks on the host, so it cannot be
compiled into a ``jbo.study``). Runs go to a resumable JSON (``experiments/results/conditional_mlp.json``;
finished (data set, method, seed) triples are skipped); the run's provenance is recorded and BENCHMARKS.md
regenerated from the stored results (``report()``: the ``conditional_mlp`` section and, when drawn,
``experiments/figures/conditional_mlp_rank.png``; ``claims()``: its summary row). ``--report-only`` only
regenerates.

    python experiments/conditional_mlp.py [--seeds 5] [--budget 85] [--datasets ...] [--methods ...]
        [--report-only] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from tree_synthetic import available_methods, load_results, plot_bands  # noqa: E402

DATASETS = ("breast_cancer", "wine", "iris", "digits")
METHODS = ("tree", "arc", "gp", "random", "independent", "marginal")
DEFAULT_METHODS = ("tree", "arc", "gp", "random")
PAPER_BUDGET = 85
PAPER_SEEDS = 25
RESULTS_FILE = "conditional_mlp.json"
REPORT_AT = (10, 25, 50, 85)
SECTION = "conditional_mlp"


def run_key(problem: str, dataset: str, method: str, budget: int, inference: str) -> str:
    """Results are grouped by (problem, data set, method, budget, inference); seeds are the inner keys."""
    return f"{problem}/{dataset}/{method}/{budget}/{inference}"


def run_one(problem, method: str, seed: int, budget: int, inference: str) -> dict:
    """One ``jbo.minimize`` run on a ConditionalProblem; ``{"values", "seconds"}``."""
    import jbo

    space = problem.space()
    start = time.perf_counter()
    options = {} if method == "random" else {"inference": inference}  # random search takes no inference
    if method == "gp":
        options.update(_common.PAPER_GP)
    result = jbo.minimize(problem.evaluate, space, budget=budget, model=method, seed=seed,
                          n_init=len(space.leaves()), **options)
    return {"values": [float(v) for v in result.values], "seconds": time.perf_counter() - start}


def setting_of(results: dict):
    """``(problem, budget, inference)`` of the report: the paper's problem (``mlp``) at the largest stored budget
    when there is one, else the stored setting with the largest budget (then the most runs); ``None`` when
    nothing is stored."""
    runs = {}
    for key, seeds in results.items():
        problem, _, _, budget, inference = key.split("/")
        runs[problem, int(budget), inference] = runs.get((problem, int(budget), inference), 0) + len(seeds)
    return max(runs, key=lambda g: (g[0] == "mlp", g[1], runs[g])) if runs else None


def methods_of(results: dict, setting) -> list[str]:
    """The methods stored at ``setting`` on every data set that has runs there, in :data:`METHODS`' order."""
    problem, budget, inference = setting
    by_dataset = {}
    for dataset in DATASETS:
        have = {m for m in METHODS if results.get(run_key(problem, dataset, m, budget, inference))}
        if have:
            by_dataset[dataset] = have
    common = set.intersection(*by_dataset.values()) if by_dataset else set()
    return [m for m in METHODS if m in common]


def best_curves(results: dict, setting, methods, datasets):
    """``(n_datasets, n_methods, n_seeds, T)`` best error so far, over the seeds every method has.

    Returns ``(curves, datasets kept, seeds per data set)``; a data set lacking a method is dropped.
    """
    import numpy as np

    from jbo.metrics import best_so_far

    problem, budget, inference = setting
    rows, kept, n_seeds = [], [], []
    for dataset in datasets:
        runs = [results.get(run_key(problem, dataset, m, budget, inference), {}) for m in methods]
        seeds = sorted(set.intersection(*(set(r) for r in runs)), key=int) if runs else []
        if not seeds:
            continue
        length = min(len(r[s]["values"]) for r in runs for s in seeds)
        rows.append([[best_so_far(r[s]["values"][:length]) for s in seeds] for r in runs])
        kept.append(dataset)
        n_seeds.append(len(seeds))
    if not rows:
        return None, [], []
    length = min(np.asarray(r).shape[-1] for r in rows)
    seeds = min(n_seeds)
    return np.array([np.asarray(r)[:, :seeds, :length] for r in rows]), kept, n_seeds


def paper_scale(setting, steps: int) -> bool:
    """Whether a setting tests the paper's claim: the full MLP problem (``mlp``) at the paper's 85 evaluations."""
    return setting[0] == "mlp" and steps >= PAPER_BUDGET


def ranks(results: dict):
    """``(setting, methods, curves, datasets, n_seeds, per-data-set ranks (n_datasets, n_methods, T))`` of the
    stored runs, or ``None``."""
    from jbo.metrics import ranks_over_time

    setting = setting_of(results)
    if setting is None:
        return None
    methods = methods_of(results, setting)
    curves, datasets, n_seeds = best_curves(results, setting, methods, DATASETS)
    if curves is None:
        return None
    return setting, methods, curves, datasets, n_seeds, ranks_over_time(curves.mean(axis=2), average=False)


def write_report(results: dict) -> None:
    """Average-rank figure and the BENCHMARKS.md section, from the stored runs."""
    import numpy as np

    from jbo.metrics import mean_and_stderr, ranks_over_time

    lines = ["## Conditional MLP tuning: average rank (Jenatton et al. 2017, Fig. 4)", "", _common.header(SECTION)]
    ranked = ranks(results)
    if ranked is None:
        _common.update_section(SECTION, "\n".join(lines + ["No complete results yet."]))
        return
    (problem, budget, inference), methods, curves, datasets, n_seeds, per_dataset = ranked
    steps = curves.shape[-1]
    pairs = np.moveaxis(curves, 2, 1).reshape(-1, len(methods), steps)  # (n_datasets * n_seeds, n_methods, T)
    pair_rank = ranks_over_time(pairs)
    path = os.path.join(_common.FIGURES, "conditional_mlp_rank.png")
    if _common.PLOTS:
        plot_bands({m: per_dataset[:, i] for i, m in enumerate(methods)}, path,
                   "average rank over data sets (lower is better)", f"{problem}: {', '.join(datasets)}")
    columns = [t for t in REPORT_AT if t < steps] + [steps]
    seeds = min(n_seeds)
    few = [f"{seeds} seed(s) per data set (paper: {PAPER_SEEDS} replications)"] if seeds < PAPER_SEEDS else []
    few += [f"budget {steps} (paper: {PAPER_BUDGET})"] if steps < PAPER_BUDGET else []
    few += [f"{len(datasets)} scikit-learn data sets (paper: 45 LIBSVM data sets)"]
    lines += [f"`{problem}`, hyperparameters by `{inference}`, one initial point per path (5). Fewer runs than"
              f" the paper: {'; '.join(few)}. Rank of the mean best error per data set, averaged over data sets"
              f" (± one standard error over data sets); in brackets the mean rank over (data set, seed) pairs."
              f" s / run: mean wall time of one `jbo.minimize` run (the persistent compile cache is on).", "",
              "| method | " + " | ".join(f"rank at {t}" for t in columns) + " | s / run |",
              "|---|" + "---|" * (len(columns) + 1)]
    for i, method in enumerate(methods):
        cells = []
        for t in columns:
            mean, se = mean_and_stderr(per_dataset[:, i, t - 1])
            cells.append(f"{mean:.2f} ± {se:.2f} ({pair_rank[i, t - 1]:.2f})")
        seconds = np.mean([r["seconds"] for d in datasets
                           for r in results[run_key(problem, d, method, budget, inference)].values()])
        lines.append(f"| {method} | " + " | ".join(cells) + f" | {seconds:.0f} |")
    lines += ["", f"Final best validation error (mean ± standard error over seeds) at evaluation {steps}:", "",
              "| data set | seeds | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    for d, dataset in enumerate(datasets):
        cells = ["%.4f ± %.4f" % mean_and_stderr(curves[d, i, :, -1]) for i in range(len(methods))]
        lines.append(f"| {dataset} | {curves.shape[2]} | " + " | ".join(cells) + " |")
    tied = [dataset for d, dataset in enumerate(datasets) if np.ptp(curves[d, :, :, -1].mean(axis=1)) == 0]
    if tied and len(methods) > 1:
        rest = [d for d in datasets if d not in tied]
        lines += ["", f"Every method ends at the same mean error on {', '.join(tied)}"
                  + (f": only {', '.join(rest)} separate{'s' * (len(rest) == 1)} them." if rest else ".")]
    lines += ["", "Paper (Fig. 4, bottom, qualitative): tree has the best average rank, SMAC catches up after about 75"
              " iterations, gp-baseline is poor; arc between. Summary verdict: only runs of the full `mlp` problem at"
              f" {PAPER_BUDGET} evaluations test it (tree's average rank there the lowest: yes; tied lowest: partly);"
              " smaller runs are reported as not run.",
              "", f"Figure: `{_common.display_path(path)}`."]
    _common.update_section(SECTION, "\n".join(lines))


def report() -> None:
    """Rewrite the ``conditional_mlp`` section from the stored results (no runs)."""
    write_report(load_results(RESULTS_FILE))


def claims() -> list[dict]:
    """Jenatton et al.'s Fig. 4: tree has the best average rank. Tested only by runs of the full ``mlp`` problem
    at the paper's 85 evaluations: ``yes`` when tree's average rank over data sets at the last evaluation is the
    lowest of the methods run, ``partly`` when tied for the lowest, ``no`` otherwise; smaller runs leave it
    ``not run`` (their ranks are quoted)."""
    what = f"conditional MLP tuning: tree has the best average rank over data sets at {PAPER_BUDGET} evaluations"
    paper = "qualitative: tree best average rank (45 LIBSVM data sets, 25 replications); gp-baseline poor"
    ranked = ranks(load_results(RESULTS_FILE))
    if ranked is None:
        return [_common.claim("Jenatton et al. 2017, Fig. 4", what, paper, "–", "not run", SECTION)]
    setting, methods, curves, datasets, n_seeds, per_dataset = ranked
    steps = curves.shape[-1]
    final = per_dataset[:, :, -1].mean(axis=0)
    ranks_text = ", ".join(f"{m} {r:.2f}" for m, r in zip(methods, final))
    scope = f"{setting[0]}, {len(datasets)} data sets × {min(n_seeds)} seeds, {steps} evaluations"
    if "tree" not in methods:
        verdict, figure = "not run", "–"
    elif not paper_scale(setting, steps):
        verdict, figure = "not run", f"a reduced run only ({scope}): average rank {ranks_text}"
    else:
        tree = final[methods.index("tree")]
        best = final.min()
        verdict = "no" if tree > best else "yes" if (final == best).sum() == 1 else "partly"
        figure = f"average rank {ranks_text} ({scope})"
    return [_common.claim("Jenatton et al. 2017, Fig. 4", what, paper, figure, verdict, SECTION)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=PAPER_BUDGET, help="evaluations per run, initial design included")
    parser.add_argument("--problem", default="mlp", choices=["mlp", "mlp_fast"])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS), choices=METHODS)
    parser.add_argument("--inference", default="slice", choices=["slice", "map", "nuts"])
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    import numpy as np

    from jbo.benchmarks import get_problem

    results = load_results(RESULTS_FILE)
    methods = available_methods(args.methods)
    ran = False
    for dataset in args.datasets:
        problem = get_problem(args.problem, dataset=dataset)
        for method in methods:
            key = run_key(args.problem, dataset, method, args.budget, args.inference)
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                if str(seed) in results.get(key, {}):
                    continue
                record = run_one(problem, method, seed, args.budget, args.inference)
                best = float(np.nanmin(record["values"]))
                print(f"{dataset} {method} seed {seed}: best {best:.4f} ({record['seconds']:.0f} s)", flush=True)
                results = _common.merge_result(os.path.join(_common.RESULTS, RESULTS_FILE), [key, str(seed)], record)
                ran = True
    if ran:
        _common.record_provenance(SECTION)
    _common.regenerate()


if __name__ == "__main__":
    main()
