"""Time per suggestion against the number of observations N on Hartmann6 (issue #2's speed benchmark).

For each N, a state holding N uniformly random Hartmann6 observations is built and ``jbo.loop.suggest``
is called repeatedly on it: the first call compiles for the new padded size (and runs the first,
longer burn-in), the second compiles the warm-started fit, later calls are timed (median) as the
steady-state cost of one suggestion = hyperparameter fit + acquisition maximisation. The peers
(``experiments/peers.py``: Optuna's GPSampler and BoTorch SingleTaskGP + LogEI with
``optimize_acqf(num_restarts=10, raw_samples=512)``) are timed in the same run on the same data sizes.

The rows go to experiments/results/bench_suggest.json, from which BENCHMARKS.md is regenerated
(``experiments/report.py``; ``--report-only``: only that). A run replaces the rows of the methods and sizes it
measures and keeps the others; each row names its run, and the report marks rows of different runs. Single
suggestions, not a grid of runs: no ``jbo.study``.

    python experiments/bench_suggest.py [--n 50 100 200 400 800 1600] [--methods map slice optuna botorch]
        [--results-dir DIR] [--report-only]    (also: elliptical, nuts)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402


def time_jbo(inference: str, n: int, repeats: int = 3, seed: int = 0, **settings):
    import jax
    import numpy as np

    from jbo import loop
    from jbo.benchmarks import get_problem

    problem = get_problem("hartmann6")
    space = problem.space()
    rng = np.random.default_rng(seed)
    x = rng.random((n, space.dim))
    y = np.asarray(problem.fn(jax.numpy.asarray(x)))
    cfg = loop.Settings.create(inference=inference, seed=seed, **settings)
    state = loop.init(cfg, space)._replace(x=x, y=y, n_suggested=n)
    calls = []
    for _ in range(2 + repeats):
        start = time.perf_counter()
        state, _, info = loop.suggest(cfg, space, state)
        calls.append(time.perf_counter() - start)
        state = state._replace(pending=state.pending[:0])  # keep N fixed: forget the suggestion
    steady = float(np.median(calls[2:]))
    return {"method": f"jbo gp-{inference}", "n": n, "seconds_per_suggestion": steady,
            "first_call_seconds": calls[0], "second_call_seconds": calls[1],
            "compile_seconds": max(0.0, calls[0] - steady) + max(0.0, calls[1] - steady),
            "n_pad": info.get("n_pad"), "samples": cfg.model.kept_samples}


def time_peer(peer: str, n: int, repeats: int = 3):
    import peers

    fn = {"optuna": peers.time_optuna_gp, "botorch": peers.time_botorch}[peer]
    r = fn(n, repeats=repeats)
    return {"method": r["peer"], "n": n, "seconds_per_suggestion": r["seconds_per_suggestion"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[50, 100, 200, 400, 800, 1600])
    parser.add_argument("--methods", nargs="+", default=["map", "slice", "optuna", "botorch"],
                        choices=["map", "slice", "elliptical", "nuts", "optuna", "botorch"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--slice-max-n", type=int, default=800,
                        help="largest N for GP-slice (each suggestion is hundreds of O(N^3) factorisations)")
    parser.add_argument("--max-seconds", type=float, default=120.0,
                        help="stop a method at larger N once one suggestion exceeds this")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, cache=False)  # compile times are part of what is measured
    if args is None:
        return
    run = {"date": datetime.date.today().isoformat(), "commit": _common.git_revision()}
    rows, stopped = [], set()
    for n in args.n:
        for method in args.methods:
            if method in stopped or (method in ("slice", "elliptical", "nuts") and n > args.slice_max_n):
                continue
            r = (time_jbo(method, n, args.repeats) if method in ("map", "slice", "elliptical", "nuts")
                 else time_peer(method, n, args.repeats))
            rows.append({**r, "repeats": args.repeats, "run": run})
            print(json.dumps(r), flush=True)
            if r["seconds_per_suggestion"] > args.max_seconds:
                stopped.add(method)
    os.makedirs(_common.RESULTS, exist_ok=True)
    stored = _common.load_results("bench_suggest.json", [])
    _common.write_json(os.path.join(_common.RESULTS, "bench_suggest.json"), merge_rows(stored, rows))
    _common.record_provenance("bench_suggest", accumulates=True)
    _common.regenerate()


def merge_rows(stored: list[dict], new: list[dict]) -> list[dict]:
    """The stored rows with this run's ``new`` rows in place of those of the same ``(method, n)``: a rerun of
    some sizes or methods keeps the others. Methods keep the order they were first stored in, sizes ascend."""
    rows = {(row["method"], row["n"]): row for row in [*stored, *new]}  # a new row replaces its stored one
    order = list(dict.fromkeys(row["method"] for row in [*stored, *new]))
    return sorted(rows.values(), key=lambda row: (order.index(row["method"]), row["n"]))


def run_of(row: dict) -> str:
    """The run a row was measured in (``date, commit``); rows stored before runs were named: ``earlier``."""
    run = row.get("run")
    return f"{run['date']}, {run['commit']}" if run else "earlier"


CLAIM_N = 200
PEERS = {"optuna-gp": "Optuna GPSampler", "botorch-logei": "BoTorch"}
OURS = {"jbo gp-map": "MAP", "jbo gp-slice": "slice"}


def claims() -> list[dict]:
    """Seconds per steady suggestion at N = 200 (headline): jbo's GP with MAP and with slice sampling against
    Optuna's GPSampler and BoTorch timed in the same run. ``yes`` when both jbo rows are no slower than the
    faster peer, ``partly`` when one is, ``no`` when neither; ``not run`` without the rows or when they come
    from different runs (:func:`merge_rows`)."""
    at_claim = [r for r in _common.load_results("bench_suggest.json", []) if r["n"] == CLAIM_N]
    rows = {r["method"]: r["seconds_per_suggestion"] for r in at_claim}
    ours = {m: rows.get(m) for m in OURS}
    peers = {m: rows[m] for m in PEERS if m in rows}
    what = (f"Seconds per suggestion, Hartmann6, N = {CLAIM_N}: jbo GP (MAP, slice) vs Optuna GPSampler and BoTorch"
            " (peers' figures from the same run)")
    paper = ", ".join(f"{PEERS[m]} {seconds:.3f} s" for m, seconds in peers.items()) or "–"
    runs = {run_of(r) for r in at_claim if r["method"] in {*OURS, *peers}}
    if None in ours.values() or not peers or len(runs) > 1:
        figure = ", ".join(f"{OURS[m]} {s:.3f} s" for m, s in ours.items() if s is not None) or "–"
        if len(runs) > 1:
            figure += f" (rows of different runs: {'; '.join(sorted(runs))})"
        return [_common.claim("jbo", what, paper, figure, "not run", "bench_suggest", headline=True)]
    fastest = min(peers.values())
    faster = sum(seconds <= fastest for seconds in ours.values())
    verdict = {2: "yes", 1: "partly", 0: "no"}[faster]
    figure = ", ".join(f"{OURS[m]} {s:.3f} s" for m, s in ours.items())
    return [_common.claim("jbo", what, paper, figure, verdict, "bench_suggest", headline=True)]


def report() -> None:
    write_report(_common.load_results("bench_suggest.json", []))


def write_report(rows, args=None):
    repeats = rows[0].get("repeats", 3) if rows else 3  # rows stored before ``repeats`` was stored: 3
    methods = list(dict.fromkeys(r["method"] for r in rows))
    ns = sorted({r["n"] for r in rows})
    get = {(r["method"], r["n"]): r for r in rows}
    newest_first = sorted(rows, key=lambda r: (r.get("run") is not None, run_of(r)), reverse=True)
    runs = list(dict.fromkeys(run_of(r) for r in newest_first))
    # rows of several runs: each cell names its run, as ratios only hold between rows of one run
    mark = {run: f" ({chr(ord('a') + i)})" if len(runs) > 1 else "" for i, run in enumerate(runs)}
    lines = ["## Time per suggestion vs N (Hartmann6)", "", _common.header("bench_suggest"),
             f"Median of {repeats} suggestions after compilation (jbo: hyperparameter fit + acquisition"
             " maximisation, float64, the GP's default settings: slice = 10 samples, its chain continued from the last"
             " suggestion's (no sweeps discarded); MAP = L-BFGS from the last estimate). Peers measured in the same"
             " process, same N; `experiments/peers.py` pins"
             " their versions (Optuna 5.0.0 GPSampler; BoTorch 0.18.1 SingleTaskGP + LogEI,"
             " optimize_acqf(num_restarts=10, raw_samples=512), torch 2.13.0 CPU, 1 thread).", "",
             "| method | " + " | ".join(f"N={n}" for n in ns) + " |", "|---|" + "---|" * len(ns)]
    for m in methods:
        cells = [f"{get[(m, n)]['seconds_per_suggestion']:.3f} s{mark[run_of(get[(m, n)])]}" if (m, n) in get
                 else "–" for n in ns]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    if len(runs) > 1:
        lines += ["", "Rows of more than one run (compare rows of one run): "
                  + "; ".join(f"{mark[run].strip()} {run}" for run in runs) + "."]
    lines += ["", "First use of a padded size (jbo): the first two calls minus two steady calls. This is the"
              " compilation of the three programs (cold fit, warm fit, proposal) plus the extra work of the cold"
              " fit (MAP from 4 prior draws, slice with 50 burn-in sweeps), which dominates at large N. In a BO run"
              " only the warm fit and the proposal are compiled at each new size, and JAX's persistent cache"
              " (used by `jbo run`) removes compilation from later runs:", "",
              "| method | " + " | ".join(f"N={n} (pad)" for n in ns) + " |", "|---|" + "---|" * len(ns)]
    for m in methods:
        if not m.startswith("jbo"):
            continue
        cells = [f"{get[(m, n)]['compile_seconds']:.1f} s ({get[(m, n)]['n_pad']})" if (m, n) in get else "–"
                 for n in ns]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lines += ["", f"Summary verdict (N = {CLAIM_N}): `yes` when jbo's MAP and slice rows are both no slower than the faster"
              " peer, `partly` when one is, `no` when neither."]
    _common.update_section("bench_suggest", "\n".join(lines))


if __name__ == "__main__":
    main()
