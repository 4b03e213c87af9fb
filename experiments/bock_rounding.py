"""How far a relative 1e-15 perturbation of the targets moves BOCK's suggestions (issue #57 item 3).

Two ask/tell runs of one model on Styblinski-Tang-d (the same seed, ``n_init`` points of the initial
design) differ only in what they are told: the second run's every value times ``1 + 1e-15``. After the
design, each run's own suggestion is evaluated and told, for ``--steps`` model suggestions; a row keeps the
largest coordinate difference of the two runs' suggestions (in units of the box's width) at each step, and
the largest relative difference of the two fits' hyperparameter means. Rows go to
``experiments/results/bock_rounding.json``.

    python experiments/bock_rounding.py [--dims 20 100] [--steps 3] [--rows bock bock-w ...]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

RESULTS_FILE = "bock_rounding.json"
SECTION = "bock_rounding"
RELATIVE = 1e-15
BAR = 1e-8  # issue #57's bound on the first three model suggestions at d = 20
#: label -> (model, options): BOCK's variants, the GP for comparison, and BOCK with Adam's epsilon 1e-4 instead of
#: 1e-8, a 10x smaller Adam step or its step decaying to zero (``maximize={"schedule": "cosine"}``).
ROWS = {"bock": ("bock", {}), "bock (the paper's units)": ("bock", {"units": "objective"}),
        "bock-w": ("bock-w", {}), "bock-b": ("bock-b", {}), "gp": ("gp", {}),
        "bock, Adam eps 1e-4": ("bock", {"maximize": {"eps": 1e-4}}),
        "bock-w, Adam eps 1e-4": ("bock-w", {"maximize": {"eps": 1e-4}}),
        "bock-b, Adam eps 1e-4": ("bock-b", {"maximize": {"eps": 1e-4}}),
        "bock, Adam step 0.0005": ("bock", {"maximize": {"learning_rate": 0.0005}}),
        "bock, cosine Adam steps": ("bock", {"maximize": {"schedule": "cosine"}})}


def perturbed_runs(model: str, dim: int, steps: int, n_init: int, relative: float = RELATIVE, seed: int = 0,
                   **options) -> dict:
    """Two runs told values that differ by ``relative``: per model step, the largest difference of their
    suggestions (box-width units) and the largest relative difference of their hyperparameter means."""
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem

    problem = get_problem("styblinski_tang", dim)
    space = problem.space()
    width = np.array([space.params[n].high - space.params[n].low for n in space.names])
    runs = [jbo.Optimizer(space, model=model, seed=seed, n_init=n_init, **options) for _ in range(2)]
    moved, fit_moved = [], []
    for i in range(n_init + steps):
        configs = [run.ask() for run in runs]
        if i >= n_init:
            x = [np.array([c[n] for n in space.names], float) for c in configs]
            moved.append(float(np.max(np.abs(x[0] - x[1]) / width)))
            means = [np.array([np.mean(v) for k, v in sorted(run.last_info.items()) if k.startswith("hyperparameters")])
                     for run in runs]
            fit_moved.append(float(np.max(np.abs(means[0] - means[1]) / np.maximum(np.abs(means[0]), 1e-300))))
        for k, (run, config) in enumerate(zip(runs, configs)):
            run.tell(config, float(problem.evaluate(config)) * (1.0 + relative * k))
    return {"model": model, "options": options, "dim": dim, "n_init": n_init, "moved": moved, "fit_moved": fit_moved}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=list(ROWS))
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, cache=False)
    if args is None:
        return
    path = os.path.join(_common.RESULTS, RESULTS_FILE)
    for dim in args.dims:
        for label in args.rows:
            model, options = ROWS[label]
            row = perturbed_runs(model, dim, args.steps, n_init=dim // 5, **options)
            print(label, dim, row["moved"], row["fit_moved"], flush=True)
            _common.merge_result(path, [f"{label}/{dim}"], row)
    _common.record_provenance(SECTION, accumulates=True)
    _common.regenerate()


def report() -> None:
    rows = _common.load_results(RESULTS_FILE, {})
    lines = ["## BOCK's suggestions under a 1e-15 perturbation of the targets (bock_rounding)", ""]
    if not rows:
        _common.update_section(SECTION, "\n".join(lines + ["Not run."]))
        return
    dims = sorted({int(key.rsplit("/", 1)[1]) for key in rows})
    labels = list(dict.fromkeys(key.rsplit("/", 1)[0] for key in rows))
    searched = [label for label in labels if "maximize" in ROWS.get(label, ("", {}))[1]]
    lines.append(_common.header(SECTION).rstrip())
    for group in ([label for label in labels if label not in searched], searched):  # the models, then other searches
        if not group:
            continue
        lines += ["", "| row | " + " | ".join(f"d = {d}: moved at model steps 1, 2, ..." for d in dims) + " | fits moved |",
                  "|---|" + "---|" * (len(dims) + 1)]
        for label in group:
            cells = [", ".join(f"{m:.1e}" for m in rows[f"{label}/{d}"]["moved"]) if f"{label}/{d}" in rows else "–"
                     for d in dims]
            fit = max(max(rows[f"{label}/{d}"]["fit_moved"]) for d in dims if f"{label}/{d}" in rows)
            lines.append(f"| {label} | " + " | ".join(cells) + f" | {fit:.1e} |")
    lines += ["", "Two runs told values 1e-15 apart (relative; Styblinski-Tang-d, seed 0, d/5 design points): the "
              "largest coordinate difference of their suggestions (box widths) per model step, and of their fits' "
              "hyperparameter means (relative). The fits agree; the acquisition search's Adam steps amplify the "
              "difference: the 10x smaller step stays at rounding at d = 20 and 100 but finds a lower score (log-EI 0.27–0.29 "
              "below BOCK's step on Rosenbrock-20, N = 50 and 150, 8 random states each). Neither a decaying step (under the "
              "test suite's XLA flags, LLVM at -O0, the runs part by 2.5e-5 at d = 20's second model step) nor Adam's "
              "epsilon at 1e-4 (better for bock, worse for bock-w at d = 20) is a cure: the parting is chaotic, its "
              "size a matter of each run's trajectory."]
    _common.update_section(SECTION, "\n".join(lines))


def claims() -> list[dict]:
    rows = _common.load_results(RESULTS_FILE, {})
    out = []
    what = "BOCK's four models, d = 20: a relative 1e-15 perturbation of the targets moves the first three model suggestions"
    worst = {label: max(rows[f"{label}/20"]["moved"][:3]) for label in ("bock", "bock (the paper's units)", "bock-w", "bock-b")
             if f"{label}/20" in rows}
    if len(worst) < 4:
        out.append(_common.claim("jbo", what, f"≤ {BAR:g}", "–", "not run", SECTION))
    else:
        out.append(_common.claim("jbo", what, f"≤ {BAR:g}", ", ".join(f"{k} {v:.0e}" for k, v in worst.items()),
                                 "yes" if max(worst.values()) <= BAR else "no", SECTION))
    return out


if __name__ == "__main__":
    main()
