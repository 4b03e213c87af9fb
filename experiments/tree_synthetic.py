"""Tree-structured synthetic functions: Jenatton et al. (2017, Fig. 2) and non-linear shared parameters.

Problems: Jenatton's four balanced trees (``jbo.benchmarks.jenatton``: shared variables, where present,
act linearly and alike in every leaf) and jbo's ``nonlinear_*`` trees (``jbo.benchmarks.nonlinear_shared``:
several optimisers with a shared learning rate whose best value differs per optimiser, and a deeper
pipeline with shared parameters at three depths).

Methods (jbo models): ``tree`` (jbo's default tree GP: the paper's node terms, with a shrinkage prior on the
linear shared weights, plus the shared parameters in each leaf's GP, additively and jointly; leaf chosen by the
larger of the path EI and the full EI), ``tree-paper`` (Jenatton's model exactly: shared parameters only
linear through the inner nodes, two-step path EI), ``independent`` (one GP per leaf, c = 0), ``marginal``
(c integrated out; only on problems without shared variables: "marginal cannot de facto be applied in
presence of shared variables", Sec. 4.1), ``arc`` (Swersky et al.'s arc kernel), ``gp`` (a GP blind to the
structure: the paper's gp-baseline), ``random`` search, and ``tpe``: Optuna's TPE as a peer, run in a
subprocess by the interpreter of the peers' environment (``--peers-python``, default
``/work/peers-venv/bin/python``; skipped with a message where Optuna is not importable there). Optuna is
never a dependency of jbo. Ablation variants of ``tree`` (not run by default): :data:`VARIANTS`, e.g.
``tree-additive-hybrid`` (``tree`` with the paper's prior of the shared weights) or
``tree-additive-all_leaves-shrinkage`` (EI maximised in every leaf).

Protocol, as in the paper (Sec. 4): every model-based method starts from the same initial design, one
uniform random point per conditional path (``n_init`` = number of leaves, seeded by the run's seed);
random search draws every point uniformly; TPE uses Optuna's own start (10 random trials). An "iteration"
is one evaluation, the initial design included. The paper ran 25 replications; the default here is 10 seeds.

On each problem the jbo methods missing the same seeds run in one :func:`jbo.study` call
(``problem.evaluate`` works on JAX values; arms that differ only in values share a compiled program).
Results go to a resumable JSON (``experiments/results/tree_synthetic_many.json``: seeds already there are
skipped); the run's provenance is recorded and BENCHMARKS.md regenerated from the stored results
(``report()``: the ``tree_synthetic`` section, a figure per problem when drawn; ``claims()``: its rows of
the summary). ``--report-only`` only regenerates.

    python experiments/tree_synthetic.py [--seeds 10] [--budget 60] [--problems ...] [--methods ...]
        [--report-only] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

JENATTON = ("jenatton_small", "jenatton_small_shared", "jenatton_large", "jenatton_large_shared")
NONLINEAR = ("nonlinear_optimizers2", "nonlinear_optimizers3", "nonlinear_pipeline")
PROBLEMS = JENATTON + NONLINEAR
METHODS = ("tree", "tree-paper", "independent", "marginal", "arc", "gp", "random", "tpe")
#: Ablations of the default tree model: method name -> (jbo model, options).
#: ``tree-K-S`` and ``tree-additive-S-shared`` keep the paper's prior of the linear shared weights (the runs
#: of the design ablation, made before ``tree`` took the shrinkage prior); ``-shrinkage`` takes it.
VARIANTS = {f"tree-{kernel}-{strategy}": ("tree", {"shared_kernel": kernel, "strategy": strategy,
                                                    "shared_weights": "paper"})
            for kernel in ("joint", "additive") for strategy in ("two_step", "screen", "hybrid", "all_leaves")}
VARIANTS.update({f"tree-additive-{strategy}-shared": ("tree", {"shared_kernel": "additive", "strategy": strategy,
                                                               "path_ei": "shared", "shared_weights": "paper"})
                 for strategy in ("two_step", "hybrid")})
VARIANTS.update({f"tree-additive-{strategy}-shrinkage": ("tree", {"shared_kernel": "additive", "strategy": strategy,
                                                                  "shared_weights": "shrinkage"})
                 for strategy in ("screen", "hybrid", "all_leaves")})
VARIANTS["tree-additive+joint-hybrid"] = ("tree", {"shared_kernel": "additive+joint", "strategy": "hybrid",
                                                   "shared_weights": "paper"})
ALL_METHODS = METHODS + tuple(VARIANTS)
PAPER_SEEDS = 25
CHECK_AT = 60  # issue #4's quality check: iteration 60 on the large balanced tree
ABLATION_SEEDS = 10  # the design ablation's variants ran seeds 0-9
MID = 30  # the table's intermediate column
RESULTS_FILE = "tree_synthetic_many.json"  # what the report reads (tree_synthetic.json: earlier runs, kept)
SECTION = "tree_synthetic"
DEFAULT_INFERENCE = "map"
PEERS_PYTHON = "/work/peers-venv/bin/python"


# ----------------------------------------------------------------------------------------- runs
def has_shared(problem: str) -> bool:
    """Whether the problem's space has shared (non-decision) parameters on inner nodes."""
    from jbo.benchmarks import get_problem

    return any(node.columns for node in get_problem(problem).space().tree().nodes)


