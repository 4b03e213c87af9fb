"""BOCK's Table 1 (Oh et al. 2018): repeated Branin, repeated Hartmann6, Rosenbrock and Levy in 20-d (200
evaluations) and 100-d (600 evaluations); BOCK vs the paper's Matérn baseline vs jbo's ARD GP vs random search.

Each (problem, dimension, method, budget) is one ``jbo.minimize_many`` call: all seeds of a method run in one
compiled, ``vmap``-ped program (observations padded to the budget from the first suggestion). Every BO method
starts as the paper's code does (HyperSphere's ``run_BO.py``, for BOCK and the Matérn GP alike): at the box's
centre, then ``--n-init`` - 1 more points (jbo's Sobol design), the budget counting them. Methods:

* ``bock``: ``model="bock"``, the paper's model (cylindrical kernel, warped radius, P = 3, the authors' priors in
  the objective's units, 10 slice samples per suggestion; 20 000 fresh Sobol anchors, the best 20 refined by
  Adam; :mod:`jbo.models.bock`);
* ``matern``: the paper's Matérn baseline, ``model="matern"`` (non-ARD Matérn-5/2 GP, same search);
* ``gp``: jbo's default GP (ARD Matérn-5/2, 10 slice samples, jbo's default search);
* ``random``: uniform random search.

Variants, each with every option that makes it spelled out (opt-in; investigations of the Rosenbrock row):

* ``bock-standardised``: BOCK on standardised targets under jbo's priors (``units="standardised"``, invariant to
  the objective's scale), Sobol start;
* ``bock-floor``: ``bock-standardised`` with ``noise_floor=1e-10`` instead of ``1e-6``;
* ``bock-centre``: ``bock-standardised`` started at the centre;
* ``bock-objective``: ``bock`` (objective units) with the Sobol start;
* ``gp-warmup5``: the GP with 5 warm-up slice sweeps per fit (its default before 92c2e48), Sobol start;
* ``matern-sobol``: the Matérn baseline with the Sobol start.

Repeated Hartmann6 at 20 (100) dimensions is the mean over 3 (16) Hartmann6 blocks on the first 18 (96)
coordinates, the last 2 (4) being dummies, as in the reference code. Rosenbrock is BOCK's normalised one
(``rosenbrock(d, normalized=True)``: its values are those of the paper's table). Results go to the
resumable ``experiments/results/bock_runs.json`` (shared with ``bock_table2.py``; seeds already run are
skipped, missing ones run in one call) and to the ``bock_table1`` section of BENCHMARKS.md.

    python experiments/bock_table1.py [--dim 20] [--budget 200] [--seeds 5] [--methods bock matern gp random]
    python experiments/bock_table1.py --dim 100 --budget 600 --seeds 1     # the 100-d column, as far as time allows
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

RESULTS = os.path.join(_common.RESULTS, "bock_runs.json")  # --results replaces it (e.g. for a smoke test)
PROBLEMS = ("repeated_branin", "repeated_hartmann6", "rosenbrock", "levy")
METHODS = ("bock", "matern", "gp", "random", "bock-standardised", "bock-floor", "bock-centre", "bock-objective",
           "gp-warmup5", "matern-sobol")
DEFAULT_METHODS = ("bock", "matern", "gp", "random")
# Every BO method starts as the paper's code does (HyperSphere, BO/run_BO.py, for BOCK and the Matérn GP
# alike): the box's centre, then one more point (here the first of jbo's Sobol design). A variant may override.
START = {"design": "centre"}
STANDARDISED = {"units": "standardised"}
# A method name is a jbo model name, or one of these: a model with every option that defines it spelled out,
# so that a variant stays what it was run as when a default changes.
VARIANTS = {
    # each BOCK model on standardised targets under jbo's priors, Sobol start (the defaults before d49dc7a;
    # bock-w/-b's are Table 2's rows)
    **{f"{m}-standardised": (m, {**STANDARDISED, "design": "sobol"}) for m in ("bock", "bock-w", "bock-b")},
    # the noise floor lowered to 1e-10 (plus the Cholesky's 1e-8 jitter): on Rosenbrock the floor of 1e-6
    # of the standardised targets' variance bounds the resolution; see the notes
    "bock-floor": ("bock", {**STANDARDISED, "design": "sobol", "noise_floor": 1e-10}),
    "bock-centre": ("bock", {**STANDARDISED, "design": "centre"}),
    "bock-objective": ("bock", {"units": "objective", "design": "sobol"}),
    "gp-warmup5": ("gp", {"num_warmup": 5, "design": "sobol"}),
    "matern-sobol": ("matern", {"design": "sobol"}),
}
PAPER_BUDGET = {20: 200, 50: 400, 100: 600}
# Oh et al. 2018, Table 1: best value found, mean ± std over 5 runs (Matérn, BOCK; the other columns below).
PAPER = {
    ("repeated_branin", 20): {"matern": "0.41 ± 0.00", "bock": "0.50 ± 0.12"},
    ("repeated_branin", 100): {"matern": "0.54 ± 0.06", "bock": "1.03 ± 0.17"},
    ("repeated_hartmann6", 20): {"matern": "−3.29 ± 0.04", "bock": "−3.30 ± 0.02"},
    ("repeated_hartmann6", 100): {"matern": "−2.91 ± 0.26", "bock": "−3.16 ± 0.10"},
    ("rosenbrock", 20): {"matern": "230.25 ± 187.41", "bock": "47.87 ± 33.94"},
    ("rosenbrock", 100): {"matern": "231.42 ± 28.94", "bock": "128.69 ± 52.84"},
    ("levy", 20): {"matern": "0.38 ± 0.13", "bock": "0.54 ± 0.13"},
    ("levy", 100): {"matern": "2.17 ± 0.18", "bock": "6.78 ± 2.16"},
}
PAPER_OTHERS = {  # the best of the paper's other baselines (SMAC, TPE, Spearmint, Spearmint+, additive, elastic BO)
    ("repeated_branin", 20): "Spearmint 5.07 ± 3.01", ("repeated_branin", 100): "Spearmint 2.78 ± 1.06",
    ("repeated_hartmann6", 20): "additive BO −3.03 ± 0.13", ("repeated_hartmann6", 100): "Spearmint −2.55 ± 0.19",
    ("rosenbrock", 20): "additive BO 3632.25 ± 1642.71", ("rosenbrock", 100): "additive BO 7378.27 ± 305.24",
    ("levy", 20): "elastic BO 1.35 ± 0.34", ("levy", 100): "Spearmint 4.87 ± 0.35",
}
OPTIMA = {"repeated_branin": 0.3979, "repeated_hartmann6": -3.3223, "rosenbrock": 0.0, "levy": 0.0}


@functools.lru_cache(maxsize=None)
def problem_of(name: str, dim: int):
    """The benchmark at ``dim``: Rosenbrock normalised (BOCK's); repeated Hartmann6 at a ``dim`` that is not a
    multiple of 6 (the paper's 20 and 100) on its first ``6 ⌊dim/6⌋`` coordinates, the others dummies, as the
    reference code's integer division ``n_repeat = ndim / 6`` makes it."""
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
    return get_problem(name, dim=dim, **({"normalized": True} if name == "rosenbrock" else {}))


def key_of(problem: str, dim: int, method: str, budget: int, n_init: int) -> str:
    return f"{problem}/{dim}/{method}/{budget}/init{n_init}"


def load() -> dict:
    return json.load(open(RESULTS)) if os.path.exists(RESULTS) else {}


def add_common_arguments(parser) -> None:
    """Options shared with ``bock_table2.py``."""
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--n-init", type=int, default=2)
    parser.add_argument("--results", default=None, help=f"results JSON (default {os.path.relpath(RESULTS, _common.ROOT)})")
    parser.add_argument("--report-only", action="store_true", help="rewrite the section from the saved JSON")
    parser.add_argument("--no-report", action="store_true", help="leave BENCHMARKS.md alone (smoke tests)")
    parser.add_argument("--maximize", type=json.loads, default=None,
                        help="JSON dict of acquisition-search sizes (smoke tests only; the section says so)")


def use_results(path) -> None:
    global RESULTS
    if path:
        RESULTS = os.path.abspath(path)


def run_cell(problem: str, dim: int, method: str, budget: int, seeds, n_init: int, options=None) -> dict:
    """Run the missing ``seeds`` of one (problem, dimension, method, budget) in one ``minimize_many`` call
    and merge them into the results file. Returns the merged results."""
    import jbo

    key = key_of(problem, dim, method, budget, n_init)
    done = load().get(key, {}).get("seeds", {})
    todo = [s for s in seeds if str(s) not in done]
    if not todo:
        return load()
    p = problem_of(problem, dim)
    model, extra = VARIANTS.get(method, (method, {}))
    extra = dict(extra) if method == "random" else {**START, **extra, "n_init": n_init}
    extra.update(options or {})
    start = time.perf_counter()
    result = jbo.minimize_many(p.evaluate, p.space(), budget=budget, seeds=todo, model=model, **extra)
    seconds = time.perf_counter() - start
    for seed, values in zip(todo, result.values):
        _common.merge_result(RESULTS, [key, "seeds", str(seed)], {"values": [float(v) for v in values]})
    call = {"seeds": [int(s) for s in todo], "options": extra, "seconds": seconds, "compile_seconds": result.compile_seconds,
            "date": datetime.date.today().isoformat(), "commit": _common.git_revision(), "machine": _common.machine()}
    results = _common.merge_result(RESULTS, [key, "calls", ",".join(map(str, todo))], call)
    best = result.best_values
    print(f"{key} seeds {todo}: best {best.mean():.4g} ± {best.std(ddof=1) if len(best) > 1 else 0:.3g} "
          f"({seconds:.0f} s, compile {result.compile_seconds:.0f} s)", flush=True)
    return results


def summary(entry: dict):
    """``(best values (S,), seeds, seconds per seed, compile seconds of the calls)`` of one results entry."""
    import numpy as np

    seeds = sorted(entry.get("seeds", {}), key=int)
    best = np.array([np.nanmin(np.asarray(entry["seeds"][s]["values"], float)) for s in seeds])
    calls = list(entry.get("calls", {}).values())
    run_seconds = sum(c["seconds"] - c["compile_seconds"] for c in calls)
    compile_seconds = [c["compile_seconds"] for c in calls]
    return best, seeds, run_seconds / max(1, len(seeds)), compile_seconds, calls


def search_note(calls) -> str:
    """`` (search {...})`` when a call ran with a non-default acquisition search (smoke tests), else ``""``."""
    searches = {json.dumps(c.get("options", {}).get("maximize"), sort_keys=True) for c in calls
                if c.get("options", {}).get("maximize")}
    return "".join(f" (search {s})" for s in sorted(searches))


def gpu_of(machine: str) -> str | None:
    """The GPU named in a call's machine line (``"... gpu (NVIDIA H200); ..."`` -> ``"NVIDIA H200"``), else None."""
    match = re.search(r"gpu \(([^)]+)\)", machine)
    return match.group(1) if match else None


def mean_std(best) -> str:
    import numpy as np

    std = float(np.std(best, ddof=1)) if len(best) > 1 else float("nan")
    digits = 2 if np.max(np.abs(best)) >= 10 else 4
    return f"{np.mean(best):.{digits}f} ± {std:.{digits}f}" if len(best) > 1 else f"{np.mean(best):.{digits}f} (1 seed)"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=20)
    parser.add_argument("--budget", type=int, default=None, help="evaluations per run (default: the paper's, "
                        "200 at d = 20, 400 at 50, 600 at 100)")
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=PROBLEMS)
    parser.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS), choices=METHODS)
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    _common.setup()
    use_results(args.results)
    budget = args.budget or PAPER_BUDGET.get(args.dim, 200)
    if not args.report_only:
        seeds = range(args.first_seed, args.first_seed + args.seeds)
        options = {"maximize": args.maximize} if args.maximize else None
        for problem in args.problems:
            for method in args.methods:
                run_cell(problem, args.dim, method, budget, seeds, args.n_init,
                         None if method == "random" else options)
    if not args.no_report:
        write_report(load())


