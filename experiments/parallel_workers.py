"""Parallel, asynchronous BO on a simulated cluster, and the cost of a suggestion with pending points.

* ``pending``: seconds per steady suggestion at N observations with P points pending, GP (MAP) and DNGO: the GP's
  blocked Cholesky update grows as O(N^2 P + P^3) per sample, DNGO's rank-P update of its precision not with N.
* ``workers``: ``jbo.minimize`` with asynchronous workers on ``jbo.executors.SimulatedExecutor``: the virtual time
  until the best value is within ``--target`` of the optimum. (Neither is a grid of runs for ``jbo.study``.)

    python experiments/parallel_workers.py workers --problem levy --dim 20 --target 5 --budget 300
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

MODELS = {"gp": dict(model="gp", inference="map"), "dngo": dict(model="dngo"), "random": dict(model="random")}


def time_pending(model: str, n: int, pending: int, mode: str, repeats: int, seed: int = 0) -> dict:
    """Steady seconds per suggestion with ``pending`` points in flight (the first two calls compile)."""
    import jax.numpy as jnp
    import numpy as np

    from jbo import loop
    from jbo.benchmarks import get_problem

    problem, rng = get_problem("hartmann6"), np.random.default_rng(seed)
    space, x = problem.space(), rng.random((n, 6))
    settings = loop.Settings.create(seed=seed, pending=mode, **MODELS[model])
    state = loop.init(settings, space)._replace(x=x, y=np.asarray(problem.fn(jnp.asarray(x))), n_suggested=n,
                                                feasible=np.ones(n, bool), pending=rng.random((pending, 6)))
    calls = []
    for _ in range(2 + repeats):
        start = time.perf_counter()
        new, _, _ = loop.suggest(settings, space, state)
        calls.append(time.perf_counter() - start)
        state = state._replace(model_state=new.model_state, fitted=new.fitted)  # N and P stay fixed
    steady = statistics.median(calls[2:])
    return {"model": model, "n": n, "pending": pending, "mode": mode, "seconds": steady,
            "compile_seconds": max(0.0, calls[0] - steady)}


def time_to_target(model: str, workers: int, seed: int, args) -> dict:
    """One asynchronous run: the virtual time at which the best value first comes within the target."""
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem
    from jbo.executors import SimulatedExecutor

    problem, start = get_problem(args.problem, **({"dim": args.dim} if args.dim else {})), time.perf_counter()
    result = jbo.minimize(problem.evaluate, problem.space(), budget=args.budget, seed=seed, n_workers=workers,
                          executor=SimulatedExecutor(workers, duration=1.0, sigma=0.5, seed=seed), **MODELS[model])
    finished = np.array([h["finished_at"] for h in result.history])
    order = np.argsort(finished, kind="stable")
    best = np.minimum.accumulate(np.where(np.isnan(result.values[order]), np.inf, result.values[order]))
    hit = np.flatnonzero(best - problem.optimum <= args.target)
    return {"problem": f"{args.problem}-{args.dim}" if args.dim else args.problem, "model": model, "workers": workers,
            "seed": seed, "budget": args.budget, "target": args.target,
            "time_to_target": float(finished[order][hit[0]]) if len(hit) else None,
            "final_regret": float(best[-1] - problem.optimum), "virtual_span": float(finished.max()),
            "wall_seconds": time.perf_counter() - start}


def header_key(row: dict) -> str:  # the rows of one command
    return f"{row['problem']}/{row['budget']}/{row['target']}/{row['model']}/{row['workers']}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _common.add_parts_argument(parser, ["pending", "workers"])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--pending", type=int, nargs="+", default=[0, 16, 64, 256])
    parser.add_argument("--modes", nargs="+", default=["believer", "fantasies"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--target", type=float, default=0.1)
    parser.add_argument("--problem", default="hartmann6", help="a jbo.benchmarks problem (workers part)")
    parser.add_argument("--dim", type=int, default=None, help="its dimension, for problems of any dimension")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, parts=["pending", "workers"])
    if args is None:
        return
    path = os.path.join(_common.RESULTS, "parallel_workers.json")
    if "pending" in args.parts:
        rows = [time_pending(model, args.n, p, mode, args.repeats) for model in args.models if model != "random"
                for mode in args.modes for p in args.pending]
        _common.record_provenance("parallel_workers")
        _common.merge_results(path, [(["pending"], rows), (["pending_header"], _common.header("parallel_workers"))])
    for model in args.models if "workers" in args.parts else []:
        for k in args.workers:
            rows = [time_to_target(model, k, seed, args) for seed in range(args.seeds)]
            print(rows, flush=True)
            key = lambda r: (r["problem"], r["model"], r["workers"], r["seed"], r["budget"], r["target"])  # noqa: E731
            kept = [r for r in _common.load_results("parallel_workers.json", {}).get("workers", [])
                    if key(r) not in {key(new) for new in rows}]
            _common.record_provenance("parallel_workers")
            _common.merge_results(path, [(["workers"], kept + rows),
                                         (["workers_headers", header_key(rows[0])], _common.header("parallel_workers"))])
    _common.regenerate()


def claims() -> list[dict]:
    return []  # no paper or bar states a figure for these costs (DESIGN.md quotes the pending-point ratios)


def report() -> dict:
    import numpy as np

    results = _common.load_results("parallel_workers.json", {})
    lines = ["## Parallel and asynchronous BO: pending points and simulated workers (parallel_workers)"]
    if "pending" in results:
        rows, sizes = results["pending"], sorted({r["pending"] for r in results["pending"]})
        cells = {(r["model"], r["mode"]): {} for r in rows}
        for r in rows:
            cells[r["model"], r["mode"]][r["pending"]] = r["seconds"]
        lines += ["", results["pending_header"].rstrip(), "",
                  f"Seconds per steady suggestion on Hartmann6 with N = {rows[0]['n']} observations and P points pending "
                  "(GP with MAP inference; DNGO with its defaults), the first two calls (compilation) excluded:", "",
                  "| model | pending as | " + " | ".join(f"P = {p}" for p in sizes) + " |",
                  "|---|---|" + "---|" * len(sizes)]
        lines += [f"| {model} | {mode} | " + " | ".join(f"{c[p]:.3f}" if p in c else "–" for p in sizes) + " |"
                  for (model, mode), c in cells.items()]
        ratios = [f"{model} {c[max(c)] / c[0]:.2f}×" for (model, mode), c in cells.items()
                  if mode == "believer" and 0 in c and max(c) > 0]
        lines += ["", f"As believer, P = {max(sizes)} costs " + ", ".join(ratios) + " of P = 0."] if ratios else []
    groups = {}
    for r in results.get("workers", []):
        groups.setdefault((r["problem"], r["budget"], r["target"]), []).append(r)
    if groups:
        lines += ["", "Simulated workers (`SimulatedExecutor`, log-normal durations, median 1, sigma 0.5): the virtual"
                  " time until the best value is within the target of the optimum (median over seeds; – where no seed"
                  " got there) and the final regret, per problem:"]
    for (problem, budget, target), group in groups.items():
        headers = dict.fromkeys(results["workers_headers"][header_key(r)].rstrip() for r in group)
        lines += ["", *headers, "", f"**{problem}**, budget {budget}, target {target}:", "",
                  "| model | workers | seeds | virtual time to target | final regret (mean) | wall s / run |",
                  "|---|---|---|---|---|---|"]
        models = list(dict.fromkeys(r["model"] for r in group))
        for model, k in sorted({(r["model"], r["workers"]) for r in group}, key=lambda m: (models.index(m[0]), m[1])):
            runs = [r for r in group if r["model"] == model and r["workers"] == k]
            times = [r["time_to_target"] for r in runs if r["time_to_target"] is not None]
            lines.append(f"| {model} | {k} | {len(runs)} | " + (f"{np.median(times):.1f} ({len(times)}/{len(runs)}"
                         " reached)" if times else "–") + f" | {np.mean([r['final_regret'] for r in runs]):.4f} | "
                         f"{np.mean([r['wall_seconds'] for r in runs]):.0f} |")
    full = [problem for (problem, budget, _), group in groups.items() if any(r["workers"] >= budget for r in group)]
    if full:
        lines += ["", f"With as many workers as the budget ({', '.join(full)}) the whole budget is asked before any"
                  " evaluation returns: no model sees data, and every method samples as random search does (the same"
                  " points, seed for seed)."]
    return {"parallel_workers": "\n".join(lines) + "\n"}


if __name__ == "__main__":
    main()