def applicable(problem: str, method: str) -> bool:
    """``marginal`` is not defined with shared variables (Jenatton et al., Sec. 4.1)."""
    return not (method == "marginal" and has_shared(problem))


def available_methods(methods) -> list[str]:
    """The methods jbo has a model for (``jbo.models.NAMES``, the variants, and the peer ``tpe``);
    prints the ones skipped."""
    from jbo.models import NAMES

    known = set(NAMES) | set(VARIANTS) | {"tpe"}
    missing = [m for m in methods if m not in known]
    if missing:
        print(f"skipping methods jbo does not register: {missing}", flush=True)
    return [m for m in methods if m in known]


def model_of(method: str) -> tuple[str, dict]:
    """The jbo model name and options of a method (a shortcut name or a :data:`VARIANTS` entry)."""
    return VARIANTS.get(method, (method, _common.PAPER_GP if method == "gp" else {}))


def arm_of(method: str, space, inference: str) -> dict:
    """The :func:`jbo.study` arm (options) of a method: its jbo model and options, the paper's initial design
    (one random point per conditional path) and, for model-based methods, the inference."""
    model, options = model_of(method)
    arm = {"model": model, **options, "n_init": len(space.leaves())}
    if model != "random":
        arm["inference"] = inference
    return arm


def run_jbo(problem_name: str, methods, seeds: list[int], budget: int, inference: str) -> dict:
    """All ``seeds`` of the jbo ``methods`` on one problem in one :func:`jbo.study` call
    (:func:`_common.run_arms`: arms that differ only in values share a compiled program).

    Returns:
      ``{method: {str(seed): {"values": [...], "call": {"seconds", "compile_seconds", "seeds", "arms"}}}}``:
      ``seconds`` is the arm's share of the study's wall time, its program's compile time included, shared
      by its seeds (``seeds``: their number).
    """
    from jbo.benchmarks import get_problem

    problem = get_problem(problem_name)
    space = problem.space()
    arms = {m: arm_of(m, space, inference) for m in methods}
    out = {}
    for method, part, values, call in _common.run_arms(problem.evaluate, space, budget, seeds, arms):
        record_call = {"seconds": call["seconds"], "compile_seconds": call["compile_seconds"], "seeds": len(part),
                       "arms": call["arms"]}
        out.setdefault(method, {}).update({str(s): {"values": v, "call": record_call} for s, v in zip(part, values)})
    return out


