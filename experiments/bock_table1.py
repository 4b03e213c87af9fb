"""BOCK's Table 1 (Oh et al. 2018): repeated Branin, repeated Hartmann6, Rosenbrock and Levy in 20 dimensions (200
evaluations) and 100 (600): the paper's BOCK and Matérn baseline, jbo's ARD GP, random search, and variants.

Each cell ``problem/d/method/budget/initN`` of ``results/bock_runs.json`` (shared with ``bock_table2.py``) runs its
missing seeds in one :func:`jbo.study` call, from the start of the paper's code: the box's centre, then Sobol points.

    python experiments/bock_table1.py [--dim 20] [--seeds 5] [--methods bock matern gp random] [--store]
"""

from __future__ import annotations

import argparse
import datetime
import functools
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

RESULTS_FILE, SECTION = "bock_runs.json", "bock_table1"
LABELS = {"repeated_branin": "repeated Branin", "repeated_hartmann6": "repeated Hartmann6",
          "rosenbrock": "Rosenbrock", "levy": "Levy"}
PROBLEMS = tuple(LABELS)
OPTIMA = {"repeated_branin": 0.3979, "repeated_hartmann6": -3.3223, "rosenbrock": 0.0, "levy": 0.0}
PAPER_BUDGET = {20: 200, 50: 400, 100: 600}
N_INIT = 2
START = {"design": "centre"}  # the paper's start, for every BO method
DEFAULT_BOCK = "bock-screen"  # jbo's default ``bock``, its options spelled out
PREVIOUS_BOCK = "bock-ev-floor"  # the default before its anchors were screened (still run, for the comparison)
DEFAULT_METHODS = ("bock", "matern", "gp", "random")
#: method -> (jbo model, options) besides ``matern``, ``gp`` (the papers' GP options) and ``random``: the paper's
#: models as the authors' code runs them (their priors in the objective's units), and jbo's default ``bock``.
VARIANTS = {m: (m, {"units": "objective"}) for m in ("bock", "bock-w", "bock-b")}
_SCALE_FREE = {"units": "standardised", "output_warping": "none", "evidence_warp": True, "noise_floor": 1e-10,
               "design": "centre"}
