"""A suite of standard test functions in random shifted and rotated instances: jbo against Optuna's samplers.

Every (function, dimension, seed) is one instance of :func:`jbo.benchmarks.shifted_rotated` on the unit cube, the
same for every method; a run's score is ``log10(best - f*)``. Each seed being its own function, jbo runs seed by seed.

    python experiments/suite.py [--dims 2 5] [--budgets 10 20 (multiples of d)] [--seeds 10] [--arms gp ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import NamedTuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

SECTION, RESULTS_FILE = "suite", "suite.json"
#: Functions of any dimension (Powell: multiples of 4) and those of one fixed dimension.
SCALABLE = ("ackley", "rastrigin", "griewank", "schwefel", "zakharov", "dixon_price", "powell", "levy", "rosenbrock",
            "sum_of_different_powers", "styblinski_tang", "michalewicz", "rotated_hyper_ellipsoid", "sphere",
            "sum_squares", "trid", "alpine01", "bent_cigar", "discus", "elliptic", "weierstrass", "schaffer_f7",
            "salomon", "qing", "happy_cat")
FIXED = ("branin", "six_hump_camel", "goldstein_price", "beale", "booth", "matyas", "three_hump_camel", "levy13",
         "drop_wave", "cross_in_tray", "holder_table", "eggholder", "mccormick", "shubert", "bukin6", "easom",
         "hartmann3", "colville", "shekel5", "shekel7", "shekel10", "hartmann6")
#: jbo's arms (options of ``jbo.minimize``, or a function of the dimension): the default ``gp``, the defaults before
#: it, and options measured against them.
GLOBAL = {"trust_region": False}
ARMS = {
    "gp": {}, "gp-global": GLOBAL, "gp-ei": {"acquisition": "ei", **GLOBAL},
    "gp-none": {"output_warping": "none", "acquisition": "ei", **GLOBAL},
    "gp-rank": {"output_warping": "rank", "acquisition": "ei", **GLOBAL},
    "gp-thompson": {"acquisition": "thompson", **GLOBAL},
    "gp-wide": {"maximize": {"num_anchors": 4096, "num_local": 1024, "top_k": 40}, "acquisition": "ei", **GLOBAL},
    "gp-design": lambda dim: {"n_init": 2 * max(5, dim + 1), "acquisition": "ei", **GLOBAL},
    "gp-mixture": lambda dim: {"acquisition": _portfolio(), **GLOBAL},  # EI, UCB or PI, drawn at each suggestion
    "gp-trust-rank": {"trust_region": {"improvement": "rank"}}, "gp-map": {"inference": "map"},
    "gp-chains": {"num_chains": 10}, "gp-chains-thin10": {"num_chains": 10, "thin": 10},
    "gp-chains-thin3": {"num_chains": 10, "thin": 3}, "gp-log": {"output_warping": "shifted-log"},
    "dngo": {"model": "dngo"}, "dngo-paper": {"model": "dngo", **_common.PAPER_DNGO},
}
#: The exploration arms, reported apart from the main table, each against the default it was measured against.
EXPLORATION = {"gp-global": "gp-ei", "gp-thompson": "gp-ei", "gp-mixture": "gp-ei", "gp-wide": "gp-ei",
               "gp-design": "gp-ei", "gp": "gp-global", "gp-trust-rank": "gp", "gp-map": "gp", "gp-chains": "gp",
               "gp-chains-thin10": "gp", "gp-chains-thin3": "gp", "gp-log": "gp", "dngo": "dngo-paper"}
MAIN = ("gp", "gp-global", "gp-ei", "gp-none", "gp-rank")  # the main table's arms: the default and those before it
PEERS = ("optuna-gp", "optuna-tpe", "random")
PEER_NAMES = {"optuna-gp": "GPSampler", "optuna-tpe": "TPE", "random": "random"}  # as the summary names them
#: At d = 2 the elliptic function is the bent cigar (both x₁² + 10⁶ x₂²), the same instance per seed: left out.
SAME_AS = {("elliptic", 2): "bent_cigar"}
ISSUE_DIMS = (2, 5, 10, 20)  # the dimensions issue #28's bar names, each at 10·d and 20·d evaluations
MIN_SEEDS = 10  # the seeds per function a cell's methods run (issue #28: ≥ 10); some methods may run more
FLOOR = 1e-8  # the score's floor: a run within 1e-8 of the optimum counts as solved
SAVE_EVERY = 30.0  # seconds of runs between writes of the results file (each write rewrites it whole)


def _portfolio():
    from jbo.acquisition import Mixture  # (jbo is imported after _common.setup)

    return Mixture(("ei", "ucb", "pi"))


def functions_at(dim: int, names=None) -> list[str]:
    """The suite's functions that exist at ``dim`` (optionally among ``names``)."""
    from jbo.benchmarks import get_problem

    def exists(name):
        try:
            return get_problem(name, dim=dim).dim == dim
        except ValueError:
            return False

    return [n for n in SCALABLE + FIXED if (not names or n in names) and (n, dim) not in SAME_AS and exists(n)]


