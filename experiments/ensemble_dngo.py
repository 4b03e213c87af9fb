"""Pethick (2018), ensembled DNGO: 1 vs 5 networks and the ensemble's aggregators, simple and cumulative regret.

Pethick's study (Pethick 2018, §3.2-3.6, §4.3-4.4, Figs. 3, 4, 6, 9): DNGO with one
network against an ensemble of five whose members' acquisitions are aggregated by the mean, the median or
the max (eq. 30), on SinOne embedded into 2, 3 and 4 dimensions, Hartmann6 and Rosenbrock 8-d. A
problem's methods run their missing seeds together in one ``jbo.study`` call (``--path compiled``, the
default: methods that differ only in values share a compiled program; ``--chunk N`` splits the seeds over
calls of N seeds); ``--path ask-tell`` runs one ``jbo.minimize`` per seed as before, timing every step.
All in Pethick's setting:

* training ``retrain-reset`` (fresh weights every iteration, his choice after §4.2), no quadratic prior
  mean (§5.2: "purposely left out");
* UCB, eq. 22 ``μ + κσ`` (a lower bound ``μ - κσ`` here, since jbo minimises). jbo's ``ucb_beta`` is
  **κ²** (``acquisition.upper_confidence_bound`` scores ``-(μ - √β σ)``). The paper gives no κ; his code
  (``src/acquisition_functions.py``, ``UCB.calc``: ``beta = 16; mean + sqrt(beta) * sqrt(var)``) uses κ = 4,
  so the default here is ``--kappa 4``, i.e. ``ucb_beta = 16``;
* the network of his final code (``src/models/neural_network.py``): 50-50-50, ReLU, ReLU, tanh basis
  (jbo's ``activation="relu_tanh"``), Adam at a constant rate 0.01, L2 1e-4, 1000 full-batch epochs
  (his batch size 1000 exceeds every N here) = ``--network-steps 1000``;
* the BLR hyperparameters α, β by MAP (``--inference map``): the runs his figures compare carry no
  "MCMC" suffix (§4's naming convention), i.e. point estimates (jbo's priors: α ~ lognormal(0, 1) as his
  eq. 32, the noise 1/β ~ horseshoe(0.1));
* the acquisition maximised from the best of 1024 Sobol + 256 local anchors by 100 projected Adam steps
  (pinned: jbo's DNGO default is now the anchors alone);
* initial design: 20 points (``BO(n_init=20)`` in his ``src/bo.py``), 100 for the 8-d problem (§4: "100
  random samples" for 8-d and above); jbo draws them from a scrambled Sobol sequence, he drew them
  uniformly at random. Then 200 model-based rounds (``run.py -k 200``, the "200 observations" of his
  Figs. 5 and 8), so Pethick's budget is ``n_init + 200`` evaluations; ``--budget`` (total evaluations,
  initial design included) runs fewer, and the table says so.

The embeddings use the paper's definition (the extra coordinates have no effect: ``jbo.benchmarks``'
``sinone`` at ``dim`` 2, 3, 4 with zero weights); his code could also add a linear term.

Regrets (Pethick eqs. 33-34, minimisation): simple regret ``r_t = min_{s<=t} y_s - f*`` and cumulative
regret ``R_T = sum_t (y_t - f*)``, both over all evaluations including the initial design
(:func:`jbo.metrics.simple_regret`, :func:`jbo.metrics.cumulative_regret`). Results go to a resumable JSON
(finished (problem, method, seed) triples are skipped, so a killed run continues; all seeds of a call are
stored at once), from which the BENCHMARKS.md section (a row per method and path), one figure per problem
(``experiments/figures/ensemble_dngo_<problem>.png``) and the summary's rows (``claims()``: is the ensemble
ahead of one network, as Pethick's figures show?) are made; ``--results-dir DIR`` puts them all under DIR.
``--cpu-devices`` (the ensemble's members trained split over CPU devices, on the host) needs ``--path
ask-tell``: one compiled program runs on one device, and the compiled path refuses it.

    python experiments/ensemble_dngo.py [--seeds 30] [--rounds R | --budget N] [--problems sinone2 hartmann6 ...]
        [--methods dngo ensemble-mean ...] [--network-steps 1000] [--path compiled|ask-tell [--cpu-devices 2]]
        [--chunk N] [--results-dir DIR] [--report-only]
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NamedTuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

SECTION = "ensemble_dngo"
PAPER = "Pethick 2018"
PAPER_ROUNDS = 200  # model-based rounds after the initial design (Pethick's run.py -k 200)
PAPER_KAPPA = 4.0  # his UCB: beta = 16, mean + sqrt(beta) * std
PAPER_STEPS = 1000  # epochs, full batch


class Benchmark(NamedTuple):
    """A problem of the study: registry name and dimension, Pethick's initial design, his finding."""

    name: str
    dim: int | None
    n_init: int
    finding: str

    @property
    def paper_budget(self) -> int:
        return self.n_init + PAPER_ROUNDS