#: the default: its 20 000 anchors screened under one sample, the 1 024 best rescored under all (issue #53 item 3)
VARIANTS[DEFAULT_BOCK] = ("bock", {**_SCALE_FREE, "maximize": {"screen": 1024}})
VARIANTS[PREVIOUS_BOCK] = ("bock", {**_SCALE_FREE, "maximize": {"screen": 0}})
#: Table 1's variants: method -> (the row it is compared with seed by seed, how it differs). Those not in VARIANTS
#: tried designs that are not the default: their runners are retired, their stored rows stay.
COMPARED = {
    "bock": ("gp", "the paper's model against jbo's ARD GP (issue 13)"),
    "bock-standardised": ("bock", "standardised targets, jbo's priors, Sobol start (before d49dc7a)"),
    "bock-floor": ("bock-standardised", "noise floor 1e-10, not 1e-6"),
    "bock-centre": ("bock-standardised", "started at the centre"),
    "bock-objective": ("bock-standardised", "the objective's units under the authors' priors (as `bock`)"),
    "bock-yj": ("bock-centre", "targets Yeo-Johnson warped: scale- and offset-free"),
    "bock-log": ("bock-yj", "the shifted-log warp instead"),
    "bock-yj-floor": ("bock-yj", "noise floor 1e-10, not 1e-6"),
    "bock-yj-authors": ("bock-yj", "the authors' priors on its warped targets"),
    "bock-ev": ("bock-yj", "the warp kept only where the evidence prefers it (`evidence_warp=True`)"),
    PREVIOUS_BOCK: ("bock-ev", "noise floor 1e-10: jbo's default `bock` until its anchors were screened (issue #28)"),
    "bock-fast": (PREVIOUS_BOCK, "elliptical slice sampling and the anchors screened under one sample (issue #53)"),
    "bock-ess": (PREVIOUS_BOCK, "`bock-fast`'s sampler alone"),
    DEFAULT_BOCK: (PREVIOUS_BOCK, "`bock-fast`'s screen alone: jbo's default `bock` (issue #53)"),
    "bock-cosine": (PREVIOUS_BOCK, "Adam's step decaying along a half cosine (issue #57)"),
    "gp-warmup5": ("gp", "5 warm-up sweeps per fit (before 92c2e48)"),
    "matern-sobol": ("matern", "Sobol start (run on the GPU named above)"),
}
METHODS = DEFAULT_METHODS + tuple(m for m in COMPARED if m not in DEFAULT_METHODS)
GPU = re.compile(r"gpu \(([^)]+)\)")  # the GPU a call's machine line names
ISSUE_28_BARS = {"rosenbrock": 50, "rosenbrock_raw": 150}  # the default bock's mean best on Rosenbrock-20
#: Oh et al. 2018, Table 1 (mean ± std over 5 runs): Matérn, BOCK, the best of the six other baselines.
PAPER = {("repeated_branin", 20): ("0.41 ± 0.00", "0.50 ± 0.12", "Spearmint 5.07 ± 3.01"),
         ("repeated_branin", 100): ("0.54 ± 0.06", "1.03 ± 0.17", "Spearmint 2.78 ± 1.06"),
         ("repeated_hartmann6", 20): ("−3.29 ± 0.04", "−3.30 ± 0.02", "additive BO −3.03 ± 0.13"),
         ("repeated_hartmann6", 100): ("−2.91 ± 0.26", "−3.16 ± 0.10", "Spearmint −2.55 ± 0.19"),
         ("rosenbrock", 20): ("230.25 ± 187.41", "47.87 ± 33.94", "additive BO 3632.25 ± 1642.71"),
         ("rosenbrock", 100): ("231.42 ± 28.94", "128.69 ± 52.84", "additive BO 7378.27 ± 305.24"),
         ("levy", 20): ("0.38 ± 0.13", "0.54 ± 0.13", "elastic BO 1.35 ± 0.34"),
         ("levy", 100): ("2.17 ± 0.18", "6.78 ± 2.16", "Spearmint 4.87 ± 0.35")}