def instance(name: str, dim: int, seed: int):
    """The seed's shifted and rotated instance of ``name`` on the unit cube (one space per dimension: jbo's compiled
    programs serve every function of it)."""
    import jax
    import numpy as np

    from jbo.benchmarks import get_problem, shifted_rotated
    from jbo.benchmarks.problem import Problem

    problem = shifted_rotated(get_problem(name, dim=dim), jax.random.key(seed))
    low, width = problem.bounds[:, 0], np.ptp(problem.bounds, axis=1)
    return Problem(f"{name}-{seed}", jax.jit(lambda u: problem.fn(low + u * width)),
                   np.tile([[0.0, 1.0]], (dim, 1)), problem.optimum, (problem.argmins - low) / width)


def score(values, optimum: float) -> float:
    """``log10`` of the distance of the best value to the optimum (floored at :data:`FLOOR`)."""
    import numpy as np

    values = np.asarray(values, float)
    best = np.min(values[np.isfinite(values)]) if np.isfinite(values).any() else np.inf
    return float(np.log10(max(best - optimum, FLOOR)))


def run_jbo(problem, budget: int, seed: int, options) -> list[float]:
    import jbo

    options = options(problem.dim) if callable(options) else options
    return [float(v) for v in jbo.minimize(problem.evaluate, problem.space(), budget=budget, seed=seed,
                                           progress=False, **options).values]


def run_peer(peer: str, problem, budget: int, seed: int) -> list[float]:
    """A peer (:data:`PEERS`) with its defaults and ``seed`` on a :class:`jbo.benchmarks.Problem`."""
    import numpy as np

    if peer == "random":
        low, high = problem.bounds[:, 0], problem.bounds[:, 1]
        points = low + np.random.default_rng(seed).random((budget, problem.dim)) * (high - low)
        return [float(v) for v in np.asarray(problem.fn(points))]
    import peers

    optuna = peers.quiet_optuna()
    sampler = (optuna.samplers.GPSampler if peer == "optuna-gp" else optuna.samplers.TPESampler)(seed=seed)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    bounds = [(n, float(lo), float(hi)) for n, (lo, hi) in zip(problem.names, problem.bounds)]
    study.optimize(lambda trial: float(problem.evaluate({n: trial.suggest_float(n, lo, hi) for n, lo, hi in bounds})),
                   n_trials=budget)
    return [float(t.value) for t in study.trials]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", nargs="+", type=int, default=[2, 5])
    parser.add_argument("--budgets", nargs="+", type=int, default=[10], help="multiples of the dimension")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--functions", nargs="+", default=None, choices=SCALABLE + FIXED)
    parser.add_argument("--arms", nargs="*", default=["gp"], choices=list(ARMS))
    parser.add_argument("--peers", nargs="*", default=list(PEERS), choices=PEERS)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    path = os.path.join(_common.RESULTS, RESULTS_FILE)
    _common.record_provenance(SECTION, accumulates=True)  # first: a run stopped before its end keeps its runs
    for dim, budget in ((dim, multiple * dim) for dim in args.dims for multiple in args.budgets):
        for name in functions_at(dim, args.functions):
            for method in [*args.arms, *args.peers]:
                done = _common.load_results(RESULTS_FILE, {}).get(f"{dim}/{budget}", {}).get(name, {}).get(method, {})
                unsaved, unsaved_seconds = [], 0.0
                for seed in (s for s in range(args.seeds) if str(s) not in done):
                    problem, start = instance(name, dim, seed), time.perf_counter()
                    values = (run_jbo(problem, budget, seed, ARMS[method]) if method in ARMS else
                              run_peer(method, problem, budget, seed))
                    seconds = time.perf_counter() - start
                    unsaved.append(([f"{dim}/{budget}", name, method, str(seed)],
                                    {"values": values, "optimum": float(problem.optimum), "seconds": seconds}))
                    unsaved_seconds += seconds
                    print(f"d={dim} budget={budget} {name} {method} seed {seed}: "
                          f"{score(values, problem.optimum):+.2f} ({seconds:.1f} s)", flush=True)
                    if unsaved_seconds >= SAVE_EVERY:  # a write costs seconds: cheap runs are stored together
                        _common.merge_results(path, unsaved)
                        unsaved, unsaved_seconds = [], 0.0
                if unsaved:
                    _common.merge_results(path, unsaved)
    _common.regenerate()


