"""Time per suggestion against the number of observations N on Hartmann6 (issue #2): jbo's GP against Optuna's
GPSampler and BoTorch (``peers.py``) in the same process. A run replaces the rows of the methods and sizes it
measures and keeps the others.

    python experiments/bench_suggest.py [--n 50 100 200 400 800 1600] [--methods map slice elliptical optuna botorch]
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
import _speed  # noqa: E402

RESULTS_FILE = "bench_suggest.json"
SAMPLERS = ("slice", "elliptical")  # each suggestion is hundreds of O(N^3) factorisations: N ≤ 800
CLAIM_N = 200
PEERS = {"optuna-gp": "Optuna GPSampler", "botorch-logei": "BoTorch"}
OURS = {"jbo gp-map": "MAP", "jbo gp-slice": "slice"}


def time_jbo(inference: str, n: int, repeats: int = 3, seed: int = 0, **settings) -> dict:
    """Seconds per suggestion of jbo's GP on Hartmann6 after ``n`` random observations, each suggestion evaluated and
    told before the next, as the peers' are (so every fit sees one more point than the last: a warm-started search
    such as MAP's L-BFGS has to move). The first two calls compile (cold and warm fit); the median of the later ones
    is the steady cost (fit + acquisition search); the padded size stays that of ``n``."""
    import jax
    import numpy as np

    from jbo import loop
    from jbo.benchmarks import get_problem

    problem = get_problem("hartmann6")
    space = problem.space()
    x = np.random.default_rng(seed).random((n, space.dim))
    cfg = loop.Settings.create(inference=inference, seed=seed, **settings)
    state = loop.init(cfg, space)._replace(x=x, y=np.asarray(problem.fn(jax.numpy.asarray(x))), n_suggested=n)
    calls = []
    for _ in range(2 + repeats):
        start = time.perf_counter()
        state, suggestion, info = loop.suggest(cfg, space, state)
        calls.append(time.perf_counter() - start)
        state = loop.observe(state, suggestion, float(problem.fn(jax.numpy.asarray(suggestion))))
    steady = float(np.median(calls[2:]))
    return {"method": f"jbo gp-{inference}", "n": n, "seconds_per_suggestion": steady,
            "first_call_seconds": calls[0], "second_call_seconds": calls[1],
            "compile_seconds": max(0.0, calls[0] - steady) + max(0.0, calls[1] - steady),
            "n_pad": info.get("n_pad"), "samples": cfg.model.kept_samples, "told": True}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[50, 100, 200, 400, 800, 1600])
    parser.add_argument("--methods", nargs="+", default=["map", "slice", "optuna", "botorch"],
                        choices=["map", *SAMPLERS, "optuna", "botorch"])
    parser.add_argument("--repeats", type=int, default=3)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, cache=False)  # compile times are part of what is measured
    if args is None:
        return
    run = {"date": datetime.date.today().isoformat(), "commit": _common.git_revision()}
    rows, stopped = [], set()  # a method stops at larger N once one suggestion takes over two minutes
    for n in args.n:
        for method in [m for m in args.methods if m not in stopped and not (m in SAMPLERS and n > 800)]:
            if method in ("optuna", "botorch"):
                import peers

                r = {"optuna": peers.time_optuna_gp, "botorch": peers.time_botorch}[method](n, repeats=args.repeats)
                r = {"method": r["peer"], "n": n, "seconds_per_suggestion": r["seconds_per_suggestion"]}
            else:
                r = time_jbo(method, n, args.repeats)
            rows.append({**r, "repeats": args.repeats, "run": run})
            print(json.dumps(r), flush=True)
            if r["seconds_per_suggestion"] > 120:
                stopped.add(method)
    path = os.path.join(_common.RESULTS, RESULTS_FILE)
    _common.write_json(path, merge_rows(_common.read_json(path, []), rows))
    _common.record_provenance("bench_suggest", accumulates=True)
    _common.regenerate()


def merge_rows(stored: list[dict], new: list[dict]) -> list[dict]:
    """The stored rows with ``new`` in place of those of the same ``(method, n)``; methods keep the order they were
    first stored in, sizes ascend."""
    rows = {(row["method"], row["n"]): row for row in [*stored, *new]}
    order = list(dict.fromkeys(row["method"] for row in [*stored, *new]))
    return sorted(rows.values(), key=lambda row: (order.index(row["method"]), row["n"]))


def _fixed(row: dict) -> str:
    """``*`` for a jbo row measured on a fixed N (before suggestions were told)."""
    return "*" if row["method"].startswith("jbo") and not row.get("told") else ""


def run_of(row: dict) -> str:
    """The run a row was measured in (``date, commit``); rows stored before runs were named: ``earlier``."""
    run = row.get("run")
    return f"{run['date']}, {run['commit']}" if run else "earlier"


def claims() -> list[dict]:
    """Seconds per steady suggestion at N = 200 (headline), jbo's MAP and slice rows against the peers of the same
    run: ``yes`` when both are no slower than the faster peer, ``partly`` when one is; ``not run`` without the rows
    or when they come from different runs."""
    at_claim = [r for r in _common.load_results(RESULTS_FILE, []) if r["n"] == CLAIM_N]
    rows = {r["method"]: r["seconds_per_suggestion"] for r in at_claim}
    ours = {m: rows.get(m) for m in OURS}
    peers = {m: rows[m] for m in PEERS if m in rows}
    what = (f"Seconds per suggestion, Hartmann6, N = {CLAIM_N}: jbo GP (MAP, slice) vs Optuna GPSampler and BoTorch"
            " (peers' figures from the same run)")
    paper = ", ".join(f"{PEERS[m]} {seconds:.3f} s" for m, seconds in peers.items()) or "–"
    figure = ", ".join(f"{OURS[m]} {s:.3f} s" for m, s in ours.items() if s is not None) or "–"
    runs = {run_of(r) for r in at_claim if r["method"] in {*OURS, *peers}}
    verdict = "not run"
    if len(runs) > 1:
        figure += f" (rows of different runs: {'; '.join(sorted(runs))})"
    elif None not in ours.values() and peers:
        verdict = {2: "yes", 1: "partly", 0: "no"}[sum(s <= min(peers.values()) for s in ours.values())]
    return [_common.claim("jbo", what, paper, figure, verdict, "bench_suggest", headline=True)]


def report() -> dict:
    rows = _common.load_results(RESULTS_FILE, [])
    ns = sorted({r["n"] for r in rows})
    get = {(r["method"], r["n"]): r for r in rows}
    methods = list(dict.fromkeys(r["method"] for r in rows))
    newest_first = sorted(rows, key=lambda r: (r.get("run") is not None, run_of(r)), reverse=True)
    runs = list(dict.fromkeys(run_of(r) for r in newest_first))
    mark = {run: f" ({chr(ord('a') + i)})" if len(runs) > 1 else "" for i, run in enumerate(runs)}

    def cells(method, text):
        return [method, *(text(get[(method, n)]) if (method, n) in get else "–" for n in ns)]

    lines = ["## Time per suggestion vs N (Hartmann6)", "", _common.header("bench_suggest"),
             f"Median of {rows[0].get('repeats', 3) if rows else 3} suggestions after compilation (jbo: fit +"
             " acquisition search, float64, the GP's defaults: slice = 10 samples continuing the last suggestion's"
             " chain, MAP = L-BFGS from the last estimate, in its Laplace units), each evaluated and told before"
             " the next, as the peers' (rows marked * kept N fixed instead, the suggestion forgotten: MAP's warm"
             " start then has nothing to move). Peers in the same process, same N (`peers.py`: Optuna 5.0.0 GPSampler;"
             " BoTorch 0.18.1 SingleTaskGP + LogEI, optimize_acqf(num_restarts=10, raw_samples=512), torch"
             " 2.13.0 CPU, 1 thread).", "",
             *_speed.table(["method", *(f"N={n}" for n in ns)], *(
                 cells(m, lambda r: f"{r['seconds_per_suggestion']:.3f} s{mark[run_of(r)]}{_fixed(r)}")
                 for m in methods))]
    if len(runs) > 1:
        lines += ["", "Rows of more than one run (compare rows of one run): "
                  + "; ".join(f"{mark[run].strip()} {run}" for run in runs) + "."]
    lines += ["", "First use of a padded size (jbo): the first two calls minus two steady ones (compiling the cold"
              " and warm fit and the proposal, and the cold fit's extra work):", "",
              *_speed.table(["method", *(f"N={n} (pad)" for n in ns)],
                            *(cells(m, lambda r: f"{r['compile_seconds']:.1f} s ({r['n_pad']})")
                              for m in methods if m.startswith("jbo"))),
              "", f"Summary verdict (N = {CLAIM_N}): `yes` when jbo's MAP and slice rows are both no slower than the"
              " faster peer, `partly` when one is."]
    return {"bench_suggest": "\n".join(lines)}


if __name__ == "__main__":
    main()
