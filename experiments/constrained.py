"""Unknown constraints: constrained EI against ignoring the constraint and against imputing the worst value.

Each problem is a benchmark whose evaluations crash (return nothing) in an unknown region covering a
sizeable share of the box, the "evaluation crashed" constraint of Snoek et al. (2015, §3.2):

* ``branin_disk``: Branin, feasible only in the disk (x1 - 2.5)^2 + (x2 - 7.5)^2 <= 50 (Gelbart et al.
  2014's constrained Branin; 30 % of the box infeasible; one of Branin's three minimisers is feasible);
* ``branin_crash``: Branin, crashing for x1 > 4 (40 %; two minimisers lost, the third 0.86 from the edge);
* ``hartmann6_crash``: Hartmann6, crashing where x1 + x2 > 1 (50 %; the optimum has x1 + x2 = 0.35).

Methods (jbo's GP, MAP inference, all seeds of a method in one ``jbo.minimize_many`` call):
``cei`` (``failures="constraint"``: a least-squares GP classifier of where evaluations crash, EI × P[feasible]),
``worst`` (``failures="worst"``: crashes imputed with the worst value seen) and ``ignore``
(``failures="ignore"``: crashes left out, the constraint ignored); opt-in, ``cei-laplace``: CEI with the
Laplace-logistic GP classifier (``classifier="laplace"``) instead of least-squares classification.
``--model dngo`` runs them with DNGO (its classifier: the paper's Laplace logistic regression on the
network's basis; rows ``dngo cei`` etc.). The score is the best feasible value at the budget, mean ±
standard error over seeds.

    python experiments/constrained.py --seeds 10
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

# method -> (failures policy, model options)
METHODS = {"cei": ("constraint", {}), "worst": ("worst", {}), "ignore": ("ignore", {}),
           "cei-laplace": ("constraint", {"classifier": "laplace"})}
DEFAULT_METHODS = ("cei", "worst", "ignore")
BUDGETS = {"branin_disk": 40, "branin_crash": 40, "hartmann6_crash": 80}


def problem(name: str):
    """``(space, objective, best feasible value)`` of a constrained problem; the objective takes JAX or
    Python values and returns nan (a crash) outside the feasible region."""
    import jax.numpy as jnp

    from jbo.benchmarks import get_problem

    base = get_problem(name.split("_")[0])
    if name == "branin_disk":
        infeasible = lambda c: (c["x1"] - 2.5) ** 2 + (c["x2"] - 7.5) ** 2 > 50.0
        optimum = base.optimum  # (pi, 2.275) is inside the disk
    elif name == "branin_crash":
        infeasible = lambda c: c["x1"] > 4.0
        optimum = base.optimum  # (pi, 2.275) is feasible
    elif name == "hartmann6_crash":
        infeasible = lambda c: c["x1"] + c["x2"] > 1.0
        optimum = base.optimum
    else:
        raise ValueError(f"unknown problem {name!r}; valid: {list(BUDGETS)}")

    def objective(config):
        value = base.evaluate(config)
        if isinstance(value, float):
            return float("nan") if infeasible(config) else value
        return jnp.where(infeasible(config), jnp.nan, value)

    return base.space(), objective, float(optimum)


def run(name: str, method: str, seeds: int, options: dict) -> dict:
    import jbo
    import numpy as np

    space, objective, optimum = problem(name)
    start = time.perf_counter()
    failures, model_options = METHODS[method]
    result = jbo.minimize_many(objective, space, BUDGETS[name], range(seeds), failures=failures,
                               **model_options, **options)
    values = result.values
    return {"best": [float(b) for b in result.best_values], "failures": [int(n) for n in np.isnan(values).sum(1)],
            "seconds": time.perf_counter() - start, "compile_seconds": result.compile_seconds,
            "optimum": optimum, "budget": BUDGETS[name], "seeds": seeds}


def headers(results: dict) -> list[str]:
    """The distinct headers (date, commit, machine, command) of the runs behind the table's rows."""
    rows = [f"{name}/{method}" for name, methods in results.items() if name != "headers" for method in methods]
    return list(dict.fromkeys(results["headers"][row].rstrip() for row in rows))


def report(results: dict) -> str:
    import numpy as np

    lines = ["## Unknown constraints: constrained EI against ignoring the constraint and imputing the worst value",
             "", *headers(results), "",
             "Evaluations crash (no value) in an unknown region (experiments/constrained.py: branin_disk, Gelbart et "
             "al.'s disk, 30 % infeasible; branin_crash, x1 > 4, 40 %; hartmann6_crash, x1 + x2 > 1, 50 %). GP with "
             "MAP inference (`dngo …` rows: DNGO, MAP, its classifier the paper's Laplace logistic regression on the "
             "network's basis); `cei`: failures='constraint' (least-squares GP classifier, EI × P[feasible]; `cei-laplace`: "
             "the Laplace-logistic GP classifier instead); `worst`: crashes imputed "
             "with the worst value; `ignore`: crashes left out. Best feasible value at the budget, mean ± s.e.; "
             "crashes per run; all seeds of a row in one `jbo.minimize_many` call (wall time, compile included).", "",
             "| problem (optimum) | budget | method | seeds | best feasible value | crashes / run | wall s |",
             "|---|---|---|---|---|---|---|"]
    for name, methods in results.items():
        if name == "headers":
            continue
        best_mean = {m: np.mean(r["best"]) for m, r in methods.items()}
        for method, r in methods.items():
            best = np.asarray(r["best"])
            se = best.std(ddof=1) / np.sqrt(len(best)) if len(best) > 1 else 0.0
            mark = " **best**" if best_mean[method] == min(best_mean.values()) else ""
            lines.append(f"| {name} ({r['optimum']:.4f}) | {r['budget']} | {method}{mark} | {len(best)} | "
                         f"{best.mean():.4f} ± {se:.4f} | {np.mean(r['failures']):.1f} | {r['seconds']:.0f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--problems", nargs="+", default=list(BUDGETS), choices=list(BUDGETS))
    parser.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS), choices=list(METHODS))
    parser.add_argument("--inference", default="map")
    parser.add_argument("--model", default="gp", choices=["gp", "dngo"],
                        help="the surrogate (rows of another model than the GP are named 'MODEL METHOD')")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--results-dir", default=None, help="write results and the report here (checks)")
    args = parser.parse_args(argv)
    _common.use_results_dir(args.results_dir)
    _common.setup()
    path = os.path.join(_common.RESULTS, "constrained.json")
    results = json.load(open(path)) if os.path.exists(path) else {}
    if not args.report_only:
        for name in args.problems:
            for method in args.methods:
                record = run(name, method, args.seeds, {"inference": args.inference, "model": args.model})
                if args.model != "gp":
                    method = f"{args.model} {method}"
                print(f"{name} {method}: best {sum(record['best']) / len(record['best']):.4f}, "
                      f"{record['seconds']:.0f} s", flush=True)
                results = json.load(open(path)) if os.path.exists(path) else {}
                results.setdefault(name, {})[method] = record
                results.setdefault("headers", {})[f"{name}/{method}"] = _common.header()
                with open(path, "w") as f:
                    json.dump(results, f, indent=1)
    text = report(results)
    _common.update_section("constrained", text)
    print(text)


if __name__ == "__main__":
    main()