_EMBEDDED = ("Fig. 3 / Fig. 6 (figures only): the 5-network ensemble beats DNGO, and DNGO the GP, on"
             " average on every SinOne embedding")
PROBLEMS = {
    "sinone2": Benchmark("sinone", 2, 20, _EMBEDDED),
    "sinone3": Benchmark("sinone", 3, 20, _EMBEDDED),
    "sinone4": Benchmark("sinone", 4, 20, _EMBEDDED),
    "hartmann6": Benchmark("hartmann6", None, 20, "Fig. 4b / Fig. 9 (figures only): the ensemble outperforms"
                           " DNGO on the 'mostly boring' Hartmann6"),
    "rosenbrock8": Benchmark("rosenbrock", 8, 100, "Fig. 4b / Fig. 9 (figures only): the ensemble outperforms"
                             " DNGO on Rosenbrock 8-d"),
}

METHODS = {  # label (Pethick's naming convention, §4) and jbo options
    "dngo": ("DNGO retrain-reset", dict(model="dngo", **_common.PAPER_DNGO)),
    "ensemble-mean": ("5×DNGO retrain-reset, mean", dict(model="ensemble", n_networks=5, aggregator="mean", **_common.PAPER_DNGO)),
    "ensemble-median": ("5×DNGO retrain-reset, median", dict(model="ensemble", n_networks=5, aggregator="median", **_common.PAPER_DNGO)),
    "ensemble-max": ("5×DNGO retrain-reset, max", dict(model="ensemble", n_networks=5, aggregator="max", **_common.PAPER_DNGO)),
}


# ----------------------------------------------------------------------------------------------
# Running
# ----------------------------------------------------------------------------------------------
def settings_for(bench: Benchmark, method: str, args) -> dict:
    """The ``jbo.minimize`` options of one method in Pethick's setting (see the module docstring)."""
    network = dict(hidden=[50, 50, 50], activation="relu_tanh", optimizer="adam", learning_rate=0.01,
                   final_lr_fraction=1.0, weight_decay=1e-4, num_steps=int(args.network_steps), batch_size=0)
    # The acquisition search is pinned to the one these runs were made with (100 Adam steps from the best
    # anchors), which DNGO models no longer use by default (jbo.models.dngo.MAXIMIZE).
    return dict(METHODS[method][1], training="retrain-reset", quadratic_prior=False, acquisition="ucb",
                ucb_beta=float(args.kappa) ** 2, inference=args.inference, n_init=bench.n_init, network=network,
                maximize={"num_steps": 100})


def run_seeds(bench: Benchmark, options: dict, seeds, budget: int, path: str, chunk: int | None = None):
    """``seeds`` of one method: ``(seeds, values, call)`` per call (:func:`_common.run_seeds`). Ask/tell, a
    call is one seed and holds the wall time of every step (suggestion + evaluation; the evaluations are
    microseconds, so a model round's step is its suggestion); compiled, one call runs all ``seeds``."""
    from jbo.benchmarks import get_problem

    problem = get_problem(bench.name, bench.dim)
    return _common.run_seeds(problem.evaluate, problem.space(), budget, seeds, path, chunk,
                             step_seconds=path == "ask-tell", **options)


def run_config(args, budget: int) -> dict:
    """What identifies a run besides (problem, method, seed): a stored run with another config is redone."""
    return {"budget": int(budget), "network_steps": int(args.network_steps), "kappa": float(args.kappa),
            "inference": args.inference}


def load(path: str) -> dict:
    return _common.read_json(path, {})


