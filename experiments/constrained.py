"""Unknown constraints: constrained EI against ignoring the constraint and against imputing the worst value.

Each problem is a benchmark whose evaluations crash (return nothing) in an unknown region covering a
sizeable share of the box, the "evaluation crashed" constraint of Snoek et al. (2015, §3.2):

* ``branin_disk``: Branin, feasible only in the disk (x1 - 2.5)^2 + (x2 - 7.5)^2 <= 50 (Gelbart et al.
  2014's constrained Branin; 30 % of the box infeasible; one of Branin's three minimisers is feasible);
* ``branin_crash``: Branin, crashing for x1 > 4 (40 %; two minimisers lost, the third 0.86 from the edge);
* ``hartmann6_crash``: Hartmann6, crashing where x1 + x2 > 1 (50 %; the optimum has x1 + x2 = 0.35).

Three more whose infeasible region covers every global minimiser, so that the feasible optimum lies
elsewhere, on the region's boundary or in another basin (optima by multistart SLSQP on the constraints,
:func:`feasible_optimum`):

* ``branin_holes``: Branin, crashing where x1 + x2 > 9 or within 2 of (pi, 2.275) (~60 %; best feasible
  0.4105, next to the minimiser (-pi, 12.275));
* ``camel_band``: six-hump camel, crashing where |x2| > 0.4 (80 %; best feasible -0.5476 on the boundary);
* ``hartmann6_hole``: Hartmann6, crashing within 0.3 of its minimiser (best feasible -3.2032, the second
  basin).

Methods (jbo's GP, MAP inference; a problem's methods and seeds in one ``jbo.study``, where ``worst`` and
``ignore`` share a compiled program):
``cei`` (``failures="constraint"``: a least-squares GP classifier of where evaluations crash, EI × P[feasible],
the crashes in the objective's model at the median of the feasible values; what ``tell(c, None,
feasible=False)`` does), ``cei-ignore`` / ``cei-worst`` (the crashes left out of the objective's model, as
Gelbart et al. fit it, or at the worst value: ``infeasible="ignore"`` / ``"worst"``),
``worst`` (``failures="worst"``: crashes imputed with the worst value seen) and ``ignore``
(``failures="ignore"``: crashes left out, the constraint ignored); opt-in, ``cei-laplace``: CEI with the
Laplace-logistic GP classifier (``classifier="laplace"``) instead of least-squares classification.
``--model dngo`` runs them with DNGO (its classifier: the paper's Laplace logistic regression on the
network's basis; rows ``dngo cei`` etc.). The score is the best feasible value at the budget, mean ±
standard error over seeds. Results go to experiments/results/constrained.json (a row per problem and
method, replaced by a rerun, with the provenance of its run), from which BENCHMARKS.md is regenerated
(``experiments/report.py``; ``--report-only``: only that).

    python experiments/constrained.py --seeds 10 [--results-dir DIR] [--report-only]
"""

from __future__ import annotations

import argparse
import functools
import math
import operator
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

# method -> (failures policy, model options)
METHODS = {"cei": ("constraint", {}), "worst": ("worst", {}), "ignore": ("ignore", {}),
           "cei-ignore": ("constraint", {"infeasible": "ignore"}), "cei-worst": ("constraint", {"infeasible": "worst"}),
           "cei-laplace": ("constraint", {"classifier": "laplace"})}
DEFAULT_METHODS = ("cei", "worst", "ignore")
BUDGETS = {"branin_disk": 40, "branin_crash": 40, "hartmann6_crash": 80,
           "branin_holes": 40, "camel_band": 40, "hartmann6_hole": 80}
