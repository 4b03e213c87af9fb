"""Unknown constraints: constrained EI against ignoring the constraint and against imputing the worst value.

Evaluations crash (return nothing) in an unknown region, the "evaluation crashed" constraint of Snoek et al.
(2015, §3.2). In three problems a global minimiser stays feasible (one is Gelbart et al. 2014's constrained
Branin); in three more the crashes cover every global minimiser, so that the feasible optimum, computed by
:func:`feasible_optimum`, lies on the region's boundary or in another basin. A problem's methods run in one
``jbo.study``. The DNGO rows' runner (``--model dngo``, at e87864b) is retired.

    python experiments/constrained.py --seeds 10 [--problems ...] [--methods ...]
"""

from __future__ import annotations

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

# cei models where evaluations crash (a classifier, EI × P[feasible]); the others impute the worst value seen or
# leave the crashes out, ignoring the constraint.
METHODS = {"cei": {"failures": "constraint"}, "worst": {"failures": "worst"}, "ignore": {"failures": "ignore"},
           "cei-ignore": {"failures": "constraint", "infeasible": "ignore"},
           "cei-worst": {"failures": "constraint", "infeasible": "worst"},
           "cei-laplace": {"failures": "constraint", "classifier": "laplace"}}
BUDGETS = {"branin_disk": 40, "branin_crash": 40, "hartmann6_crash": 80, "branin_holes": 40, "camel_band": 40,
           "hartmann6_hole": 80}
H6_ARGMIN = (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573)
# Each problem's feasible region, constraints g(c) >= 0 (the share of the box infeasible).
CONSTRAINTS = {
    "branin_disk": (lambda c: 50.0 - (c["x1"] - 2.5) ** 2 - (c["x2"] - 7.5) ** 2,),  # 30 %
    "branin_crash": (lambda c: 4.0 - c["x1"],),  # 40 %: two of Branin's three minimisers lost
    "hartmann6_crash": (lambda c: 1.0 - c["x1"] - c["x2"],),  # 50 %: the optimum has x1 + x2 = 0.35
    "branin_holes": (lambda c: 9.0 - c["x1"] - c["x2"], lambda c: (c["x1"] - math.pi) ** 2 + (c["x2"] - 2.275) ** 2 - 4),
    "camel_band": (lambda c: 0.4 - c["x2"], lambda c: 0.4 + c["x2"]),  # 80 %
    "hartmann6_hole": (lambda c: sum((c[f"x{i + 1}"] - v) ** 2 for i, v in enumerate(H6_ARGMIN)) - 0.3**2,),
}
COVERING = ("branin_holes", "camel_band", "hartmann6_hole")  # regions that cover every global minimiser


def feasible_optimum(base, constraints, starts: int = 200, seed: int = 0) -> float:
    """The best value of ``base`` where every ``g(c) >= 0``: SLSQP (scipy) from ``starts`` feasible uniform points."""
    import numpy as np
    from scipy.optimize import minimize

    names = list(base.space().params)
    bounds = [(base.space().params[n].low, base.space().params[n].high) for n in names]
    config = lambda x: dict(zip(names, (float(v) for v in x)))  # noqa: E731
    feasible = lambda x: all(g(config(x)) >= -1e-9 for g in constraints)  # noqa: E731
    best = np.inf
    for x0 in np.random.default_rng(seed).uniform(*np.transpose(bounds), size=(starts, len(names))):
        if feasible(x0):
            found = minimize(lambda x: float(base.evaluate(config(x))), x0, method="SLSQP", bounds=bounds,
                             constraints=[{"type": "ineq", "fun": lambda x, g=g: g(config(x))} for g in constraints])
            best = min(best, float(found.fun)) if found.success and feasible(found.x) else best
    return best


def problem(name: str):
    """``(space, JAX objective, best feasible value)``: the objective is nan (a crash) outside the region."""
    import jax.numpy as jnp

    from jbo.benchmarks import get_problem

    base = get_problem({"camel": "six_hump_camel"}.get(name.split("_")[0], name.split("_")[0]))

    def objective(c):
        return jnp.where(jnp.any(jnp.stack([g(c) < 0.0 for g in CONSTRAINTS[name]])), jnp.nan, base.evaluate(c))

    optimum = feasible_optimum(base, CONSTRAINTS[name]) if name in COVERING else base.optimum
    return base.space(), objective, float(optimum)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--problems", nargs="+", default=list(BUDGETS), choices=list(BUDGETS))
    parser.add_argument("--methods", nargs="+", default=["cei", "worst", "ignore"], choices=list(METHODS))
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    import numpy as np

    path, rows = os.path.join(_common.RESULTS, "constrained.json"), []
    arms = {m: {**METHODS[m], "inference": "map"} for m in args.methods}
    for name in args.problems:
        space, objective, optimum = problem(name)
        for method, _, values, call in _common.run_arms(objective, space, BUDGETS[name], range(args.seeds), arms):
            values = np.asarray(values, float)
            record = {"best": np.where(np.isnan(values), np.inf, values).min(axis=1).tolist(),
                      "failures": np.isnan(values).sum(1).tolist(), "path": "compiled", "optimum": optimum,
                      "budget": BUDGETS[name], "seeds": args.seeds,
                      **{k: call[k] for k in ("seconds", "compile_seconds", "arms")}}
            print(f"{name} {method}: best {np.mean(record['best']):.4f}, {record['seconds']:.0f} s", flush=True)
            _common.merge_result(path, [name, method], record)
            rows.append(f"{name}/{method}")
    _common.record_provenance("constrained")
    header = _common.header("constrained")  # each row keeps the provenance of the run that made it
    _common.merge_results(path, [(["headers", row], header) for row in rows])
    _common.regenerate()