def run_study(args, results: dict) -> tuple[dict, bool]:
    """Run every missing (problem, method, seed) triple, saving after each call (all its seeds at once).
    Compiled, a problem's methods missing the same seeds run as the arms of one :func:`jbo.study`
    (:func:`_common.run_arms`). Returns the results and whether anything ran."""
    from jbo.benchmarks import get_problem

    if args.path == "compiled":
        for method in args.methods:  # refuse before running anything (e.g. --cpu-devices: host-side training)
            _common.check_compiled(settings_for(PROBLEMS[args.problems[0]], method, args))
    ran = False
    for problem in args.problems:
        bench = PROBLEMS[problem]
        budget = args.budget or bench.n_init + (PAPER_ROUNDS if args.rounds is None else args.rounds)
        if budget <= bench.n_init:
            raise SystemExit(f"{problem}: budget {budget} leaves no model-based round after the {bench.n_init}"
                             " initial points")
        config = run_config(args, budget)
        todo = {}  # missing seeds -> the methods missing exactly those
        for method in args.methods:
            missing = []
            for seed in range(args.seeds):
                stored = results.get(problem, {}).get(method, {}).get(str(seed))
                if stored is not None and stored["config"] == config:
                    continue
                if stored is not None:
                    print(f"{problem} {method} seed {seed}: stored with {stored['config']}, rerunning with {config}")
                missing.append(seed)
            if missing:
                todo.setdefault(tuple(missing), []).append(method)
        for missing, methods in todo.items():
            if args.path == "compiled":
                p = get_problem(bench.name, bench.dim)
                calls = _common.run_arms(p.evaluate, p.space(), budget, missing,
                                         {m: settings_for(bench, m, args) for m in methods}, args.chunk)
            else:
                calls = ((m, *call) for m in methods
                         for call in run_seeds(bench, settings_for(bench, m, args), missing, budget, args.path))
            for method, seeds, values, call in calls:
                ran = True
                records = _common.seed_records(seeds, values, call)
                results = _common.merge_results(args.out, [([problem, method, s], {"config": config, **r})
                                                           for s, r in records.items()])
                best = ", ".join(f"{min(v for v in vals if v == v):.6g}" for vals in values)
                compiled = f", compile {call['compile_seconds']:.0f} s" if call["compile_seconds"] is not None else ""
                print(f"{problem} {method} seeds {seeds} ({call['path']}): best {best} ({call['seconds']:.0f} s"
                      f"{compiled})", flush=True)
    return results, ran


# ----------------------------------------------------------------------------------------------
# Reporting
# ----------------------------------------------------------------------------------------------
def curves(runs: dict, optimum: float):
    """``(simple, cumulative)`` regret curves ``(n_seeds, T)`` of the stored runs, cut to the shortest."""
    import numpy as np

    from jbo import metrics

    length = min(len(r["values"]) for r in runs.values())
    values = np.array([r["values"][:length] for r in runs.values()])
    return metrics.simple_regret(values, optimum), metrics.cumulative_regret(values, optimum)


def _mean_std(x) -> str:
    import numpy as np

    std = float(np.std(x, ddof=1)) if len(x) > 1 else float("nan")
    return f"{np.mean(x):.3g} ± {std:.2g}" if len(x) > 1 else f"{np.mean(x):.3g} (1 seed)"


def _distinct(runs: dict, field: str) -> str:
    return "/".join(str(v) for v in sorted({r["config"][field] for r in runs.values()}))


def _suggestion_seconds(runs: dict, n_init: int) -> str:
    """Ask/tell: the median wall time of a model-based suggestion over all runs' model rounds (robust to
    compilations). Compiled (no step is timed on its own): the calls' wall time less compilation divided
    by the model rounds of all their seeds, marked ``†``."""
    import numpy as np

    steps = [t for r in runs.values() for t in r.get("step_seconds", [])[n_init:]]
    if steps:
        return f"{np.median(steps):.2f}"
    calls = [c for c in _common.calls_of(runs) if c["path"] == "compiled"]
    budget = {int(s): r["config"]["budget"] for s, r in runs.items()}
    rounds = sum(budget.get(s, max(budget.values())) - n_init for c in calls for s in c["seeds"])
    if not calls or rounds <= 0:
        return "–"
    return f"{sum(c['seconds'] - c['compile_seconds'] for c in calls) / rounds:.2g}†"


