"""Parallel, asynchronous BO: the cost of a suggestion with pending points, and simulated workers.

``pending``: seconds per steady suggestion at N observations with P points pending, GP (MAP) and DNGO: the GP's
blocked Cholesky update grows as O(N^2 P + P^3) per sample, DNGO's rank-P update of its precision not with N.
The simulated workers' table (``jbo.executors.SimulatedExecutor``) is history: its runner is retired.

    python experiments/parallel_workers.py pending [--models gp dngo] [--pending 0 64 256] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

MODELS = {"gp": dict(model="gp", inference="map"), "dngo": dict(model="dngo")}


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _common.add_parts_argument(parser, ["pending"], default=["pending"])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--pending", type=int, nargs="+", default=[0, 16, 64, 256])
    parser.add_argument("--modes", nargs="+", default=["believer", "fantasies"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, parts=["pending"])
    if args is None:
        return
    rows = [time_pending(model, args.n, p, mode, args.repeats) for model in args.models for mode in args.modes
            for p in args.pending]
    _common.record_provenance("parallel_workers")
    _common.merge_results(os.path.join(_common.RESULTS, "parallel_workers.json"),
                          [(["pending"], rows), (["pending_header"], _common.header("parallel_workers"))])
    _common.regenerate()


def claims() -> list[dict]:
    return []  # no paper or bar states a figure for these costs (DESIGN.md quotes the pending-point ratios)


def _pending(results: dict) -> list[str]:
    rows, sizes = results["pending"], sorted({r["pending"] for r in results["pending"]})
    cells = {}
    for r in rows:
        cells.setdefault((r["model"], r["mode"]), {})[r["pending"]] = r["seconds"]
    ratios = ", ".join(f"{model} {c[max(c)] / c[0]:.2f}×" for (model, mode), c in cells.items()
                       if mode == "believer" and 0 in c and max(c) > 0)
    lines = ["", results["pending_header"].rstrip(), "",
             f"Seconds per steady suggestion on Hartmann6 with N = {rows[0]['n']} observations and P points pending (GP"
             " with MAP inference; DNGO with its defaults), the first two calls (compilation) excluded:", "",
             "| model | pending as | " + " | ".join(f"P = {p}" for p in sizes) + " |",
             "|---|---|" + "---|" * len(sizes)]
    lines += [f"| {model} | {mode} | " + " | ".join(f"{c[p]:.3f}" if p in c else "–" for p in sizes) + " |"
              for (model, mode), c in cells.items()]
    return lines + (["", f"As believer, P = {max(sizes)} costs {ratios} of P = 0."] if ratios else [])


def _workers(results: dict) -> list[str]:
    import numpy as np

    cells = {}
    for r in results.get("workers", []):
        key = (r["problem"], r["budget"], r["target"], r["model"])
        cells.setdefault(key, {}).setdefault(r["workers"], []).append(r)
    if not cells:
        return []
    lines = ["", "Simulated workers (`SimulatedExecutor`, log-normal durations, median 1, sigma 0.5; runner retired, it"
             " ran at a1536d7 and 0979447 by the commands below): the virtual time until the best value is within the"
             " target of the optimum (median over seeds; – where no seed got there) and the final regret:", "",
             *dict.fromkeys(h.rstrip() for h in results["workers_headers"].values()), "",
             "| problem | budget | target | model | workers | seeds | virtual time to target | final regret (mean)"
             " | wall s / run |", "|---" * 9 + "|"]
    for (problem, budget, target, model), by_workers in cells.items():
        for k, runs in sorted(by_workers.items()):
            times = [r["time_to_target"] for r in runs if r["time_to_target"] is not None]
            reached = f"{np.median(times):.1f} ({len(times)}/{len(runs)} reached)" if times else "–"
            lines.append(f"| {problem} | {budget} | {target} | {model} | {k} | {len(runs)} | {reached} |"
                         f" {np.mean([r['final_regret'] for r in runs]):.4f} |"
                         f" {np.mean([r['wall_seconds'] for r in runs]):.0f} |")
    full = dict.fromkeys(problem for (problem, budget, _, _), by_workers in cells.items() if max(by_workers) >= budget)
    if full:
        lines += ["", f"With as many workers as the budget ({', '.join(full)}) the whole budget is asked before any"
                  " evaluation returns: no model sees data, and every method samples as random search does (the same"
                  " points, seed for seed)."]
    return lines


def report() -> dict:
    results = _common.load_results("parallel_workers.json", {})
    lines = ["## Parallel and asynchronous BO: pending points and simulated workers (parallel_workers)"]
    lines += _pending(results) if "pending" in results else []
    return {"parallel_workers": "\n".join(lines + _workers(results)) + "\n"}


if __name__ == "__main__":
    main()
