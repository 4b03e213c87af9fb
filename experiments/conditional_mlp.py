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

Runs go to a resumable JSON (``experiments/results/conditional_mlp.json``; finished
(data set, method, seed) triples are skipped), a figure (``experiments/figures/conditional_mlp_rank.png``)
and a BENCHMARKS.md section.

    python experiments/conditional_mlp.py [--seeds 5] [--budget 85] [--datasets ...] [--methods ...]
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


def run_key(problem: str, dataset: str, method: str, budget: int, inference: str) -> str:
    """Results are grouped by (problem, data set, method, budget, inference); seeds are the inner keys."""
    return f"{problem}/{dataset}/{method}/{budget}/{inference}"


def run_one(problem, method: str, seed: int, budget: int, inference: str) -> dict:
    """One ``jbo.minimize`` run on a ConditionalProblem; ``{"values", "seconds"}``."""
    import jbo

    space = problem.space()
    start = time.perf_counter()
    result = jbo.minimize(problem.evaluate, space, budget=budget, model=method, inference=inference, seed=seed,
                          n_init=len(space.leaves()))
    return {"values": [float(v) for v in result.values], "seconds": time.perf_counter() - start}


def best_curves(results: dict, args, methods, datasets):
    """``(n_datasets, n_methods, n_seeds, T)`` best error so far, over the seeds every method has.

    Returns ``(curves, datasets kept, seeds per data set)``; a data set lacking a method is dropped.
    """
    import numpy as np

    from jbo.metrics import best_so_far

    rows, kept, n_seeds = [], [], []
    for dataset in datasets:
        runs = [results.get(run_key(args.problem, dataset, m, args.budget, args.inference), {}) for m in methods]
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


def write_report(results: dict, args, methods) -> None:
    """Average-rank figure and the BENCHMARKS.md section."""
    import numpy as np

    from jbo.metrics import mean_and_stderr, ranks_over_time

    curves, datasets, n_seeds = best_curves(results, args, methods, DATASETS)
    lines = ["## Conditional MLP tuning: average rank (Jenatton et al. 2017, Fig. 4)", "", _common.header()]
    if curves is None:
        _common.update_section("conditional_mlp", "\n".join(lines + ["No complete results yet."]))
        return
    steps = curves.shape[-1]
    per_dataset = ranks_over_time(curves.mean(axis=2), average=False)  # (n_datasets, n_methods, T)
    pairs = np.moveaxis(curves, 2, 1).reshape(-1, len(methods), steps)  # (n_datasets * n_seeds, n_methods, T)
    pair_rank = ranks_over_time(pairs)
    figure = os.path.join("experiments", "figures", "conditional_mlp_rank.png")
    plot_bands({m: per_dataset[:, i] for i, m in enumerate(methods)}, os.path.join(_common.ROOT, figure),
               "average rank over data sets (lower is better)", f"{args.problem}: {', '.join(datasets)}")
    columns = [t for t in REPORT_AT if t < steps] + [steps]
    seeds = min(n_seeds)
    few = [f"{seeds} seed(s) per data set (paper: {PAPER_SEEDS} replications)"] if seeds < PAPER_SEEDS else []
    few += [f"budget {steps} (paper: {PAPER_BUDGET})"] if steps < PAPER_BUDGET else []
    few += [f"{len(datasets)} scikit-learn data sets (paper: 45 LIBSVM data sets)"]
    lines += [f"`{args.problem}`, hyperparameters by `{args.inference}`, one initial point per path (5). Fewer runs than"
              f" the paper: {'; '.join(few)}. Rank of the mean best error per data set, averaged over data sets"
              f" (± one standard error over data sets); in brackets the mean rank over (data set, seed) pairs."
              f" s / run: mean wall time of one run (the persistent compile cache is on).", "",
              "| method | " + " | ".join(f"rank at {t}" for t in columns) + " | s / run |",
              "|---|" + "---|" * (len(columns) + 1)]
    for i, method in enumerate(methods):
        cells = []
        for t in columns:
            mean, se = mean_and_stderr(per_dataset[:, i, t - 1])
            cells.append(f"{mean:.2f} ± {se:.2f} ({pair_rank[i, t - 1]:.2f})")
        seconds = np.mean([r["seconds"] for d in datasets
                           for r in results[run_key(args.problem, d, method, args.budget, args.inference)].values()])
        lines.append(f"| {method} | " + " | ".join(cells) + f" | {seconds:.0f} |")
    lines += ["", f"Final best validation error (mean ± standard error over seeds) at evaluation {steps}:", "",
              "| data set | seeds | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    for d, dataset in enumerate(datasets):
        cells = ["%.4f ± %.4f" % mean_and_stderr(curves[d, i, :, -1]) for i in range(len(methods))]
        lines.append(f"| {dataset} | {curves.shape[2]} | " + " | ".join(cells) + " |")
    lines += ["", f"Figure: `{figure}`.", "",
              "Paper (Fig. 4, bottom, qualitative): tree has the best average rank, SMAC catches up after about 75"
              " iterations, gp-baseline is poor; arc between."]
    _common.update_section("conditional_mlp", "\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=PAPER_BUDGET, help="evaluations per run, initial design included")
    parser.add_argument("--problem", default="mlp", choices=["mlp", "mlp_fast"])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS), choices=METHODS)
    parser.add_argument("--inference", default="slice", choices=["slice", "map", "nuts"])
    parser.add_argument("--report-only", action="store_true", help="rewrite the figure and table from the saved JSON")
    args = parser.parse_args(argv)
    _common.setup()
    import numpy as np

    from jbo.benchmarks import get_problem

    results = load_results(RESULTS_FILE)
    methods = available_methods(args.methods)
    if not args.report_only:
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
    write_report(results, args, methods)


if __name__ == "__main__":
    main()