@functools.lru_cache(maxsize=None)
def problem_of(name: str, dim: int):
    """The benchmark at ``dim``: Rosenbrock normalised as BOCK's (``rosenbrock_raw``: not); repeated Hartmann6 at a
    ``dim`` not a multiple of 6 on its first ``6 ⌊dim/6⌋`` coordinates, the others dummies, as the reference code."""
    import jax
    import numpy as np

    from jbo.benchmarks import get_problem
    from jbo.benchmarks.registry import Problem

    if name == "repeated_hartmann6" and dim % 6:
        base = get_problem(name, dim=6 * (dim // 6))
        used = base.dim
        argmins = np.hstack([base.argmins, np.full((len(base.argmins), dim - used), 0.5)])
        return Problem(name, jax.jit(lambda x: base.fn(x[..., :used])), np.tile([[0.0, 1.0]], (dim, 1)),
                       base.optimum, argmins)
    if name == "rosenbrock_raw":
        return get_problem("rosenbrock", dim=dim)
    return get_problem(name, dim=dim, **({"normalized": True} if name == "rosenbrock" else {}))


def key_of(problem: str, dim: int, method: str, budget: int, n_init: int) -> str:
    return f"{problem}/{dim}/{method}/{budget}/init{n_init}"


def store_of(key: str) -> str:
    """A cell's study store (``--store``)."""
    return os.path.join(_common.RESULTS, "stores", re.sub(r"[^A-Za-z0-9_.-]+", "_", key))


def load() -> dict:
    return _common.read_json(os.path.join(_common.RESULTS, RESULTS_FILE), {})


def run_cell(problem: str, dim: int, method: str, seeds, store: bool = False) -> None:
    """Run a cell's missing ``seeds`` at the paper's budget in one :func:`jbo.study` call and store them (``store``:
    the study also keeps its runs in :func:`store_of` the cell as they go, and continues them; the store is removed
    once they are in the results file)."""
    budget = PAPER_BUDGET[dim]
    key = key_of(problem, dim, method, budget, N_INIT)
    todo = [s for s in seeds if str(s) not in load().get(key, {}).get("seeds", {})]
    if not todo:
        return
    p = problem_of(problem, dim)
    model, options = VARIANTS.get(method, (method, _common.PAPER_GP if method == "gp" else {}))
    if method != "random":
        options = {**START, **options, "n_init": N_INIT}
    arms = {method: {"model": model, **options}}
    (_, part, values, run), = _common.run_arms(p.evaluate, p.space(), budget, todo, arms,
                                               store=store_of(key) if store else None)
    call = {"seeds": [int(s) for s in part], "options": options, "seconds": run["seconds"],
            "compile_seconds": run["compile_seconds"], "date": datetime.date.today().isoformat(),
            "commit": _common.git_revision(), "machine": _common.machine()}
    items = [([key, "seeds", str(s)], {"values": v}) for s, v in zip(part, values)]
    items.append(([key, "calls", ",".join(map(str, part))], call))
    _common.merge_results(os.path.join(_common.RESULTS, RESULTS_FILE), items)
    if store:  # its runs are in the results file now
        shutil.rmtree(store_of(key), ignore_errors=True)
    print(f"{key} seeds {part}: best {mean_std(summary(load()[key])[0])} ({run['seconds']:.0f} s)", flush=True)


def arguments(description: str, methods, default_methods) -> argparse.ArgumentParser:
    """The options shared with ``bock_table2.py``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--methods", nargs="+", default=list(default_methods), choices=list(methods))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--store", action="store_true", help="keep each cell's runs as they go (experiments/results/"
                        "stores/<cell>): a killed run continues there")
    parser.add_argument("--no-report", action="store_true", help="leave BENCHMARKS.md alone")
    _common.add_output_arguments(parser)
    return parser


def run(args, cells, section: str) -> None:
    """Run the missing seeds of ``cells`` ``(problem, dim, method)``, add the command to the section's provenance
    (the grid grows cell by cell) and regenerate BENCHMARKS.md."""
    before, seeds = load(), range(args.first_seed, args.first_seed + args.seeds)
    for cell in cells:
        run_cell(*cell, seeds, args.store)
    if load() != before:
        _common.record_provenance(section, accumulates=True)
    if not args.no_report:
        _common.regenerate()


def main(argv=None):
    parser = arguments(__doc__.splitlines()[0], DEFAULT_METHODS + (DEFAULT_BOCK, PREVIOUS_BOCK), DEFAULT_METHODS)
    parser.add_argument("--dim", type=int, default=20, choices=(20, 100))
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=PROBLEMS + ("rosenbrock_raw",))
    args = _common.start(parser, argv)
    if args is not None:
        run(args, [(p, args.dim, m) for p in args.problems for m in args.methods], SECTION)


# --------------------------------------------------------------------------------------------------- the report
def table(header, rows) -> list[str]:
    """A markdown table: the BOCK sections' one renderer (``rows``: lists of cells)."""
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    return lines + ["| " + " | ".join(map(str, row)) + " |" for row in rows]


def summary(entry: dict):
    """``(best values, seeds, seconds per seed without compilation, compile seconds per call, calls)``."""
    import numpy as np

    seeds = sorted(entry.get("seeds", {}), key=int)
    best = np.array([np.nanmin(np.asarray(entry["seeds"][s]["values"], float)) for s in seeds])
    calls = list(entry.get("calls", {}).values())
    run_seconds = sum(c["seconds"] - c["compile_seconds"] for c in calls)
    return best, seeds, run_seconds / max(1, len(seeds)), [c["compile_seconds"] for c in calls], calls


def mean_std(best) -> str:
    import numpy as np

    digits = 2 if np.max(np.abs(best)) >= 10 else 4
    if len(best) < 2:
        return f"{np.mean(best):.{digits}f} (1 seed)"
    return f"{np.mean(best):.{digits}f} ± {np.std(best, ddof=1):.{digits}f}"


def paper_mean_std(text: str) -> tuple[float, float]:
    """``"−3.30 ± 0.02"`` -> ``(-3.30, 0.02)``."""
    mean, std = text.replace("−", "-").split(" ± ")
    return float(mean), float(std)


def start_of(method: str, init: str, calls) -> str:
    """A row's initial design: ``"centre + 1"`` (the centre, then Sobol points), ``"2 Sobol"``, ``"–"`` (random)."""
    if method == "random":
        return "–"
    n = int(init.removeprefix("init"))
    designs = {c.get("options", {}).get("design", "sobol") for c in calls}
    return f"centre + {n - 1}" if designs == {"centre"} else f"{n} Sobol" if designs == {"sobol"} else "mixed"


def cells(results: dict) -> dict:
    """``{(problem, dim, budget, init, method): entry}`` of the stored runs the table shows, in its order."""
    out = {}
    for key, entry in results.items():
        problem, dim, method, budget, init = key.split("/")
        if problem in PROBLEMS and method in METHODS and int(dim) in (20, 100) and entry.get("seeds"):
            out[problem, int(dim), int(budget), init, method] = entry
    return dict(sorted(out.items(), key=lambda kv: (PROBLEMS.index(kv[0][0]), *kv[0][1:4], METHODS.index(kv[0][4]))))


def bock_cell(results: dict, problem: str, dim: int, method: str = "bock"):
    """The stored ``method`` runs of (problem, dim) at the paper's budget (the start with the most seeds), or None."""
    found = [(len(entry["seeds"]), entry) for key, entry in results.items() if entry.get("seeds")
             and key.split("/")[:4] == [problem, str(dim), method, str(PAPER_BUDGET[dim])]]
    return max(found, key=lambda f: f[0])[1] if found else None


def paired(results: dict, variant: str, baseline: str, problem: str, dim: int, budget: int, init: str) -> str:
    """``"k of n (median vs median)"``: the seeds both ran on which ``variant`` is lower than ``baseline``."""
    import numpy as np

    runs = [results.get(key_of(problem, dim, m, budget, init.removeprefix("init"))) for m in (variant, baseline)]
    if not all(runs):
        return ""
    (a, a_seeds), (b, b_seeds) = (summary(r)[:2] for r in runs)
    common = sorted(set(a_seeds) & set(b_seeds), key=int)
    a, b = np.array([a[a_seeds.index(s)] for s in common]), np.array([b[b_seeds.index(s)] for s in common])
    return f"{problem}-{dim} {int(np.sum(a < b))} of {len(common)} ({np.median(a):.4g} vs {np.median(b):.4g})"


def main_row(problem: str, dim: int, budget: int, init: str, method: str, entry: dict) -> list:
    best, seeds, per_seed, compile_seconds, calls = summary(entry)
    paper = PAPER.get((problem, dim), ("–",) * 3)
    evaluations = budget if budget == PAPER_BUDGET.get(dim) else f"{budget} (paper {PAPER_BUDGET.get(dim, '–')})"
    gpus = "".join(f"; {g}" for g in sorted({g for c in calls for g in GPU.findall(c.get("machine", ""))}))
    seconds = f"{per_seed:.0f} ({', '.join(f'{c:.0f}' for c in compile_seconds)}{gpus})"
    return [f"{problem} ({OPTIMA[problem]:g})", dim, evaluations, start_of(method, init, calls), method,
            f"{len(seeds)}{'' if len(seeds) >= 5 else ' (paper 5)'}", mean_std(best), *paper[:2], seconds, paper[2]]


def report() -> dict:
    """The main table (every stored cell), then each variant against the row it is compared with, seed by seed."""
    results = load()
    shown = cells(results)
    lines = ["## BOCK Table 1: high-dimensional benchmarks (Oh et al. 2018)", "", _common.header(SECTION),
             "Best value after the whole budget (mean ± std over seeds, as the paper; paper: 5 runs). \"s / run\": wall"
             " time without compilation per seed (each call's compile seconds in brackets) on the machine above unless"
             " a GPU is named; \"start\": the initial design, in the budget. Rows below the four methods are variants:"
             f" only `{DEFAULT_BOCK}` (jbo's default `bock`) and `{PREVIOUS_BOCK}` (the default before it) still"
             " run, the others' runners are"
             " retired (the commits they ran at are listed below).", ""]
    lines += table(["problem (optimum)", "d", "evaluations", "start", "method", "seeds", "best value (mean ± std)",
                    "paper Matérn", "paper BOCK", "s / run (compile)", "paper: best other"],
                   [main_row(*key, entry) for key, entry in shown.items()])
    machines = {c.get("machine", "") for e in shown.values() for c in e.get("calls", {}).values()}
    gpus = sorted(m for m in machines if GPU.search(m))
    if gpus:
        lines += ["", "Rows that name a GPU ran there: " + "; ".join(f"`{m}`" for m in gpus) + "."]
    compared = []
    for method, (baseline, text) in COMPARED.items():
        runs = sorted({k[:4] for k in shown if k[4] == method})
        if runs:
            found = "; ".join(filter(None, (paired(results, method, baseline, *c) for c in runs)))
            commits = sorted({c.get("commit", "?") for k, e in shown.items() if k[4] == method
                              for c in e.get("calls", {}).values()})
            compared.append([f"`{method}`", text, f"`{baseline}`", found or "–", ", ".join(commits)])
    header = ["method", "how it differs", "compared with", "seeds lower (medians)", "ran at commit"]
    lines += [""] + table(header, compared)
    at_100 = sorted({k[4] for k in shown if k[1] == 100}, key=METHODS.index)
    lines += units_note(results) + [
        "", f"100-d column: {', '.join(f'`{m}`' for m in at_100) or 'nothing'} stored. A claim is reproduced when"
        " jbo's mean best is no worse than the paper's BOCK mean + its std + 1 % of |f*| (DNGO's rule). Figures:"
        " `experiments/figures/bock_table1_<problem>_<d>.png`."]
    return {SECTION: "\n".join(lines)}


def figures() -> None:
    """Each (problem, dimension)'s best value so far per method, mean ± standard error over seeds."""
    import numpy as np

    from jbo.plotting import plot_convergence

    curves = {}
    for (problem, dim, budget, _, method), entry in cells(load()).items():
        runs = [np.asarray(entry["seeds"][s]["values"], float) for s in summary(entry)[1]]
        curves.setdefault((problem, dim, budget), {})[method] = np.stack(runs)
    os.makedirs(_common.FIGURES, exist_ok=True)
    for (problem, dim, budget), by_method in curves.items():
        plot_convergence(by_method, optimum=problem_of(problem, dim).optimum,
                         path=os.path.join(_common.FIGURES, f"bock_table1_{problem}_{dim}.png"),
                         title=f"{problem}, d = {dim}: best value ({budget} evaluations)")


def units_note(results: dict, dim: int = 20) -> list[str]:
    """Rosenbrock in raw and normalised units (issue #28): a scale-free variant runs the same algorithm on both, up to
    rounding; its runs are pooled in normalised units."""
    centre = problem_of("rosenbrock_raw", dim).bounds.mean(axis=1)  # any point where f is not 0 gives the factor
    factor = float(problem_of("rosenbrock", dim).fn(centre) / problem_of("rosenbrock_raw", dim).fn(centre))
    text = "".join(variant_units_note(results, dim, m, factor) for m in METHODS)
    if not text:
        return []
    return ["", f"Rosenbrock in raw and normalised units (issue #28; normalised = {factor:.4f} × raw):{text}"]


def variant_units_note(results: dict, dim: int, method: str, factor: float) -> str:
    """:func:`units_note`'s sentence on ``method`` run in both units, its raw runs scaled by ``factor`` ("" before)."""
    import numpy as np

    raw, normalised = (bock_cell(results, p, dim, method) for p in ("rosenbrock_raw", "rosenbrock"))
    if raw is None or normalised is None:
        return ""
    raw_best, normalised_best = summary(raw)[0], summary(normalised)[0]
    pooled = np.concatenate([factor * raw_best, normalised_best])
    return (f" `{method}`: raw mean best {raw_best.mean():.1f} over {len(raw_best)} seeds (normalised"
            f" {normalised_best.mean():.2f} over {len(normalised_best)}); pooled, {pooled.mean():.1f} ±"
            f" {pooled.std(ddof=1):.1f} (normalised units; median {np.median(pooled):.1f}, max {pooled.max():.1f}).")


def claims() -> list[dict]:
    """Table 1's BOCK column: ``yes`` when the paper's model's mean best is no worse than the paper's mean + std + 1 %
    of |f*| (a dimension without ``bock`` runs: one ``not run`` row); then issue #28's bars for jbo's default ``bock``
    (scale-free) on Rosenbrock-20 in both units."""
    import numpy as np

    results, rows, paper = load(), [], "Oh et al. 2018, Table 1"
    for dim in (20, 100):
        if not any(bock_cell(results, problem, dim) for problem in PROBLEMS):
            what = f"the {dim}-d column ({PAPER_BUDGET[dim]} evaluations): BOCK's best value on the four problems"
            figures = "; ".join(f"{LABELS[p]} {PAPER[p, dim][1]}" for p in PROBLEMS)
            stored = "– (only random search stored)" if any(k[1] == dim for k in cells(results)) else "–"
            rows.append(_common.claim(paper, what, figures, stored, "not run", SECTION))
            continue
        for problem in PROBLEMS:
            what = (f"{LABELS[problem]} in {dim} dimensions, best value after {PAPER_BUDGET[dim]} evaluations (mean ±"
                    f" std; optimum {OPTIMA[problem]:g})")
            entry, figure, verdict = bock_cell(results, problem, dim), "–", "not run"
            if entry is not None:
                best = summary(entry)[0]
                mean, std = paper_mean_std(PAPER[problem, dim][1])
                figure = f"BOCK (the authors' priors, objective units): {mean_std(best)} ({len(best)} seeds)"
                default, gp = bock_cell(results, problem, dim, DEFAULT_BOCK), bock_cell(results, problem, dim, "gp")
                if default is not None:
                    figure += f"; jbo's default bock: {mean_std(summary(default)[0])} ({len(default['seeds'])} seeds)"
                if gp is not None:
                    figure += f"; jbo's ARD GP: {mean_std(summary(gp)[0])}"
                verdict = "yes" if np.mean(best) <= mean + std + 0.01 * abs(OPTIMA[problem]) else "no"
            rows.append(_common.claim(paper, what, f"{PAPER[problem, dim][1]} (5 runs)", figure, verdict, SECTION,
                                      headline=entry is not None and (problem, dim) == ("rosenbrock", 20)))
    for problem, label in (("rosenbrock", "normalised"), ("rosenbrock_raw", "raw units")):
        entry = bock_cell(results, problem, 20, DEFAULT_BOCK)
        if entry is not None:
            best, bar = summary(entry)[0], ISSUE_28_BARS[problem]
            rows.append(_common.claim(
                "jbo", f"default (scale-free) bock, Rosenbrock-20 {label}, 200 evaluations: mean best ≤ {bar}",
                f"{PAPER['rosenbrock', 20][1]} (the paper's BOCK, normalised)", f"{mean_std(best)} ({len(best)}"
                " seeds)", "yes" if len(best) >= 5 and np.mean(best) <= bar else "no", SECTION))
    return rows


if __name__ == "__main__":
    main()