# Hartmann6's global minimiser (Hartmann6's table of constants; the registry's optimum value is attained there).
HARTMANN6_ARGMIN = (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573)
# The feasible regions of the problems covering every global minimiser, as constraints g(c) >= 0 on a
# configuration (JAX or Python values): infeasible where any is negative.
COVERING_CONSTRAINTS = {
    "branin_holes": (lambda c: 9.0 - c["x1"] - c["x2"],
                     lambda c: (c["x1"] - math.pi) ** 2 + (c["x2"] - 2.275) ** 2 - 4.0),
    "camel_band": (lambda c: 0.4 - c["x2"], lambda c: 0.4 + c["x2"]),
    "hartmann6_hole": (lambda c: sum((c[f"x{i + 1}"] - v) ** 2 for i, v in enumerate(HARTMANN6_ARGMIN)) - 0.3**2,),
}


def feasible_optimum(base, constraints, starts: int = 200, seed: int = 0) -> float:
    """The best feasible value of ``base`` under ``constraints`` (each ``g(c) >= 0``): SLSQP from ``starts``
    feasible uniform points of the box (scipy), the lowest converged feasible value."""
    import numpy as np
    from scipy.optimize import minimize

    space = base.space()
    names = list(space.params)
    bounds = [(space.params[n].low, space.params[n].high) for n in names]
    config = lambda x: dict(zip(names, (float(v) for v in x)))
    feasible = lambda x: all(g(config(x)) >= -1e-9 for g in constraints)
    rng = np.random.default_rng(seed)
    best = np.inf
    for x0 in rng.uniform(*np.transpose(bounds), size=(starts, len(names))):
        if not feasible(x0):
            continue
        found = minimize(lambda x: float(base.evaluate(config(x))), x0, method="SLSQP", bounds=bounds,
                         constraints=[{"type": "ineq", "fun": lambda x, g=g: g(config(x))} for g in constraints])
        if found.success and feasible(found.x):
            best = min(best, float(found.fun))
    return best


def problem(name: str):
    """``(space, objective, best feasible value)`` of a constrained problem; the objective takes JAX or
    Python values and returns nan (a crash) outside the feasible region."""
    import jax.numpy as jnp

    from jbo.benchmarks import get_problem

    base = get_problem({"camel": "six_hump_camel"}.get(name.split("_")[0], name.split("_")[0]))
    if name == "branin_disk":
        infeasible = lambda c: (c["x1"] - 2.5) ** 2 + (c["x2"] - 7.5) ** 2 > 50.0
        optimum = base.optimum  # (pi, 2.275) is inside the disk
    elif name == "branin_crash":
        infeasible = lambda c: c["x1"] > 4.0
        optimum = base.optimum  # (pi, 2.275) is feasible
    elif name == "hartmann6_crash":
        infeasible = lambda c: c["x1"] + c["x2"] > 1.0
        optimum = base.optimum
    elif name in COVERING_CONSTRAINTS:
        constraints = COVERING_CONSTRAINTS[name]
        infeasible = lambda c: functools.reduce(operator.or_, [g(c) < 0.0 for g in constraints])
        optimum = feasible_optimum(base, constraints)
    else:
        raise ValueError(f"unknown problem {name!r}; valid: {list(BUDGETS)}")

    def objective(config):
        value = base.evaluate(config)
        if isinstance(value, float):
            return float("nan") if infeasible(config) else value
        return jnp.where(infeasible(config), jnp.nan, value)

    return base.space(), objective, float(optimum)


def run(name: str, methods, seeds: int, options: dict):
    """``seeds`` seeds of every method on one problem through one :func:`jbo.study` (:func:`_common.run_arms`:
    the ``worst`` and ``ignore`` arms share a program). Yields ``(method, record)`` per method: the best
    feasible value and the crashes of each seed, the arm's share of the study's seconds (its compilation
    included) and its program's compile seconds."""
    import numpy as np

    space, objective, optimum = problem(name)
    arms = {}
    for method in methods:
        failures, model_options = METHODS[method]
        arms[method] = dict(failures=failures, **model_options, **options)
    for method, _, values, call in _common.run_arms(objective, space, BUDGETS[name], range(seeds), arms):
        values = np.asarray(values, float)
        feasible = np.where(np.isnan(values), np.inf, values)
        yield method, {"best": [float(b) for b in feasible.min(axis=1)],
                       "failures": [int(n) for n in np.isnan(values).sum(1)],
                       "seconds": call["seconds"], "compile_seconds": call["compile_seconds"], "path": "compiled",
                       "arms": call["arms"], "optimum": optimum, "budget": BUDGETS[name], "seeds": seeds}