# --------------------------------------------------------------------------------------------------- the report
class Scores(NamedTuple):
    """One method's scores on one function: their mean, seeds and each seed's score."""

    mean: float
    seeds: int
    by_seed: dict

    @classmethod
    def of(cls, by_seed: dict) -> "Scores":
        return cls(sum(by_seed.values()) / len(by_seed), len(by_seed), by_seed)

    def on(self, seeds) -> "Scores":  # (at least one of them run)
        return Scores.of({s: v for s, v in self.by_seed.items() if s in seeds})


def compared(a: Scores, b: Scores) -> tuple[float, float, int]:
    """Two methods' mean scores on the seeds both ran, and how many those are."""
    common = a.by_seed.keys() & b.by_seed.keys()
    return (a.on(common).mean, b.on(common).mean, len(common)) if common else (float("nan"), float("nan"), 0)


def wins(table: dict, arm: str, peer: str) -> tuple[int, int]:
    """``(functions where arm's mean is below peer's, functions where both ran)``, each on the seeds both ran."""
    both = [(a, p) for a, p, n in (compared(c[arm], c[peer]) for c in table.values() if arm in c and peer in c) if n]
    return sum(a < p for a, p in both), len(both)


def _behind(arm: Scores, other: Scores) -> bool:
    """``arm``'s mean above ``other``'s on the seeds both ran (a tie is not behind)."""
    a, b, _ = compared(arm, other)
    return a > b


def _usual(counts: dict) -> tuple[str, dict]:
    """The most frequent of ``{name: seeds text}``'s values, and the names whose value differs from it."""
    usual = max(counts.values(), key=list(counts.values()).count)
    return usual, {name: n for name, n in counts.items() if n != usual}


def tables(results: dict) -> dict:
    """``{(dim, budget): {function: {method: Scores}}}``."""
    out = {}
    for key, functions in results.items():
        dim, budget = (int(v) for v in key.split("/"))
        out[dim, budget] = {name: {m: Scores.of({s: score(r["values"], r["optimum"]) for s, r in runs.items()})
                                   for m, runs in cell.items() if runs}
                            for name, cell in functions.items() if (name, dim) not in SAME_AS}
    return dict(sorted(out.items()))