# ------------------------------------------------------------------------------------ TPE (peer)
def optuna_config(trial, space) -> dict:
    """A configuration of a conditional jbo ``space`` sampled define-by-run by an Optuna ``trial``.

    Decisions are drawn from the root down (the decisions common to every leaf still consistent with
    those drawn so far come first), then the active non-decision parameters, each with the Optuna
    distribution of its jbo type (log scales kept).
    """
    from jbo.spaces import Categorical, Integer

    params, config = space.params, {}

    def suggest(name):
        p = params[name]
        if isinstance(p, Categorical):
            return trial.suggest_categorical(name, list(p.choices))
        if isinstance(p, Integer):
            return trial.suggest_int(name, p.low, p.high, log=p.log)
        return trial.suggest_float(name, p.low, p.high, log=p.log)

    leaves = [dict(leaf) for leaf in space.leaves()]
    while True:
        consistent = [leaf for leaf in leaves if all(leaf.get(k, v) == v for k, v in config.items())]
        pending = [n for n in space.decisions if n not in config and any(n in leaf for leaf in consistent)]
        if not pending:
            break
        common = [n for n in pending if all(n in leaf for leaf in consistent)]
        name = (common or pending)[0]
        config[name] = suggest(name)
    for name in space.active(config):
        if name not in config:
            config[name] = suggest(name)
    return config


def tpe_worker(problem_name: str, budget: int, seeds: list[int]) -> None:
    """Run Optuna's TPE (``multivariate=True, group=True``: Optuna's setting for conditional spaces) and
    print ``{seed: {"values": [...], "seconds": ...}}`` as one JSON line (run by the peers' interpreter)."""
    import logging
    import warnings

    import optuna

    from jbo.benchmarks import get_problem

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    logging.getLogger("optuna").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    problem = get_problem(problem_name)
    space = problem.space()
    out = {}
    for seed in seeds:
        start = time.perf_counter()
        sampler = optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True)
        study = optuna.create_study(sampler=sampler, direction="minimize")
        values = []

        def objective(trial):
            value = float(problem.evaluate(optuna_config(trial, space)))
            values.append(value)
            return value

        study.optimize(objective, n_trials=budget)
        out[str(seed)] = {"values": values, "seconds": time.perf_counter() - start,
                          "peer": f"optuna {optuna.__version__} TPESampler(multivariate=True, group=True)"}
    print(json.dumps(out), flush=True)


def run_tpe(problem_name: str, seeds: list[int], budget: int, python: str) -> dict | None:
    """TPE runs in a subprocess of the peers' interpreter; ``None`` (with a message) where that fails."""
    if not os.path.exists(python):
        print(f"skipping tpe: no peers interpreter at {python}", flush=True)
        return None
    check = subprocess.run([python, "-c", "import optuna"], capture_output=True, text=True)
    if check.returncode:
        print(f"skipping tpe: optuna is not importable by {python}: {check.stderr.strip().splitlines()[-1:]}",
              flush=True)
        return None
    command = [python, os.path.abspath(__file__), "--tpe-worker", problem_name, str(budget)] + [str(s) for s in seeds]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", JAX_PLATFORMS="cpu")
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode:
        print(f"skipping tpe on {problem_name}: the worker failed:\n{done.stderr[-2000:]}", flush=True)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------- results
def load_results(name: str) -> dict:
    """The results JSON ``experiments/results/<name>`` (empty dict when absent)."""
    path = os.path.join(_common.RESULTS, name)
    return _common.read_json(path, {})


def save_results(name: str, results: dict) -> None:
    """Write the results JSON atomically (a killed run never leaves a truncated file)."""
    _common.write_json(os.path.join(_common.RESULTS, name), results)


def run_key(problem: str, method: str, budget: int, inference: str) -> str:
    """Results are grouped by (problem, method, budget, inference); seeds are the inner keys."""
    return f"{problem}/{method}/{budget}/{inference}"


def merge_runs(key: str, runs: dict, name: str = RESULTS_FILE) -> dict:
    """Add ``runs`` (``{seed: record}``) under ``key`` in the results file ``name`` (file lock); the merged
    results."""
    return _common.merge_results(os.path.join(_common.RESULTS, name), [([key, seed], r) for seed, r in runs.items()])