def headers(results: dict) -> list[str]:
    """The distinct headers (date, commit, machine, command) of the runs behind the table's rows (stored
    with each row); the section's recorded provenance when none is stored."""
    rows = [f"{name}/{method}" for name, methods in results.items() if name != "headers" for method in methods]
    stored = results.get("headers", {})
    found = list(dict.fromkeys(stored[row].rstrip() for row in rows if row in stored))
    return found or [_common.header("constrained").rstrip()]


def _compare(methods: dict):
    """``(cei's mean, se), (the best other GP method, its mean, se)`` of one problem's stored rows, or
    ``None`` without a ``cei`` row and another GP row."""
    gp = {m: r for m, r in methods.items() if m in ("cei", "worst", "ignore")}
    if "cei" not in gp or len(gp) < 2:
        return None
    stats = {m: _common.mean_se(r["best"]) for m, r in gp.items()}
    other = min((m for m in stats if m != "cei"), key=lambda m: stats[m][0])
    return stats["cei"], (other, *stats[other])


def _verdict(methods: dict) -> str:
    """``yes``: cei's mean best is the lowest of the GP rows; ``partly``: within two standard errors of the
    difference from the best other; ``no``: worse than that; ``not run`` without the rows."""
    found = _compare(methods)
    if found is None:
        return "not run"
    (mean, se), (_, other, other_se) = found
    if mean <= other:
        return "yes"
    return "partly" if mean - other <= 2 * (se ** 2 + other_se ** 2) ** 0.5 else "no"


COVERING = ("branin_holes", "camel_band", "hartmann6_hole")  # infeasible regions that cover every global minimiser


def claims() -> list[dict]:
    """Per problem, the GP's constrained EI (``cei``) against imputing the worst value and ignoring the
    crashes (jbo's claim that modelling crashes pays): ``yes`` when cei's mean best feasible value is the
    lowest of the three, ``partly`` when it is within two standard errors of the difference from the best
    other, ``no`` otherwise. The problems whose region covers every global minimiser share one row (its
    verdict the worst of theirs)."""
    results = _common.load_results("constrained.json", {})
    rows, covering = [], []
    for name, budget in BUDGETS.items():
        methods = results.get(name, {})
        found = _compare(methods)
        if name in COVERING:
            covering.append((name, found, _verdict(methods), len(methods.get("cei", {}).get("best", []))))
            continue
        what = f"{name}, {budget} evaluations: GP constrained EI vs crashes imputed worst / ignored (best feasible)"
        if found is None:
            rows.append(_common.claim("jbo", what, "–", "–", "not run", "constrained"))
            continue
        (mean, se), (other, other_mean, other_se) = found
        n = len(methods["cei"]["best"])
        rows.append(_common.claim("jbo", what, f"best other ({other}): {other_mean:.4f} ± {other_se:.4f}",
                                  f"cei {mean:.4f} ± {se:.4f} ({n} seeds)", _verdict(methods), "constrained"))
    what = (f"{' / '.join(COVERING)} (the infeasible region covers every global minimiser): GP constrained EI "
            "(tell feasible=False) vs crashes imputed worst / ignored (best feasible)")
    order = ["not run", "no", "partly", "yes"]
    verdict = min((v for *_, v, _ in covering), key=order.index)
    if any(found is None for _, found, *_ in covering):
        rows.append(_common.claim("jbo", what, "–", "–", "not run", "constrained"))
    else:
        others = " / ".join(f"{o_mean:.3f} ({o})" for _, (_, (o, o_mean, _)), *_ in covering)
        cei = " / ".join(f"{mean:.3f} ± {se:.3f}" for _, ((mean, se), _), *_ in covering)
        seeds = min(n for *_, n in covering)
        rows.append(_common.claim("jbo", what, f"best other: {others}", f"cei {cei} ({seeds} seeds)", verdict,
                                  "constrained"))
    return rows


