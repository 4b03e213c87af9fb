"""Parallel, asynchronous BO on a simulated cluster, and the cost of a suggestion with pending points.

Two parts, each storing its rows (with the provenance of its run) in experiments/results/parallel_workers.json,
from which BENCHMARKS.md is regenerated (``experiments/report.py``; ``--report-only``: only that):

* ``pending``: seconds per steady suggestion at a fixed number of observations N with P points
  pending (kriging believer and Monte Carlo fantasies), GP (MAP) and DNGO side by side: the GP's
  blocked Cholesky update grows with P as O(N^2 P + P^3) per sample, DNGO's rank-P update of its
  M x M precision does not grow with N.
* ``workers``: ``jbo.minimize`` with ``n_workers`` asynchronous workers on ``jbo.executors.
  SimulatedExecutor`` (log-normal evaluation times, median 1 time unit): the virtual time at which
  the best value first comes within ``--target`` of the optimum, against the number of workers, for
  the GP, DNGO and random search.

    python experiments/parallel_workers.py pending --n 200 --pending 0 16 64 256
    python experiments/parallel_workers.py workers --workers 1 10 50 --seeds 3 --budget 200
    python experiments/parallel_workers.py workers --problem levy --dim 20 --target 5 --budget 300
    python experiments/parallel_workers.py --report-only

Neither part is a grid of whole BO runs for ``jbo.study``: ``pending`` times single suggestions,
``workers`` needs the host's asynchronous loop (an executor).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402



def results_path() -> str:
    """The results JSON (under ``--results-dir`` when given)."""
    return os.path.join(_common.RESULTS, "parallel_workers.json")

MODELS = {"gp": dict(model="gp", inference="map"), "dngo": dict(model="dngo"), "random": dict(model="random")}


def time_pending(model: str, n: int, pending: int, mode: str, repeats: int, seed: int = 0) -> dict:
    """Steady seconds per suggestion with ``pending`` points in flight (the first two calls compile)."""
    import jax.numpy as jnp
    import numpy as np

    from jbo import loop
    from jbo.benchmarks import get_problem

    problem = get_problem("hartmann6")
    space = problem.space()
    rng = np.random.default_rng(seed)
    x = rng.random((n, space.dim))
    settings = loop.Settings.create(seed=seed, pending=mode, **MODELS[model])
    state = loop.init(settings, space)._replace(x=x, y=np.asarray(problem.fn(jnp.asarray(x))), n_suggested=n,
                                                feasible=np.ones(n, bool))
    state = state._replace(pending=rng.random((pending, space.dim)))
    calls = []
    for _ in range(2 + repeats):
        start = time.perf_counter()
        new_state, _, _ = loop.suggest(settings, space, state)
        calls.append(time.perf_counter() - start)
        state = state._replace(model_state=new_state.model_state, fitted=new_state.fitted)  # N and P stay fixed
    return {"model": model, "n": n, "pending": pending, "mode": mode, "seconds": statistics.median(calls[2:]),
            "compile_seconds": max(0.0, calls[0] - statistics.median(calls[2:]))}


def virtual_time_to_target(model: str, workers: int, seed: int, budget: int, target: float,
                           problem_name: str = "hartmann6", dim: int | None = None) -> dict:
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem
    from jbo.executors import SimulatedExecutor

    problem = get_problem(problem_name, **({"dim": dim} if dim else {}))
    executor = SimulatedExecutor(workers, duration=1.0, sigma=0.5, seed=seed)
    start = time.perf_counter()
    result = jbo.minimize(problem.evaluate, problem.space(), budget=budget, seed=seed, n_workers=workers,
                          executor=executor, **MODELS[model])
    finished = np.array([h["finished_at"] for h in result.history])
    order = np.argsort(finished, kind="stable")
    best = np.minimum.accumulate(np.where(np.isnan(result.values[order]), np.inf, result.values[order]))
    hit = np.flatnonzero(best - problem.optimum <= target)
    return {"problem": problem_label(problem_name, dim), "model": model, "workers": workers, "seed": seed,
            "budget": budget, "target": target,
            "time_to_target": float(finished[order][hit[0]]) if len(hit) else None,
            "final_regret": float(best[-1] - problem.optimum), "virtual_span": float(finished.max()),
            "wall_seconds": time.perf_counter() - start}


def problem_label(name: str, dim: int | None) -> str:
    return f"{name}-{dim}" if dim else name


def header_key(row: dict) -> str:
    """Rows of one model and worker count on one problem, budget and target come from one command."""
    return f"{row['problem']}/{row['budget']}/{row['target']}/{row['model']}/{row['workers']}"


def merge_rows(old: list, new: list) -> list:
    """``old`` rows with ``new`` replacing those of the same problem, model, worker count, seed, budget
    and target."""
    key = lambda r: (r["problem"], r["model"], r["workers"], r["seed"], r["budget"], r["target"])
    fresh = {key(r) for r in new}
    return [r for r in old if key(r) not in fresh] + new


def claims() -> list[dict]:
    """None: the section measures costs and behaviour that no paper or bar states a figure for (DESIGN.md
    quotes the pending-point ratios as the reason the believer is the default)."""
    return []


def report() -> None:
    _common.update_section("parallel_workers", write_report(_common.load_results("parallel_workers.json", {})))


def write_report(results: dict) -> str:
    import numpy as np

    lines = ["## Parallel and asynchronous BO: pending points and simulated workers (parallel_workers)"]
    if "pending" in results:
        rows = results["pending"]
        lines += ["", results["pending_header"].rstrip(), "",
                  f"Seconds per steady suggestion on Hartmann6 with N = {rows[0]['n']} observations and P points pending "
                  "(GP with MAP inference; DNGO with its defaults), the first two calls (compilation) excluded:", "",
                  "| model | pending as | " + " | ".join(f"P = {p}" for p in sorted({r['pending'] for r in rows})) + " |",
                  "|---|---|" + "---|" * len({r['pending'] for r in rows})]
        for model in dict.fromkeys(r["model"] for r in rows):
            for mode in dict.fromkeys(r["mode"] for r in rows if r["model"] == model):
                cells = {r["pending"]: r["seconds"] for r in rows if r["model"] == model and r["mode"] == mode}
                lines.append(f"| {model} | {mode} | " + " | ".join(f"{cells[p]:.3f}" if p in cells else "–"
                                                                  for p in sorted({r['pending'] for r in rows})) + " |")
        ratios = []
        for model in dict.fromkeys(r["model"] for r in rows):
            cells = {r["pending"]: r["seconds"] for r in rows if r["model"] == model and r["mode"] == "believer"}
            if 0 in cells and max(cells) > 0:
                ratios.append(f"{model} {cells[max(cells)] / cells[0]:.2f}×")
        if ratios:
            top = max(r["pending"] for r in rows)
            lines += ["", f"As believer, P = {top} costs " + ", ".join(ratios) + " of P = 0."]
    if "workers" in results:
        rows = results["workers"]
        groups = dict.fromkeys((r["problem"], r["budget"], r["target"]) for r in rows)
        lines += ["", "Simulated workers (`SimulatedExecutor`, log-normal durations, median 1, sigma 0.5): the virtual"
                  " time until the best value is within the target of the optimum (median over seeds; – where no seed"
                  " got there) and the final regret, per problem:"]
        full = []
        for problem, budget, target in groups:
            group = [r for r in rows if (r["problem"], r["budget"], r["target"]) == (problem, budget, target)]
            headers = dict.fromkeys(results["workers_headers"][header_key(r)].rstrip() for r in group)
            lines += ["", *headers, "", f"**{problem}**, budget {budget}, target {target}:", "",
                      "| model | workers | seeds | virtual time to target | final regret (mean) | wall s / run |",
                      "|---|---|---|---|---|---|"]
            for model in dict.fromkeys(r["model"] for r in group):
                for k in sorted({r["workers"] for r in group if r["model"] == model}):
                    runs = [r for r in group if r["model"] == model and r["workers"] == k]
                    times = [r["time_to_target"] for r in runs if r["time_to_target"] is not None]
                    t = f"{np.median(times):.1f} ({len(times)}/{len(runs)} reached)" if times else "–"
                    lines.append(f"| {model} | {k} | {len(runs)} | {t} | {np.mean([r['final_regret'] for r in runs]):.4f} | "
                                 f"{np.mean([r['wall_seconds'] for r in runs]):.0f} |")
            if any(r["workers"] >= budget for r in group):
                full.append(problem)
        if full:
            lines += ["", f"With as many workers as the budget ({', '.join(full)}) the whole budget is asked before any"
                      " evaluation returns: no model sees data, and every method samples as random search does (the"
                      " same points, seed for seed)."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = ["pending", "workers"]
    _common.add_parts_argument(parser, parts)
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
    args = _common.start(parser, argv, parts=parts)
    if args is None:
        return
    path = results_path()
    if "pending" in args.parts:
        rows = []
        for model in (m for m in args.models if m != "random"):
            for mode in args.modes:
                for p in args.pending:
                    rows.append(time_pending(model, args.n, p, mode, args.repeats))
                    print(rows[-1], flush=True)
        _common.record_provenance("parallel_workers")
        _common.merge_results(path, [(["pending"], rows), (["pending_header"], _common.header("parallel_workers"))])
    if "workers" in args.parts:
        for model in args.models:
            for k in args.workers:
                rows = [virtual_time_to_target(model, k, seed, args.budget, args.target, args.problem, args.dim)
                        for seed in range(args.seeds)]
                print(rows, flush=True)
                _common.record_provenance("parallel_workers")
                results = _common.load_results("parallel_workers.json", {})
                _common.merge_results(path, [(["workers"], merge_rows(results.get("workers", []), rows)),
                                             (["workers_headers", header_key(rows[0])],
                                              _common.header("parallel_workers"))])
    _common.regenerate()


if __name__ == "__main__":
    main()