def problem_table(problem: str, methods: dict) -> list[str]:
    """Markdown lines of one problem: regrets (mean ± std over seeds), time, seeds, budget, paper's note."""
    from jbo.benchmarks import get_problem

    bench = PROBLEMS[problem]
    optimum = get_problem(bench.name, bench.dim).optimum
    lines = [f"### {problem} (d = {get_problem(bench.name, bench.dim).dim}, f* = {optimum:.6g}; Pethick: "
             f"{bench.n_init} initial + {PAPER_ROUNDS} rounds = {bench.paper_budget} evaluations)", "",
             "| method | path | seeds | budget run | final simple regret | cumulative regret R_T | s / seed | compile s"
             " | s / suggestion | network steps | note |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = [(method, path, runs) for method, all_runs in methods.items()
            for path, runs in _common.by_path(all_runs).items()]
    for method, path, runs in rows:
        simple, cumulative = curves(runs, optimum)
        budgets = sorted({r["config"]["budget"] for r in runs.values()})
        note = ("smaller budget than the paper's" if max(budgets) < bench.paper_budget else
                "paper's budget" if min(budgets) == bench.paper_budget else "larger budget than the paper's")
        if min(r["config"]["network_steps"] for r in runs.values()) < PAPER_STEPS:
            note += f"; fewer network steps than Pethick's {PAPER_STEPS}"
        if len(budgets) > 1:
            note += f"; mixed budgets, curves cut to {simple.shape[1]}"
        t = _common.timing(_common.calls_of(runs))
        lines.append(f"| {METHODS[method][0]} | {path} | {len(runs)} | {_distinct(runs, 'budget')} (paper"
                     f" {bench.paper_budget}) | {_mean_std(simple[:, -1])} | {_mean_std(cumulative[:, -1])}"
                     f" | {_common.seconds_text(t['per_seed'])} | {_common.compile_text(t)}"
                     f" | {_suggestion_seconds(runs, bench.n_init)} | {_distinct(runs, 'network_steps')} | {note} |")
    return lines + [""]