def report() -> None:
    _common.update_section("constrained", write_report(_common.load_results("constrained.json", {})))


def write_report(results: dict) -> str:
    import numpy as np

    lines = ["## Unknown constraints: constrained EI against ignoring the constraint and imputing the worst value",
             "", *headers(results), "",
             "Evaluations crash (no value) in an unknown region (experiments/constrained.py: branin_disk, Gelbart et "
             "al.'s disk, 30 % infeasible; branin_crash, x1 > 4, 40 %; hartmann6_crash, x1 + x2 > 1, 50 %; and three "
             "whose region covers every global minimiser: branin_holes, camel_band, hartmann6_hole). GP with MAP "
             "inference (`dngo …` rows: DNGO, its classifier Laplace logistic regression on the network's basis); "
             "`cei`: failures='constraint' (least-squares GP classifier, EI × P[feasible], crashes in the objective's "
             "model at the median of the feasible values: what tell(feasible=False) does); `cei-ignore` / `cei-worst`: "
             "crashes left out of the objective's model (Gelbart et al.) / at the worst value; `cei-laplace`: the "
             "Laplace-logistic classifier; `worst`: crashes imputed with the worst value, no classifier; `ignore`: "
             "crashes left out. Best feasible value at the budget, mean ± s.e.; crashes per run; wall s: a problem's "
             "methods in one `jbo.study` (the row's share, compile included).", "",
             "| problem (optimum) | budget | method | seeds | best feasible value | crashes / run | wall s |",
             "|---|---|---|---|---|---|---|"]
    for name, methods in results.items():
        if name == "headers":
            continue
        best_mean = {m: np.mean(r["best"]) for m, r in methods.items()}
        for method, r in methods.items():
            best = np.asarray(r["best"])
            mean, se = _common.mean_se(best)
            se = 0.0 if len(best) < 2 else se
            mark = " **best**" if best_mean[method] == min(best_mean.values()) else ""
            lines.append(f"| {name} ({r['optimum']:.4f}) | {r['budget']} | {method}{mark} | {len(best)} | "
                         f"{mean:.4f} ± {se:.4f} | {np.mean(r['failures']):.1f} | {r['seconds']:.0f} |")
    verdicts = {name: _verdict(methods) for name, methods in results.items() if name != "headers"}
    if verdicts:
        lines += ["", "Summary verdict per problem (GP `cei` against `worst` and `ignore`: `yes` when its mean best is"
                  " the lowest, `partly` within two standard errors of the difference from the best other, else `no`): "
                  + "; ".join(f"{name} {v}" for name, v in verdicts.items()) + "."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--problems", nargs="+", default=list(BUDGETS), choices=list(BUDGETS))
    parser.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS), choices=list(METHODS))
    parser.add_argument("--inference", default="map")
    parser.add_argument("--model", default="gp", choices=["gp", "dngo"],
                        help="the surrogate (rows of another model than the GP are named 'MODEL METHOD')")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    path = os.path.join(_common.RESULTS, "constrained.json")
    options = {"inference": args.inference, "model": args.model}
    for method in args.methods:  # refuse before running anything
        _common.check_compiled(dict(failures=METHODS[method][0], **METHODS[method][1], **options))
    rows = []
    for name in args.problems:
        for method, record in run(name, args.methods, args.seeds, options):
            if args.model != "gp":
                method = f"{args.model} {method}"
            print(f"{name} {method}: best {sum(record['best']) / len(record['best']):.4f}, "
                  f"{record['seconds']:.0f} s", flush=True)
            _common.merge_result(path, [name, method], record)
            rows.append(f"{name}/{method}")
    _common.record_provenance("constrained")
    header = _common.header("constrained")  # each row keeps the provenance of the run that made it
    _common.merge_results(path, [(["headers", row], header) for row in rows])
    _common.regenerate()


if __name__ == "__main__":
    main()