#: What each variant is, and the row it is compared with seed by seed.
VARIANT_NOTES = {
    "bock-standardised": ("bock", "`bock-standardised`: BOCK with jbo's priors on standardised targets"
                          " (`units=\"standardised\"`: invariant to the objective's scale) and the Sobol start: `bock`'s"
                          " defaults before d49dc7a."),
    "bock-centre": ("bock-standardised", "`bock-centre`: `bock-standardised` started at the box's centre."),
    "bock-objective": ("bock-standardised", "`bock-objective`: BOCK in the objective's units under the authors'"
                       " priors (as `bock`), Sobol start. On Rosenbrock (values to 10⁶) the signal-variance bound"
                       " e²⁰ binds and holds the GP's prior variance far below the values' variance; on the other"
                       " three problems the bounds do not bind."),
    "bock-floor": ("bock-standardised", "`bock-floor`: `bock-standardised` with its noise floor lowered from 1e-6"
                   " to 1e-10 of the standardised targets' variance (on Rosenbrock 1e-6 is a noise of ~300 in the"
                   " objective's units)."),
    "gp-warmup5": ("gp", "`gp-warmup5`: the ARD GP with 5 warm-up slice sweeps per fit (its default before"
                   " 92c2e48; today's is 0) and the Sobol start."),
    "matern-sobol": ("matern", "`matern-sobol`: the Matérn baseline from the Sobol start (run on the GP machine"
                     " named above while its float64 program deadlocked on this 2-core CPU, worked around since"
                     " 7ad3488)."),
}