def plot_problem(problem: str, methods: dict) -> str:
    """Two panels, simple and cumulative regret against evaluations, mean ± standard error over seeds."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from jbo import metrics
    from jbo.benchmarks import get_problem

    bench = PROBLEMS[problem]
    optimum = get_problem(bench.name, bench.dim).optimum
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2)
    for method, runs in methods.items():
        if not runs:
            continue
        for ax, curve in zip(axes, curves(runs, optimum)):
            mean, se = metrics.mean_and_stderr(np.maximum(curve, 1e-12))
            t = np.arange(1, mean.size + 1)
            (line,) = ax.plot(t, mean, lw=1.6, label=f"{METHODS[method][0]} (n={curve.shape[0]})")
            ax.fill_between(t, np.maximum(mean - se, 1e-12), mean + se, color=line.get_color(), alpha=0.2, lw=0)
    for ax, ylabel in zip(axes, ("simple regret", "cumulative regret")):
        ax.axvline(bench.n_init, color="grey", ls=":", lw=1)
        ax.set_yscale("log")
        ax.set_xlabel("evaluations (initial design left of the dotted line)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize="small")
    fig.suptitle(f"{problem}: mean ± standard error over seeds (UCB, retrain-reset, no quadratic prior)")
    path = os.path.join(_common.FIGURES, f"ensemble_dngo_{problem}.png")
    os.makedirs(_common.FIGURES, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


def report() -> None:
    write_report(_common.load_results("ensemble_dngo.json", {}))


def write_report(results: dict) -> None:
    """The BENCHMARKS.md section and (with :data:`_common.PLOTS`) the figures, from the results JSON."""
    kappa = sorted({r["config"]["kappa"] for m in results.values() for runs in m.values() for r in runs.values()})
    lines = ["## Ensembled DNGO (Pethick 2018): 1 vs 5 networks, aggregators mean / median / max", "",
             _common.header(SECTION),
             f"Pethick's setting: retrain-reset training, no quadratic prior mean, UCB with κ = "
             f"{'/'.join(f'{k:g}' for k in kappa)} (eq. 22; jbo's `ucb_beta` is κ², here "
             f"{'/'.join(f'{k * k:g}' for k in kappa)}; his code uses κ = 4), ReLU-ReLU-tanh 50-50-50 networks,"
             " Adam 0.01, L2 1e-4, full batch, BLR α, β by MAP. Budgets include the initial design (Sobol; 20"
             " points, 100 for 8-d).",
             "Regrets over all evaluations: final simple regret r_T = min y - f*, cumulative regret R_T = Σ (y_t -"
             " f*); mean ± std over seeds (the figures: mean ± standard error).",
             "Path: `compiled` rows ran a problem's methods in one `jbo.study` (or `jbo.minimize_many`) call, the"
             " seeds together: s / seed is the call's wall time less compilation per seed, compile time apart, and"
             " s / suggestion (†) that time per model round; `ask-tell` rows ran `jbo.minimize` seed by seed: s /"
             " seed is a whole run's wall time (persistent compile cache on), s / suggestion the median model round.",
             "Pethick shows these problems in figures only (Figs. 3, 4b, 6, 9): the summary takes his finding as"
             " the direction (ensemble ahead), and counts it reproduced when the mean ensemble's mean r_T and R_T"
             " are both below one network's at his budget (`partly`: one of the two).", ""]
    figures = []
    for problem in PROBLEMS:
        if results.get(problem):
            lines += problem_table(problem, results[problem])
            path = os.path.join(_common.FIGURES, f"ensemble_dngo_{problem}.png")
            if _common.PLOTS:
                plot_problem(problem, results[problem])
            figures.append(f"`{_common.display_path(path)}`")
    if figures:
        lines += ["Figures (simple and cumulative regret against evaluations): " + ", ".join(figures) + "."]
    _common.update_section(SECTION, "\n".join(lines))


def claims() -> list[dict]:
    """Pethick's finding per problem (Figs. 3, 4b, 6, 9: the 5-network ensemble, mean aggregator, ahead
    of one network), from the runs at his budget (n_init + 200 evaluations), over the seeds both ran.

    ``yes`` when the ensemble's mean final simple regret and its mean cumulative regret are both lower
    than DNGO's, ``partly`` when one of the two is, ``no`` when neither, ``not run`` without runs of
    both at his budget. Pethick's figures give no values, so the paper's column states the direction.
    """
    import numpy as np

    from jbo.benchmarks import get_problem

    results = _common.load_results("ensemble_dngo.json", {})
    rows = []
    for problem, bench in PROBLEMS.items():
        figure = bench.finding.split(" (figures only)")[0]
        what = (f"{problem}: 5×DNGO (mean aggregator) ahead of one DNGO network: final simple regret r_T and"
                f" cumulative regret R_T at {bench.paper_budget} evaluations")
        runs = {m: {s: r for s, r in results.get(problem, {}).get(m, {}).items()
                    if r["config"]["budget"] == bench.paper_budget} for m in ("dngo", "ensemble-mean")}
        seeds = sorted(set(runs["dngo"]) & set(runs["ensemble-mean"]), key=int)
        paper_figure = f"ensemble ahead ({figure}, figures only; 10 runs)"
        if not seeds:
            rows.append(_common.claim(PAPER, what, paper_figure, "–", "not run", SECTION))
            continue
        optimum = get_problem(bench.name, bench.dim).optimum
        (r1, c1), (r5, c5) = ([float(np.mean(curve[:, -1])) for curve in curves({s: runs[m][s] for s in seeds}, optimum)]
                              for m in ("dngo", "ensemble-mean"))
        ahead = (r5 < r1, c5 < c1)
        verdict = "yes" if all(ahead) else "partly" if any(ahead) else "no"
        rows.append(_common.claim(PAPER, what, paper_figure,
                                  f"r_T {r5:.3g} vs DNGO {r1:.3g}; R_T {c5:.3g} vs {c1:.3g} ({len(seeds)} seeds)",
                                  verdict, SECTION))
    return rows


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30, help="seeds 0 .. seeds-1 per (problem, method)")
    parser.add_argument("--budget", type=int, default=None,
                        help="evaluations per run, initial design included (default: n_init + --rounds)")
    parser.add_argument("--rounds", type=int, default=None,
                        help=f"model-based rounds after each problem's initial design (default Pethick's {PAPER_ROUNDS})")
    parser.add_argument("--cpu-devices", type=int, default=None,
                        help="split the host CPU into this many JAX devices (ensemble members then train in"
                             " parallel); only with --path ask-tell")
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=list(PROBLEMS))
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--network-steps", type=int, default=PAPER_STEPS,
                        help="full-batch Adam steps per network training (Pethick: 1000 epochs)")
    parser.add_argument("--kappa", type=float, default=PAPER_KAPPA, help="UCB κ of eq. 22 (ucb_beta = κ²)")
    parser.add_argument("--inference", default="map", choices=["map", "slice", "nuts"],
                        help="BLR hyperparameters α, β: 'map' (Pethick's runs without 'MCMC') or sampled")
    parser.add_argument("--out", default=None,
                        help="results JSON (resumable; default experiments/results/ensemble_dngo.json, or under"
                             " --results-dir)")
    _common.add_path_arguments(parser)
    _common.add_output_arguments(parser)
    return parser


def main(argv=None):
    args = _common.start(make_parser(), argv)
    if args is None:
        return
    args.out = args.out or os.path.join(_common.RESULTS, "ensemble_dngo.json")
    _, ran = run_study(args, load(args.out))
    if ran:
        _common.record_provenance(SECTION)
    _common.regenerate()


if __name__ == "__main__":
    main()
