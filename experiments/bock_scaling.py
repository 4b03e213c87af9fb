"""Seconds per suggestion against the dimension at a fixed number N of observations: BOCK vs jbo's ARD GP (Oh et al.
2018, §4.1 and Fig. 4: BOCK's kernel has P + 5 parameters at any dimension, an ARD kernel d + 2).

    python experiments/bock_scaling.py [--dims 10 20 50 100 200 500] [--n 200] [--extra 100:600] [--methods bock gp]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import bock_table1 as t1  # noqa: E402

RESULTS_FILE, SECTION = "bock_scaling.json", "bock_scaling"


def time_model(method: str, dim: int, n: int, repeats: int = 2, seed: int = 0, **options) -> dict:
    """Seconds per suggestion of ``method`` (with ``options``) on N uniformly random observations of BOCK's normalised
    d-dimensional Rosenbrock: ``jbo.loop.suggest`` called ``2 + repeats`` times, each suggestion forgotten so that N
    stays fixed. The first call compiles and fits cold; the steady cost is the median of the calls from the third."""
    import jax.numpy as jnp
    import numpy as np

    from jbo import loop
    from jbo.benchmarks import get_problem

    problem = get_problem("rosenbrock", dim=dim, normalized=True)
    space = problem.space()
    x = np.random.default_rng(seed).random((n, dim))
    y = np.asarray(problem.fn(jnp.asarray(problem.bounds[:, 0] + x * np.ptp(problem.bounds, axis=1))))
    # n_init=2: the default design (d + 1 points) would cover all N observations at d >= N, timing a design point
    settings = loop.Settings.create(method, seed=seed, n_init=2, **options)
    state = loop.init(settings, space)._replace(x=x, y=y, n_suggested=n)
    calls = []
    for _ in range(2 + repeats):
        start = time.perf_counter()
        state, _, info = loop.suggest(settings, space, state, size=n)
        assert info["phase"] == "model", info
        calls.append(time.perf_counter() - start)
        state = state._replace(pending=state.pending[:0])
    steady = float(np.median(calls[2:]))
    return {"method": method, "dim": dim, "n": n, "seconds_per_suggestion": steady, "calls": calls,
            "first_minus_steady": calls[0] - steady, "n_pad": info.get("n_pad"),
            "maximize": settings.maximize._asdict()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[10, 20, 50, 100, 200, 500])
    parser.add_argument("--n", type=int, default=200, help="observations at every dimension")
    parser.add_argument("--extra", nargs="*", default=["100:600"], help="more d:N points (issue 13's d = 100, N = 600)")
    parser.add_argument("--methods", nargs="+", default=["bock", "gp"], choices=["bock", "gp", "matern"])
    parser.add_argument("--repeats", type=int, default=2, help="steady calls after the first two")
    parser.add_argument("--max-seconds", type=float, default=300.0,
                        help="skip a method at larger d (same N) once one steady suggestion takes longer")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, cache=False)  # compile times are part of what is measured
    if args is None:
        return
    rows, stopped = [], set()
    for d, n in [(d, args.n) for d in args.dims] + [tuple(int(v) for v in e.split(":")) for e in args.extra]:
        for method in args.methods:
            if (method, n) in stopped:
                row = {"method": method, "dim": d, "n": n, "skipped": True}
            else:
                row = time_model(method, d, n, args.repeats)
            print(json.dumps(row), flush=True)
            if row.get("seconds_per_suggestion", 0.0) > args.max_seconds:
                stopped.add((method, n))
            rows.append(row)
            _common.write_json(os.path.join(_common.RESULTS, RESULTS_FILE), rows)
    _common.record_provenance(SECTION)
    _common.regenerate()


def steady(rows) -> dict:
    """``{(method, d, N): seconds per suggestion}`` of the rows measured (not skipped)."""
    return {(r["method"], r["dim"], r["n"]): r["seconds_per_suggestion"] for r in rows if not r.get("skipped")}


def table(rows: list[dict], what: str) -> list[str]:
    """:func:`time_model`'s ``rows``: per N and d, each method's steady seconds per suggestion and its first call's
    excess (compilation and the cold fit); ``what``: how they were measured."""
    methods = list(dict.fromkeys(r["method"] for r in rows))
    get = {(r["method"], r["dim"], r["n"]): r for r in rows}

    def cell(method, d, n, field, digits):
        r = get.get((method, d, n))
        return "–" if r is None else "skipped" if r.get("skipped") else f"{r[field]:.{digits}f} s"

    repeats = min(len(r["calls"]) for r in rows if not r.get("skipped")) - 2
    header = ["N", "d", *(f"{m} s / suggestion" for m in methods), *(f"{m} first − steady" for m in methods)]
    cells = [[n, d, *(cell(m, d, n, "seconds_per_suggestion", 2) for m in methods),
              *(cell(m, d, n, "first_minus_steady", 0) for m in methods)]
             for n, d in sorted({(r["n"], r["dim"]) for r in rows})]
    return [f"Median of {repeats} steady suggestions (the third call on) on N random observations of BOCK's normalised"
            f" Rosenbrock, float64, on a shared 2-core machine (treat ±30 % as noise); {what} \"first − steady\":"
            " compilation plus the cold fit's burn-in.", "", *t1.table(header, cells)]


def report() -> dict:
    rows = _common.load_results(RESULTS_FILE, [])
    lines = ["## BOCK: seconds per suggestion vs dimension", "", _common.header(SECTION)]
    if not rows:
        return {SECTION: "\n".join(lines + ["Not run yet."])}
    lines += table(rows, "each model with its defaults and its default search (BOCK scores ~16× more anchors, with"
                   " twice the Adam starts and steps).")
    bock, gp = steady(rows).get(("bock", 100, 600)), steady(rows).get(("gp", 100, 600))
    if bock and gp:
        lines += ["", f"Issue 13's speed bar (d = 100, N = 600): BOCK {bock:.2f} s per suggestion vs the ARD GP's"
                  f" {gp:.2f} s ({gp / bock:.1f}×): {'met' if bock < gp else '**not met**'}."]
    lines += ["", "Fig. 4's claim is reproduced when BOCK's time per suggestion grows by a smaller factor than the ARD"
              " GP's over the widest range of d measured for both at one N (`experiments/figures/bock_scaling.png`)."]
    return {SECTION: "\n".join(lines)}


def figures() -> None:
    """Steady seconds per suggestion against the dimension, per method and N (log-log)."""
    from matplotlib.figure import Figure

    rows = [r for r in _common.load_results(RESULTS_FILE, []) if not r.get("skipped")]
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.add_subplot()
    for method, n in dict.fromkeys((r["method"], r["n"]) for r in rows):
        pts = sorted((r["dim"], r["seconds_per_suggestion"]) for r in rows if (r["method"], r["n"]) == (method, n))
        ax.plot(*zip(*pts), marker="o", ls="-" if len(pts) > 1 else "none", label=f"{method}, N = {n}")
    ax.set(xscale="log", yscale="log", xlabel="dimension d", ylabel="seconds per suggestion (steady)",
           title="BOCK vs ARD GP: time per suggestion")
    ax.legend()
    os.makedirs(_common.FIGURES, exist_ok=True)
    fig.savefig(os.path.join(_common.FIGURES, "bock_scaling.png"), dpi=120)


def claims() -> list[dict]:
    """Fig. 4 (plotted only): ``yes`` when BOCK's seconds per suggestion grow by a smaller factor than the ARD GP's
    over the widest range of d measured for both at one N. Issue 13: BOCK the faster at d = 100, N = 600."""
    get = steady(_common.load_results(RESULTS_FILE, []))
    what = "time per suggestion grows more slowly with the dimension for BOCK than for an ARD GP"
    paper = "plotted only (whole runs at d = 20, 50, 100: BOCK less affected by d than Spearmint)"
    widest = None
    for n in sorted({k[2] for k in get}):
        dims = sorted(d for (m, d, k) in get if m == "bock" and k == n and ("gp", d, n) in get)
        if len(dims) >= 2 and (widest is None or dims[-1] / dims[0] > widest[2] / widest[1]):
            widest = (n, dims[0], dims[-1])
    if widest is None:
        out = [_common.claim("Oh et al. 2018, Fig. 4", what, paper, "–", "not run", SECTION)]
    else:
        n, lo, hi = widest
        factor = {m: get[m, hi, n] / get[m, lo, n] for m in ("bock", "gp")}
        figure = "; ".join(f"{label} ×{factor[m]:.1f} ({get[m, lo, n]:.2f} → {get[m, hi, n]:.2f} s)"
                           for m, label in (("bock", "BOCK"), ("gp", "ARD GP")))
        out = [_common.claim("Oh et al. 2018, Fig. 4", what + f" (N = {n}, d = {lo} → {hi})", paper, figure,
                             "yes" if factor["bock"] < factor["gp"] else "no", SECTION)]
    what = "BOCK faster per suggestion than jbo's ARD GP at d = 100, N = 600 (issue 13)"
    if ("bock", 100, 600) not in get or ("gp", 100, 600) not in get:
        return out + [_common.claim("jbo", what, "–", "–", "not run", SECTION)]
    b, a = get["bock", 100, 600], get["gp", 100, 600]
    return out + [_common.claim("jbo", what, "–", f"{b:.2f} s vs {a:.2f} s ({a / b:.1f}×)", "yes" if b < a else "no",
                                SECTION)]


if __name__ == "__main__":
    main()