# --------------------------------------------------------------------------------------------------- the report
def _compare(methods: dict) -> dict | None:
    """GP cei's mean best and s.e. against the best of ``worst`` and ``ignore``, and the verdict: ``yes`` when cei's
    mean is the lowest, ``partly`` within two standard errors of the difference, ``no`` worse; ``None`` without both."""
    stats = {m: _common.mean_se(r["best"]) for m, r in methods.items() if m in ("cei", "worst", "ignore")}
    if "cei" not in stats or len(stats) < 2:
        return None
    other = min((m for m in stats if m != "cei"), key=lambda m: stats[m][0])
    (mean, se), (other_mean, other_se) = stats["cei"], stats[other]
    verdict = ("yes" if mean <= other_mean else
               "partly" if mean - other_mean <= 2 * (se**2 + other_se**2) ** 0.5 else "no")
    return {"mean": mean, "se": se, "other": other, "other_mean": other_mean, "other_se": other_se,
            "seeds": len(methods["cei"]["best"]), "verdict": verdict}


def claims() -> list[dict]:
    """:func:`_compare` per problem; the problems of :data:`COVERING` share one row (the worst of their verdicts)."""
    results, rows = _common.load_results("constrained.json", {}), []
    for name in (n for n in BUDGETS if n not in COVERING):
        what = f"{name}, {BUDGETS[name]} evaluations: GP constrained EI vs crashes imputed worst / ignored (best feasible)"
        c = _compare(results.get(name, {}))
        if c is None:
            rows.append(_common.claim("jbo", what, "–", "–", "not run", "constrained"))
        else:
            other = f"best other ({c['other']}): {c['other_mean']:.4f} ± {c['other_se']:.4f}"
            figure = f"cei {c['mean']:.4f} ± {c['se']:.4f} ({c['seeds']} seeds)"
            rows.append(_common.claim("jbo", what, other, figure, c["verdict"], "constrained"))
    what = (f"{' / '.join(COVERING)} (the infeasible region covers every global minimiser): GP constrained EI "
            "(tell feasible=False) vs crashes imputed worst / ignored (best feasible)")
    found = [_compare(results.get(n, {})) for n in COVERING]
    if None in found:
        return rows + [_common.claim("jbo", what, "–", "–", "not run", "constrained")]
    others = " / ".join(f"{c['other_mean']:.3f} ({c['other']})" for c in found)
    cei = " / ".join(f"{c['mean']:.3f} ± {c['se']:.3f}" for c in found)
    verdict = min((c["verdict"] for c in found), key=["no", "partly", "yes"].index)
    return rows + [_common.claim("jbo", what, f"best other: {others}",
                                 f"cei {cei} ({min(c['seeds'] for c in found)} seeds)", verdict, "constrained")]


def report() -> dict:
    import numpy as np

    results = _common.load_results("constrained.json", {})
    stored = results.pop("headers", {})
    headers = dict.fromkeys(stored[f"{n}/{m}"].rstrip() for n in results for m in results[n] if f"{n}/{m}" in stored)
    lines = ["## Unknown constraints: constrained EI against ignoring the constraint and imputing the worst value",
             "", *(headers or [_common.header("constrained").rstrip()]), "",
             "GP with MAP inference (`dngo …`: DNGO with its Laplace logistic classifier; runner retired, it ran at"
             " e87864b). `cei`: a least-squares GP classifier, EI × P[feasible], crashes in the objective's model at"
             " the median feasible value (as `tell(feasible=False)`); `cei-ignore` / `cei-worst`: crashes left out of"
             " that model (Gelbart et al.) / at the worst value; `cei-laplace`: a Laplace-logistic classifier; `worst`:"
             " crashes imputed with the worst value; `ignore`: left out. Best feasible value, mean ± s.e.; wall s: the"
             " row's share of its problem's `jbo.study`.", "",
             "| problem (optimum) | budget | method | seeds | best feasible value | crashes / run | wall s |",
             "|---|---|---|---|---|---|---|"]
    for name, methods in results.items():
        lowest = min(np.mean(r["best"]) for r in methods.values())
        for method, r in methods.items():
            mean, se = _common.mean_se(r["best"])
            se = 0.0 if len(r["best"]) < 2 else se
            best = " **best**" if np.mean(r["best"]) == lowest else ""
            lines.append(f"| {name} ({r['optimum']:.4f}) | {r['budget']} | {method}{best} | {len(r['best'])} |"
                         f" {mean:.4f} ± {se:.4f} | {np.mean(r['failures']):.1f} | {r['seconds']:.0f} |")
    verdicts = "; ".join(f"{name} {(_compare(methods) or {'verdict': 'not run'})['verdict']}"
                         for name, methods in results.items())
    if results:
        lines += ["", "Verdict per problem (GP `cei` against `worst` and `ignore`: `yes` when its mean best is the"
                  " lowest, `partly` within two standard errors of the difference from the best other, else `no`):"
                  f" {verdicts}."]
    return {"constrained": "\n".join(lines) + "\n"}


if __name__ == "__main__":
    main()