# ------------------------------------------------------------------------------------- figures
def plot_bands(curves: dict, path: str, ylabel: str, title: str, xlabel: str = "iterations (evaluations)") -> str:
    """Mean ± one standard error over rows of each ``label -> (n_rows, T)`` array, one line per label."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from jbo.metrics import mean_and_stderr

    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for label, rows in curves.items():
        rows = np.asarray(rows, dtype=np.float64)
        mean, se = mean_and_stderr(rows)
        x = np.arange(1, rows.shape[1] + 1)
        (line,) = ax.plot(x, mean, lw=1.8, label=f"{label} (n={rows.shape[0]})")
        ax.fill_between(x, mean - se, mean + se, color=line.get_color(), alpha=0.2, lw=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=120)
    return path


def log10_curves(runs: dict, optimum: float):
    """``(n_seeds, T)`` log10 distance of the best value so far to ``optimum`` (runs cut to the shortest),
    rows in seed order."""
    import numpy as np

    from jbo.metrics import log10_distance

    seeds = sorted(runs, key=int)
    length = min(len(runs[s]["values"]) for s in seeds)
    return log10_distance(np.array([runs[s]["values"][:length] for s in seeds]), optimum)


# -------------------------------------------------------------------------------------- report
def _seconds(runs: dict) -> str:
    """Wall time: of the calls (all seeds, compilation in brackets) for jbo, per seed for the peer."""
    import numpy as np

    records = list(runs.values())
    if "call" in records[0]:
        calls = {(r["call"]["seconds"], r["call"]["compile_seconds"], r["call"]["seeds"]) for r in records}
        total = sum(c[0] for c in calls)
        compile_ = sum(c[1] for c in calls)
        return f"{total:.0f} ({compile_:.0f} compile) / {len(calls)} call{'s' * (len(calls) > 1)}"
    return f"{np.mean([r['seconds'] for r in records]):.1f} / seed"


def table_suffix(results: dict) -> str:
    """``"budget/inference"`` of the report: the one with the most stored runs of the table's methods (the
    default budget and inference on a tie)."""
    counts = {}
    for key, runs in results.items():
        parts = key.split("/")
        if len(parts) == 4 and parts[1] in METHODS:
            counts[f"{parts[2]}/{parts[3]}"] = counts.get(f"{parts[2]}/{parts[3]}", 0) + len(runs)
    default = f"{CHECK_AT}/{DEFAULT_INFERENCE}"
    return max(counts, key=lambda s: (counts[s], s == default)) if counts else default


def curves_of(results: dict, suffix: str) -> dict:
    """``{(problem, method): (seeds, (n_seeds, T) log10 distances)}`` of every stored method at ``suffix``."""
    from jbo.benchmarks import get_problem

    out = {}
    for problem in PROBLEMS:
        optimum = get_problem(problem).optimum
        for method in ALL_METHODS:
            runs = results.get(f"{problem}/{method}/{suffix}", {})
            if runs:
                out[problem, method] = (sorted(runs, key=int), log10_curves(runs, optimum))
    return out


def compare(data: dict, problem: str, a: str, b: str, at: int = -1, paired: bool = True):
    """``(mean a, mean b, mean of a - b, its standard error)`` of the log10 distances at evaluation index
    ``at``: paired over the seeds both ran (model-based methods share each seed's initial design), or, with
    ``paired=False`` (a peer with its own start), the difference of the means over each one's seeds.
    ``None`` unless both ran (on at least 2 common seeds when paired)."""
    import numpy as np

    if (problem, a) not in data or (problem, b) not in data:
        return None
    (sa, ca), (sb, cb) = data[problem, a], data[problem, b]
    va, vb = ca[:, at], cb[:, at]
    if not paired:
        se = np.sqrt(va.var(ddof=1) / len(va) + vb.var(ddof=1) / len(vb))
        return float(va.mean()), float(vb.mean()), float(va.mean() - vb.mean()), float(se)
    common = sorted(set(sa) & set(sb), key=int)
    if len(common) < 2:
        return None
    diff = np.array([va[sa.index(s)] - vb[sb.index(s)] for s in common])
    return float(va.mean()), float(vb.mean()), float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(len(diff)))


def ahead(data: dict, problem: str, a: str, b: str, at: int = -1, paired: bool = True) -> bool | None:
    """Whether ``a`` ends closer to the minimum than ``b`` by more than two standard errors of the difference
    (:func:`compare`); ``None`` unless both ran."""
    c = compare(data, problem, a, b, at, paired)
    return None if c is None else c[2] < -2 * c[3]


def acceptance(data: dict, problem: str, a: str, b: str, bar: str) -> list[str] | None:
    """Issue #15's check of ``a`` against ``b``: table cells (check, ``a``, ``b``, paired difference, verdict);
    ``"no worse"``: ``a``'s mean not above ``b``'s, ``"better"``: below it."""
    c = compare(data, problem, a, b)
    if c is None:
        return None
    mean_a, mean_b, diff, se = c
    ok = mean_a <= mean_b if bar == "no worse" else mean_a < mean_b
    word = "met" if ok else ("not met, within 2 paired se" if bar == "no worse" and diff <= 2 * se else "**not met**")
    return [f"{bar} than `{b}`", f"{mean_a:.3f}", f"`{b}` {mean_b:.3f}", f"{diff:+.3f} ± {se:.3f}", word]


def acceptance_rows(data: dict) -> list[tuple[str, list[str]]]:
    """Issue #15's checks (and issue #4's on ``jenatton_large``): ``(problem, cells)`` per check run."""
    rows = []
    for problem in PROBLEMS:
        checks = [("independent", "no worse"), ("random", "better")] if problem in NONLINEAR \
            else [("tree-paper", "no worse")]
        for reference, bar in checks:
            cells = acceptance(data, problem, "tree", reference, bar)
            if cells:
                rows.append((problem, cells))
        others = {m: data[problem, m][1] for m in ("gp", "random") if (problem, m) in data}
        tree = data.get((problem, "tree"), (None, None))[1]
        if problem == "jenatton_large" and tree is not None and tree.shape[1] >= CHECK_AT and len(others) == 2:
            means = {m: float(c[:, CHECK_AT - 1].mean()) for m, c in others.items()}
            t = float(tree[:, CHECK_AT - 1].mean())
            rows.append((problem, [f"issue #4: below `gp` and `random` at {CHECK_AT}", f"{t:.3f}",
                                   ", ".join(f"`{m}` {v:.3f}" for m, v in means.items()), "–",
                                   "met" if all(t < v for v in means.values()) else "**not met**"]))
    return rows


def write_report(results: dict) -> None:
    """Figure per problem and the BENCHMARKS.md section: the methods' table (log10 distances at MID and at
    the budget), issue #15's acceptance checks and the ablation of the tree model's design."""
    import numpy as np

    from jbo.benchmarks import get_problem
    from jbo.metrics import mean_and_stderr

    suffix = table_suffix(results)
    budget, inference = suffix.split("/")
    data = curves_of(results, suffix)
    lines = ["## Tree-structured synthetic functions (Jenatton et al. 2017, Fig. 2; non-linear shared parameters)",
             "", _common.header(SECTION),
             f"log10 distance of the best value so far to the known minimum (mean ± standard error over seeds) after"
             f" {MID} evaluations and at the budget, {budget}, the initial design of one random point per conditional"
             f" path included (`tpe`: {_tpe_version(results)} TPESampler, multivariate and grouped, with its own"
             f" 10 random startup trials), hyperparameters by `{inference}`; the minimum is 0.1 on Jenatton's trees,"
             f" 0.05 on jbo's `nonlinear_*` trees (`jbo.benchmarks.nonlinear_shared`: a shared learning rate, weight"
             f" decay, width or dropout whose best value differs per branch); the paper ran {PAPER_SEEDS} replications."
             f" Time: wall seconds of the jbo calls (all seeds; their compilation in brackets) on a machine shared"
             f" with other jobs, seconds per seed for `tpe`.", "",
             "`tree`: jbo's default tree model (the paper's node terms; in each leaf's GP kernels over the shared"
             " parameters of its path and over all its parameters added to its own; a shrinkage prior on each linear"
             " shared weight; leaf chosen by the larger of the path EI (6) and the full EI; the paper's model where"
             " nothing is shared). `tree-paper`: Jenatton et al.'s model exactly (shared parameters only linear"
             " through the inner nodes, two-step path EI). `marginal` is not run with shared variables (Sec. 4.1).",
             "", f"| problem | method | seeds | log10 dist. at {MID} | log10 dist. at {budget} | time (s) |",
             "|---|---|---|---|---|---|"]
    figures, ablation = [], {}
    for problem in PROBLEMS:
        optimum = get_problem(problem).optimum
        curves = {}
        for method in ALL_METHODS:
            if (problem, method) not in data:
                continue
            seeds, c = data[problem, method]
            # The design ablation compares like with like: every row on the seeds its variants ran.
            first = c[[i for i, s in enumerate(seeds) if int(s) < ABLATION_SEEDS], -1]
            if len(first):
                ablation[problem, method] = "%.2f ± %.2f (%d)" % (*mean_and_stderr(first), int(np.sum(first > -2.0)))
            if method not in METHODS:
                continue
            curves[method] = c
            at = lambda t: "%.3f ± %.3f" % mean_and_stderr(c[:, t - 1]) if c.shape[1] >= t else "–"  # noqa: E731
            runs = results[f"{problem}/{method}/{suffix}"]
            lines.append(f"| {problem} (min {optimum:g}) | {method} | {len(runs)} | {at(MID)} | {at(c.shape[1])} |"
                         f" {_seconds(runs)} |")
        if curves:
            path = os.path.join(_common.FIGURES, f"tree_synthetic_{problem}.png")
            if _common.PLOTS:
                plot_bands(curves, path, "log10 distance to the minimum", f"{problem} ({inference})")
            figures.append(f"`{_common.display_path(path)}`")
    checks = acceptance_rows(data)
    if checks:
        lines += ["", "Acceptance (issues #15 and #4; final log10 distances, paired over seeds):", "",
                  "| problem | check | `tree` | reference | paired difference | verdict |", "|---|---|---|---|---|---|"]
        lines += [f"| {problem} | " + " | ".join(cells) + " |" for problem, cells in checks]
    variants = [m for m in ("tree", "tree-paper", "independent", *VARIANTS) if any((p, m) in ablation for p in PROBLEMS)]
    shown = [p for p in PROBLEMS if any((p, v) in ablation for v in VARIANTS)]
    if shown:
        lines += ["", f"Design of the default tree model: log10 distance at {budget}, seeds 0–{ABLATION_SEEDS - 1} for"
                  f" every row (in brackets: seeds ending more than 1e-2 from the minimum). `tree-K-S`: shared kernel K"
                  f" (`joint`, `additive`: own + shared, `additive+joint`) and leaf search S (`two_step`: path EI (6);"
                  f" `screen`: full EI (5) at the anchors; `hybrid`: the larger; `all_leaves`); `-shared`: the path EI"
                  f" holds the leaf GP's shared component; the paper's prior of the linear shared weights unless"
                  f" `-shrinkage`. `tree` is `tree-additive+joint-hybrid-shrinkage` (`tree-paper` where nothing is"
                  f" shared).", "",
                  "| variant | " + " | ".join(shown) + " |", "|---|" + "---|" * len(shown)]
        lines += [f"| {v} | " + " | ".join(ablation.get((p, v), "–") for p in shown) + " |" for v in variants]
    lines += ["", "Paper (Fig. 2, qualitative): gp-baseline and random worst, the gap widening with depth; arc good"
              " early, then overtaken by tree and later by independent; marginal clearly worse than tree. Summary"
              " verdicts: one method is ahead of another when its mean log10 distance is lower by more than two"
              " standard errors of the difference (paired over seeds; unpaired against `tpe`)."]
    if figures:
        lines += ["", "Figures (mean ± one standard error): " + ", ".join(figures) + "."]
    _common.update_section(SECTION, "\n".join(lines))


def report() -> None:
    """Rewrite the ``tree_synthetic`` section from the stored results (no runs)."""
    write_report(_common.load_results(RESULTS_FILE, {}))


def _fig2(data: dict, others) -> tuple[str, str]:
    """``(jbo's figure, verdict)`` of a Fig. 2 claim "tree ahead of each of ``others``" over Jenatton's trees
    where they all ran: ``yes`` when tree is :func:`ahead` of every one on every tree, ``partly`` when its mean
    is lower on every tree or it is ahead on some, ``no`` otherwise."""
    lower = ahead_on = trees = 0
    for p in JENATTON:
        cs = [compare(data, p, "tree", m) for m in others]
        if None in cs:
            continue
        trees += 1
        lower += all(c[2] < 0 for c in cs)
        ahead_on += all(c[2] < -2 * c[3] for c in cs)
    if not trees:
        return "–", "not run"
    verdict = "yes" if ahead_on == trees else "partly" if lower == trees or ahead_on else "no"
    return f"tree's mean lower on {lower} of {trees} trees, by more than 2 se on {ahead_on}", verdict


def claims() -> list[dict]:
    """Rows of the summary table, from the stored results at the table's budget.

    "Ahead" is :func:`ahead`: a mean log10 distance lower by more than two standard errors of the difference
    (paired over seeds; unpaired against Optuna's TPE). Jenatton et al.'s Fig. 2 is qualitative: "tree ahead
    of X" is ``yes`` when tree is ahead of X on every tree where both ran, ``partly`` when its mean is lower on
    every tree (or it is ahead on some), ``no`` otherwise; "arc good early, then overtaken" is ``yes`` when
    arc's mean is below tree's at 30 evaluations and tree ahead at the budget on every tree, ``partly`` when
    one of the two holds on every tree. jbo's ``nonlinear_optimizers2`` row (the headline): ``yes`` when
    ``tree`` is ahead of both ``tree-paper`` and ``tpe``, ``partly`` of one. Issue #15's (and #4's) checks:
    ``yes`` when every one is met, ``partly`` when some are.
    """
    results = _common.load_results(RESULTS_FILE, {})
    suffix = table_suffix(results)
    budget = suffix.split("/")[0]
    data = curves_of(results, suffix)
    ms = lambda p, m: "%.3f ± %.3f" % _common.mean_se(data[p, m][1][:, -1])  # noqa: E731
    fig2 = "Jenatton et al. 2017, Fig. 2"
    rows = []
    figure, verdict = _fig2(data, ("gp", "random"))
    rows.append(_common.claim(fig2, f"tree ahead of gp-baseline and random on the four balanced trees (log10"
                              f" distance at {budget} evaluations)", "qualitative: gp-baseline and random worst",
                              figure, verdict, SECTION))
    figure, verdict = _fig2(data, ("marginal",))
    rows.append(_common.claim(fig2, f"marginal behind tree on the trees without shared variables (at {budget})",
                              "qualitative: marginal clearly worse than tree", figure, verdict, SECTION))
    early = late = trees = 0
    for p in JENATTON:
        c_early, c_late = compare(data, p, "arc", "tree", at=MID - 1), compare(data, p, "tree", "arc")
        if c_early is None or c_late is None:
            continue
        trees += 1
        early += c_early[0] < c_early[1]
        late += c_late[2] < -2 * c_late[3]
    parts = [trees and early == trees, trees and late == trees]
    rows.append(_common.claim(fig2, f"arc good early (mean below tree's at {MID} evaluations), then overtaken by tree"
                              f" (tree ahead at {budget})", "qualitative: arc good early, then overtaken by tree",
                              f"arc below tree at {MID} on {early} of {trees} trees; tree ahead at {budget} on {late}"
                              if trees else "–",
                              "not run" if not trees else "yes" if all(parts) else "partly" if any(parts) else "no",
                              SECTION))
    problem = "nonlinear_optimizers2"
    headline = (f"`{problem}`, a conditional space whose learning rate two optimisers share: log10 distance to the"
                f" optimum after {budget} evaluations")
    if (problem, "tree") not in data:
        rows.append(_common.claim("jbo (extends Jenatton et al. 2017)", headline, "–", "–",
                                  "not run", SECTION, headline=True))
    else:
        tested = [v for v in (ahead(data, problem, "tree", "tree-paper"),
                              ahead(data, problem, "tree", "tpe", paired=False)) if v is not None]
        verdict = ("not run" if not tested else "yes" if len(tested) == 2 and all(tested)
                   else "partly" if any(tested) else "no")
        others = "; ".join(f"{label}: {ms(problem, m)}" for m, label in
                           (("tree-paper", "Jenatton et al.'s tree model (`tree-paper`, run in jbo)"),
                            ("tpe", "Optuna TPE")) if (problem, m) in data)
        rows.append(_common.claim("jbo (extends Jenatton et al. 2017)",
                                  f"{headline}, {len(data[problem, 'tree'][0])} seeds", others,
                                  f"tree GP: {ms(problem, 'tree')}", verdict, SECTION, headline=True))
    checks = acceptance_rows(data)
    met = sum(cells[-1] == "met" for _, cells in checks)
    rows.append(_common.claim("jbo", "tree no worse than Jenatton's model on their trees; no worse than independent"
                              " and better than random on the `nonlinear_*` trees (issues #15, #4)", "–",
                              f"{met} of {len(checks)} checks met" if checks else "–",
                              "not run" if not checks else "yes" if met == len(checks) else "partly" if met else "no",
                              SECTION))
    return rows


def _tpe_version(results: dict) -> str:
    for runs in results.values():
        for record in runs.values():
            if "peer" in record:
                return "Optuna " + record["peer"].split()[1]
    return "Optuna"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--tpe-worker"]:
        tpe_worker(argv[1], int(argv[2]), [int(s) for s in argv[3:]])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=CHECK_AT, help="evaluations per run, initial design included")
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=PROBLEMS)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=ALL_METHODS)
    parser.add_argument("--inference", default=DEFAULT_INFERENCE, choices=["slice", "map", "nuts"])
    parser.add_argument("--peers-python", default=PEERS_PYTHON, help="interpreter with optuna, for tpe")
    parser.add_argument("--results", default=RESULTS_FILE,
                        help="results JSON under the results directory (the report reads the default one)")
    _common.add_output_arguments(parser)
    parser.add_argument("--no-report", action="store_true", help="leave BENCHMARKS.md and the figures alone")
    # --report-only is handled below, where --no-report can still skip the report
    args = _common.start(parser, argv, handle_report_only=False)

    results = load_results(args.results)
    failed, ran = [], False
    if not args.report_only:
        wanted = [str(s) for s in range(args.first_seed, args.first_seed + args.seeds)]
        methods = available_methods(args.methods)
        for problem in args.problems:
            groups = {}  # the jbo methods missing the same seeds run in one jbo.study
            for method in methods:
                if not applicable(problem, method):
                    continue
                key = run_key(problem, method, args.budget, args.inference)
                missing = tuple(int(s) for s in wanted if s not in results.get(key, {}))
                if not missing:
                    continue
                if method == "tpe":
                    start = time.perf_counter()
                    runs = run_tpe(problem, list(missing), args.budget, args.peers_python)
                    if runs is not None:
                        results, ran = merge_runs(key, runs, args.results), True
                        _print_runs(problem, method, runs, time.perf_counter() - start)
                    continue
                groups.setdefault(missing, []).append(method)
            for missing, names in groups.items():
                # one study for the group; where it fails, each method alone, so that one failing method
                # does not stop the others
                for batch in [names] if len(names) == 1 else [names, *[[m] for m in names]]:
                    start = time.perf_counter()
                    try:
                        by_method = run_jbo(problem, batch, list(missing), args.budget, args.inference)
                    except Exception as e:  # noqa: BLE001 - one failing method must not stop the study
                        print(f"{problem} {batch} FAILED: {type(e).__name__}: {e}", flush=True)
                        if len(batch) == 1:
                            failed.append(f"{problem}/{batch[0]}")
                        continue
                    for method, runs in by_method.items():
                        results = merge_runs(run_key(problem, method, args.budget, args.inference), runs, args.results)
                        _print_runs(problem, method, runs, time.perf_counter() - start)
                    ran = True
                    if batch is names:
                        break
        if ran and args.results == RESULTS_FILE:
            _common.record_provenance(SECTION)
    if not args.no_report:
        _common.regenerate()
    if failed:
        sys.exit(f"failed: {failed}")


def _print_runs(problem: str, method: str, runs: dict, seconds: float) -> None:
    best = [min(v for v in r["values"] if v == v) for r in runs.values()]
    seeds = sorted(runs, key=int)
    print(f"{problem} {method} seeds {seeds[0]}..{seeds[-1]}: mean best {sum(best) / len(best):.5f}"
          f" ({seconds:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