def section(results: dict) -> str:
    lines = ["## A suite of shifted and rotated test functions: jbo against Optuna's samplers", "",
             _common.header(SECTION, "python experiments/suite.py --dims D --budgets M --seeds N --arms ARM ... "
                                     "--peers PEER ... [--functions NAME ...]"),
             "Mean over seeds of log10(best − f*) (floored at 1e-8) on random shifted and rotated instances (one per"
             " seed, the same for every method); lower is better. `wins`: functions where jbo's arm has the lower mean"
             " (ties, e.g. Easom where no run finds the needle, are not wins), on the seeds both ran. `gp`: jbo's"
             " default (Yeo-Johnson, UCB, a trust region); `gp-global`: UCB on the whole box; `gp-ei`: EI; `gp-none`:"
             " EI unwarped (the defaults before); `gp-rank`: EI on normal scores. At d = 2 the elliptic function is the"
             " bent cigar and is counted once.", ""]
    known = list(ARMS) + list(PEERS)
    for (dim, budget), table in tables(results).items():
        methods = sorted({m for cell in table.values() for m in cell if m in MAIN or m not in ARMS},
                         key=lambda m: known.index(m) if m in known else len(known))
        usual, others = _usual({m: "/".join(map(str, sorted({c[m].seeds for c in table.values() if m in c})))
                                for m in methods})
        seeds = f"{usual} seeds" + (f" ({', '.join(f'{m}: {n}' for m, n in others.items())})" if others else "")
        lines += [f"**d = {dim}, budget {budget} ({budget // dim}·d), {seeds}**", "",
                  "| function | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
        for name, cell in table.items():
            best = min(cell[m].mean for m in methods if m in cell)
            shown = {m: f"**{cell[m].mean:+.2f}**" if cell[m].mean == best else f"{cell[m].mean:+.2f}" for m in cell}
            lines.append(f"| {name} | " + " | ".join(shown.get(m, "–") for m in methods) + " |")
        for arm in (m for m in methods if m in ARMS):
            others = [m for m in methods if m in PEERS or (m == "gp" and arm != "gp")]
            lines.append(f"| wins of {arm} | " + ", ".join(f"{o} {'/'.join(map(str, wins(table, arm, o)))}"
                                                           for o in others) + " |" + " |" * (len(methods) - 1))
        lines.append("")
    return "\n".join(lines + exploration(results)).rstrip() + "\n"


def exploration(results: dict) -> list[str]:
    """One row per (dimension, budget, arm of :data:`EXPLORATION`), on the seeds the arm and its baseline both ran."""
    import numpy as np

    rows = []
    for (dim, budget), table in tables(results).items():
        for arm, baseline in EXPLORATION.items():
            cells = {name: {m: s.on(seeds) for m, s in cell.items() if s.by_seed.keys() & seeds}
                     for name, cell in table.items() if arm in cell and baseline in cell
                     for seeds in [cell[arm].by_seed.keys() & cell[baseline].by_seed.keys()]}
            if not cells:
                continue
            others = [m for m in (baseline, *PEERS) if all(m in c for c in cells.values())]
            behind = [name for name, c in cells.items() if "random" in c and _behind(c[arm], c["random"])]
            rows.append(f"| d = {dim}, {budget} | {arm} | {baseline} | "
                        f"{'/'.join(map(str, sorted({c[arm].seeds for c in cells.values()})))} | "
                        + ", ".join(f"{m} {'/'.join(map(str, wins(cells, arm, m)))}" for m in others)
                        + f" | {np.mean([c[arm].mean for c in cells.values()]):+.3f} | "
                        f"{np.mean([c[baseline].mean for c in cells.values()]):+.3f} | {', '.join(behind) or '–'} |")
    if not rows:
        return []
    return ["**Exploration (issue #28, item 2)**: each arm (`suite.ARMS`) against the default it was measured"
            " against, on the same instances; `wins`: functions where the arm's mean is lower.", "",
            "| d, budget | arm | against | seeds | wins of the arm | mean score (arm) | mean score (against) | "
            "behind random on |", "|---|---|---|---|---|---|---|---|", *rows, ""]


def report() -> dict:
    return {SECTION: section(results)} if (results := _common.load_results(RESULTS_FILE)) else {}


def paired_difference(cell: dict, arm: str, other: str) -> tuple[float, float]:
    """Mean over the seeds both ran of ``arm``'s score minus ``other``'s, and its s.e."""
    import numpy as np

    diff = np.array([score(cell[arm][s]["values"], cell[arm][s]["optimum"])
                     - score(cell[other][s]["values"], cell[other][s]["optimum"])
                     for s in sorted(set(cell[arm]) & set(cell[other]), key=int)])
    return float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else float("nan")


def claims() -> list[dict]:
    return claims_of(_common.load_results(RESULTS_FILE) or {})


def claims_of(results: dict) -> list[dict]:
    """Issue #28's bar per (dimension, budget): the default ``gp`` ahead of GPSampler and of TPE on ≥ 75 % of the
    functions and never behind random search (means over seeds; where behind, the paired difference ± its s.e.)."""
    rows, shown, progress = [], set(), {}
    for (dim, budget), table in tables(results).items():
        # the default ran every function on the same seeds, and a method counts where it ran them all, or at least
        # MIN_SEEDS of them where the default ran more (a run in progress does not)
        complete = lambda m: all(m in c and compared(c["gp"], c[m])[2] >= min(c["gp"].seeds, MIN_SEEDS)  # noqa: E731
                                 for c in table.values())
        gp_seeds = {c["gp"].seeds if "gp" in c else 0 for c in table.values()}
        if len(gp_seeds) > 1 or 0 in gp_seeds or not complete("optuna-tpe") or not complete("random"):
            progress[dim, budget] = in_progress(table)
            continue
        shown.add((dim, budget))
        (tpe_wins, n), (random_wins, _) = wins(table, "gp", "optuna-tpe"), wins(table, "gp", "random")
        with_gp = complete("optuna-gp")
        gp_wins = wins(table, "gp", "optuna-gp")[0] if with_gp else None
        gp_text = (f"{gp_wins}/{n}" if with_gp else
                   "partly run" if any("optuna-gp" in c for c in table.values()) else "not run")
        against_random = {name: (_behind(c["gp"], c["random"]),
                                 *paired_difference(results[f"{dim}/{budget}"][name], "gp", "random"))
                          for name, c in table.items()}
        behind = [(name, mean, se) for name, (is_behind, mean, se) in against_random.items() if is_behind]
        # ahead of random, but by less than the paired difference's standard error: a lead the seeds do not settle
        level = [(name, mean, se) for name, (is_behind, mean, se) in against_random.items() if not is_behind and -mean < se]
        held = (tpe_wins >= 0.75 * n and not behind) and (not with_gp or gp_wins >= 0.75 * n)
        seeds = {PEER_NAMES[p]: "/".join(map(str, sorted({compared(c["gp"], c[p])[2] for c in table.values() if p in c})))
                 for p in PEERS if with_gp or p != "optuna-gp"}  # the seeds each comparison rests on
        usual, others = _usual(seeds)
        figure = (f"GPSampler {gp_text}, TPE {tpe_wins}/{n}, random {random_wins}/{n} ({usual} seeds"
                  + "".join(f"; {name} {k}" for name, k in others.items()) + ")")
        figure += "; behind random on " + ", ".join(f"{m} by {d:+.2f} ± {e:.2f}" for m, d, e in behind) if behind else ""
        figure += ("; ahead of random by less than one standard error on "
                   + ", ".join(f"{m} ({d:+.2f} ± {e:.2f})" for m, d, e in level)) if level else ""
        rows.append(_common.claim(
            "jbo", f"default gp vs Optuna GP/TPE, {n} shifted-rotated functions, d = {dim}, {budget} evaluations",
            "≥ 75 % wins over each, none behind random", figure, ("yes" if with_gp else "partly") if held else "no",
            SECTION))
    missing = [(dim, m * dim) for dim in ISSUE_DIMS for m in (10, 20) if (dim, m * dim) not in shown]
    if results and missing:
        rows.append(_common.claim(
            "jbo", "default gp vs Optuna GP/TPE, shifted-rotated functions: the other dimensions and budgets of"
            " issue #28 (d from 2 to 20, 10·d and 20·d evaluations)", "≥ 75 % wins over each, none behind random",
            "; ".join(f"d = {dim}, {budget}: " + (progress.get((dim, budget)) or "not run with every method")
                      for dim, budget in missing), "not run", SECTION))
    return rows


def in_progress(table: dict) -> str | None:
    """On the functions the default ran on its most seeds, its wins over each method that ran them too."""
    seeds = max((c["gp"].seeds for c in table.values() if "gp" in c), default=0)
    done = {name: c for name, c in table.items() if "gp" in c and c["gp"].seeds == seeds}
    counts = [f"{PEER_NAMES[p]} {wins(ran, 'gp', p)[0]}/{len(ran)}" for p in PEERS
              for ran in [{name: c for name, c in done.items()
                           if p in c and compared(c["gp"], c[p])[2] >= min(seeds, MIN_SEEDS)}] if ran]
    return (f"in progress, the default on {len(done)} of {len(table)} functions ({seeds} seeds), ahead of "
            + (", ".join(counts) or "no peer yet") + " where they ran the same seeds") if done else None


if __name__ == "__main__":
    main()