def start_of(method: str, init: str, calls) -> str:
    """The initial design of a row: ``"centre + 1"`` (the centre, then Sobol points), ``"2 Sobol"``, ``"–"``."""
    if method == "random":
        return "–"
    n = int(init.removeprefix("init"))
    designs = {c.get("options", {}).get("design", "sobol") for c in calls}
    if designs == {"centre"}:
        return f"centre + {n - 1}"
    return f"{n} Sobol" if designs == {"sobol"} else "mixed"


def write_report(results: dict) -> None:
    import numpy as np

    from jbo.plotting import plot_convergence

    lines = ["## BOCK Table 1: high-dimensional benchmarks (Oh et al. 2018)", "", _common.header(),
             "Best value found after the whole budget (mean ± std over seeds, as the paper reports). Each row is"
             " one or more `jbo.minimize_many` calls (all seeds of a method in one compiled program); \"s / run\""
             " is the wall time of those calls without compilation divided by the number of seeds (the seeds"
             " run together, vmapped), compile time apart, on the machine above (2 CPU cores, busy with other"
             " work) unless the column names a GPU: those rows ran on that card (jax and Python as noted"
             " below the table). \"start\": the initial design, counted in the budget: the box's centre and"
             " then jbo's Sobol points (the paper's code: the centre and one uniform point, for every method),"
             " or Sobol points only. Paper: 5 runs each; its Matérn and BOCK columns are beside jbo's, the best"
             " of its other six baselines in the last column. Rows below the four methods are variants"
             " (notes under the table).", "",
             "| problem (optimum) | d | evaluations | start | method | seeds | best value (mean ± std) |"
             " paper Matérn | paper BOCK | s / run (compile) | paper: best other |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    rows, curves = {}, {}
    for key, entry in results.items():
        problem, dim, method, budget, init = key.split("/")
        if problem not in PROBLEMS or method not in METHODS or int(dim) not in (20, 100) or not entry.get("seeds"):
            continue
        rows[(PROBLEMS.index(problem), int(dim), int(budget), init, METHODS.index(method))] = (key, entry)
    means = {}
    for (pi, dim, budget, init, mi), (key, entry) in sorted(rows.items()):
        problem, method = PROBLEMS[pi], METHODS[mi]
        best, seeds, per_seed, compile_seconds, calls = summary(entry)
        means[(problem, dim, budget, init, method)] = float(np.mean(best))
        paper = PAPER.get((problem, dim), {})
        note = "" if budget == PAPER_BUDGET.get(dim) else f" (paper {PAPER_BUDGET.get(dim, '–')})"
        seeds_note = f"{len(seeds)}" + ("" if len(seeds) >= 5 else " (paper 5)")
        compile_text = ", ".join(f"{c:.0f}" for c in compile_seconds)
        gpus = sorted({gpu_of(c.get("machine", "")) for c in calls} - {None})
        compile_text += "".join(f"; {g}" for g in gpus)
        lines.append(f"| {problem} ({OPTIMA[problem]:g}) | {dim} | {budget}{note} | {start_of(method, init, calls)} |"
                     f" {method} | {seeds_note} | {mean_std(best)} | {paper.get('matern', '–')} |"
                     f" {paper.get('bock', '–')} | {per_seed:.0f} ({compile_text}) |"
                     f" {PAPER_OTHERS.get((problem, dim), '–')} |")
        curves.setdefault((problem, dim, budget, init), {})[method] = np.stack(
            [np.asarray(entry["seeds"][s]["values"], float) for s in seeds])
    gpu_machines = sorted({c["machine"] for _, entry in rows.values() for c in entry.get("calls", {}).values()
                           if gpu_of(c.get("machine", ""))})
    if gpu_machines:
        lines += ["", "Rows that name a GPU ran there, with that machine's own Python stack: "
                  + "; ".join(f"`{m}`" for m in gpu_machines) + "."]

    def paired(variant, baseline, problem, dim, budget, init):
        """``(wins, seeds in common, median of variant, median of baseline)`` over the seeds both ran."""
        cell = lambda m: results.get("/".join([problem, str(dim), m, str(budget), init]))  # noqa: E731
        if not cell(variant) or not cell(baseline):
            return None
        (a, a_seeds), (b, b_seeds) = summary(cell(variant))[:2], summary(cell(baseline))[:2]
        common = sorted(set(a_seeds) & set(b_seeds), key=int)
        a = np.array([a[a_seeds.index(s)] for s in common])
        b = np.array([b[b_seeds.index(s)] for s in common])
        return int(np.sum(a < b)), len(common), float(np.median(a)), float(np.median(b))

    lines += ["", "Acceptance (issue 13), on the rows above (BOCK and the ARD GP from the same start):"]
    better = []
    for (problem, dim, budget, init) in sorted({k[:4] for k in means}):
        get = lambda m: means.get((problem, dim, budget, init, m))  # noqa: E731
        if get("bock") is None:
            continue
        others = ", ".join(f"{m} {get(m):.4g}" for m in ("matern", "gp", "random") if get(m) is not None)
        verdict = ""
        if get("gp") is not None:
            wins, count = paired("bock", "gp", problem, dim, budget, init)[:2]
            better.append(get("bock") < get("gp"))
            verdict += ("; better than the ARD GP" if better[-1] else "; **not** better than the ARD GP") + \
                f" (lower on {wins} of {count} seeds)"
        bar = {("rosenbrock", 20): 100.0, ("repeated_hartmann6", 20): -3.20}.get((problem, dim))
        if bar is not None and budget == 200:
            verdict += f"; bar ≤ {bar:g}: {'met' if get('bock') <= bar else '**not met**'}"
        lines.append(f"- {problem}-{dim}, {budget} evaluations: BOCK {get('bock'):.4g} ({others}){verdict}.")
    if better:
        lines.append(f"- BOCK's mean is below the ARD GP's on {sum(better)} of {len(better)} problems.")
    lines += ["", "Variants (\"k of n\": seeds on which the variant is lower than the row it is compared with;"
              " the two medians in parentheses):"]
    for variant, (baseline, text) in VARIANT_NOTES.items():
        cells = sorted(k[:4] for k in means if k[4] == variant)
        if not cells:
            continue
        pairs = [(c, paired(variant, baseline, *c)) for c in cells]
        compared = "; ".join(f"{problem}-{dim} {p[0]} of {p[1]} ({p[2]:.4g} vs {p[3]:.4g})"
                             for (problem, dim, _, _), p in pairs if p)
        lines.append(f"- {text}" + (f" Against `{baseline}`: {compared}." if compared else ""))
    figures = []
    os.makedirs(os.path.join(_common.ROOT, "experiments", "figures"), exist_ok=True)
    for (problem, dim, budget, init), by_method in sorted(curves.items()):
        figure = os.path.join("experiments", "figures", f"bock_table1_{problem}_{dim}.png")
        plot_convergence(by_method, optimum=problem_of(problem, dim).optimum,
                         path=os.path.join(_common.ROOT, figure),
                         title=f"{problem}, d = {dim}: best value ({budget} evaluations)")
        figures.append(f"`{figure}`")
    if figures:
        lines += ["", "Figures (mean ± standard error over seeds): " + ", ".join(figures) + "."]
    _common.update_section("bock_table1", "\n".join(lines))


if __name__ == "__main__":
    main()
