"""DNGO's Fig. 1: time per suggestion against N on Hartmann6, GP (MAP, slice) vs DNGO (1 and 5 networks).

For each N a loop state holding N uniformly random Hartmann6 observations is built and
``jbo.loop.suggest`` is called on it repeatedly; the first two calls compile (cold and warm-started
programs) and are reported apart, the median of the later calls is the steady cost of one suggestion
(GP: hyperparameter fit + acquisition; DNGO: network training + BLR statistics + slice sampling of
α, β, λ, c, Λ + acquisition). All methods run in one process, one after another, so their ratios are
measured side by side. A GP method stops once one suggestion exceeds ``--max-seconds`` (120 s). The
log-log slope of DNGO's time is fitted by least squares from N = 400 to the largest N.

    python experiments/dngo_scaling.py [--n 100 200 400 800 1600 3200 6400] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

METHODS = {
    "gp-map": dict(model="gp", inference="map"),
    "gp-slice": dict(model="gp", inference="slice"),
    "dngo": dict(model="dngo", inference="slice"),
    "ensemble-5": dict(model="ensemble", inference="slice", n_networks=5),
}


def time_suggestions(settings: dict, n: int, repeats: int, seed: int = 0) -> dict:
    import jax
    import numpy as np

    from jbo import loop
    from jbo.benchmarks import get_problem

    problem = get_problem("hartmann6")
    space = problem.space()
    rng = np.random.default_rng(seed)
    x = rng.random((n, space.dim))
    y = np.asarray(problem.fn(jax.numpy.asarray(x)))
    cfg = loop.Settings.create(seed=seed, **settings)
    state = loop.init(cfg, space)._replace(x=x, y=y, n_suggested=n)
    calls, infos = [], []
    for _ in range(2 + repeats):
        start = time.perf_counter()
        state, _, info = loop.suggest(cfg, space, state)
        calls.append(time.perf_counter() - start)
        infos.append(info)
        state = state._replace(pending=state.pending[:0])  # keep N fixed: forget the suggestion
    steady = float(np.median(calls[2:]))
    last = infos[-1]
    return {"n": n, "seconds_per_suggestion": steady, "all_calls": calls,
            "compile_seconds": max(0.0, calls[0] - steady) + max(0.0, calls[1] - steady),
            "n_pad": last.get("n_pad"),
            "network_steps": cfg.model.network.num_steps if cfg.model_name in ("dngo", "ensemble") else None}


def slope(ns, seconds, n_min=400):
    """Least-squares slope of log(seconds) against log(N) over N >= n_min."""
    import numpy as np

    pts = [(n, s) for n, s in zip(ns, seconds) if n >= n_min]
    if len(pts) < 2:
        return float("nan")
    a = np.log([p[0] for p in pts])
    b = np.log([p[1] for p in pts])
    return float(np.polyfit(a, b, 1)[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[100, 200, 400, 800, 1600, 3200, 6400])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--slice-max-n", type=int, default=1600, help="largest N for GP-slice")
    parser.add_argument("--gp-max-n", type=int, default=6400, help="largest N for GP-MAP")
    parser.add_argument("--results", default=os.path.join(_common.RESULTS, "dngo_scaling.json"),
                        help="JSON file of the timings (written, or read with --report-only)")
    parser.add_argument("--section", default="dngo_scaling", help="BENCHMARKS.md section to (re)write")
    parser.add_argument("--report-only", action="store_true", help="rewrite the section from --results")
    parser.add_argument("--cpu-devices", type=int, default=None,
                        help="split the host CPU into this many JAX devices (ensemble members then train split over them)")
    args = parser.parse_args(argv)
    if args.report_only:
        saved = json.load(open(args.results))
        if isinstance(saved, list):  # the first format: rows only
            saved = {"rows": saved, "repeats": args.repeats, "args": {}, "machine": None}
        write_report(saved["rows"], saved["repeats"], argparse.Namespace(**saved["args"]) if saved["args"] else None,
                     saved["machine"], args.section)
        return
    _common.setup(cache=False, cpu_devices=args.cpu_devices)
    rows, stopped = [], set()
    for n in args.n:
        for method in args.methods:
            if method in stopped or (method == "gp-slice" and n > args.slice_max_n) or (
                    method == "gp-map" and n > args.gp_max_n):
                continue
            r = {"method": method, **time_suggestions(METHODS[method], n, args.repeats)}
            rows.append(r)
            print(json.dumps(r), flush=True)
            if method.startswith("gp") and r["seconds_per_suggestion"] > args.max_seconds:
                stopped.add(method)
    os.makedirs(os.path.dirname(os.path.abspath(args.results)), exist_ok=True)
    machine = _common.header()
    saved_args = {k: v for k, v in vars(args).items() if k in ("n", "methods", "slice_max_n", "gp_max_n", "cpu_devices")}
    json.dump({"rows": rows, "repeats": args.repeats, "args": saved_args, "machine": machine},
              open(args.results, "w"), indent=1)
    write_report(rows, args.repeats, args, machine, args.section)


def _caps(args, methods, ns) -> str:
    """The sentence naming the N caps of this run's GP methods, when a cap cut the N grid short."""
    if args is None:
        return ""
    caps = [f"{label} at N = {cap}" for method, label, cap in (("gp-slice", "GP-slice", args.slice_max_n),
                                                              ("gp-map", "GP-MAP", args.gp_max_n))
            if method in methods and cap < max(ns)]
    if not caps:
        return ""
    return ("; this run capped " + " and ".join(caps) + " to fit the session's time (their O(N³) cost makes the"
            " next size several minutes per call)")


def write_report(rows, repeats=2, args=None, machine=None, section="dngo_scaling"):
    import numpy as np

    from jbo.plotting import plot_times

    methods = list(dict.fromkeys(r["method"] for r in rows))
    ns = sorted({r["n"] for r in rows})
    # Rows saved before the key existed were timed with the then default of 1000 training steps.
    steps = "/".join(str(s) for s in sorted({r.get("network_steps") or 1000 for r in rows
                                              if r["method"] in ("dngo", "ensemble-5")})) or "–"
    get = {(r["method"], r["n"]): r for r in rows}
    series = {m: ([r["n"] for r in rows if r["method"] == m], [r["seconds_per_suggestion"] for r in rows if r["method"] == m])
              for m in methods}
    os.makedirs(os.path.join(_common.ROOT, "experiments", "figures"), exist_ok=True)
    figure = os.path.join("experiments", "figures", f"{section}.png")
    plot_times({m: (np.asarray(n), np.asarray(s)) for m, (n, s) in series.items()}, os.path.join(_common.ROOT, figure),
               title="Hartmann6: time per suggestion (cf. Snoek et al. 2015, Fig. 1)")
    title = "## DNGO scaling: time per suggestion vs N (Hartmann6; Snoek et al. 2015, Fig. 1)"
    lines = [title + ("" if section == "dngo_scaling" else f" [{section}]"), "",
             machine or _common.header(),
             f"Median of {repeats} suggestions after the two compiling calls, all methods in one process. GP: Matérn-5/2"
             f" ARD, MAP (L-BFGS from the last estimate) or slice (10 samples); DNGO: tanh 50-50-50 network, {steps} Adam"
             " steps (mini-batches of 256 once N > 256), BLR with the quadratic prior mean, 10 slice samples of α, β,"
             " λ, c, Λ per network; ensemble-5: five such networks trained by one vmapped program, aggregated by the"
             f" mean. GP methods stop once a suggestion exceeds 120 s" + _caps(args, methods, ns)
             + f". Figure: `{figure}`.", "",
             "| method | " + " | ".join(f"N={n}" for n in ns) + " | slope (N ≥ 400) |", "|---|" + "---|" * (len(ns) + 1)]
    for m in methods:
        cells = [f"{get[(m, n)]['seconds_per_suggestion']:.2f} s" if (m, n) in get else "–" for n in ns]
        lines.append(f"| {m} | " + " | ".join(cells) + f" | {slope(*series[m]):.2f} |")
    ratios = []
    for n in ns:
        parts = []
        if ("dngo", n) in get and ("gp-map", n) in get:
            parts.append(f"DNGO / GP-MAP = {get[('dngo', n)]['seconds_per_suggestion'] / get[('gp-map', n)]['seconds_per_suggestion']:.3f}")
        if ("dngo", n) in get and ("ensemble-5", n) in get:
            parts.append(f"ensemble-5 / DNGO = {get[('ensemble-5', n)]['seconds_per_suggestion'] / get[('dngo', n)]['seconds_per_suggestion']:.2f}")
        if parts:
            ratios.append(f"| {n} | " + " | ".join(parts) + " |")
    lines += ["", "Ratios measured in this run:", "", "| N | ratios |", "|---|---|", *ratios]
    lines += ["", "DNGO time split at each N (train / BLR inference / acquisition, seconds):", "",
              "| method | " + " | ".join(f"N={n}" for n in ns) + " |", "|---|" + "---|" * len(ns)]
    for m in methods:
        if m.startswith("gp"):
            continue
        cells = []
        for n in ns:
            r = get.get((m, n))
            # rows timed since 87bfd7b have no split: one compiled program does all three
            cells.append("–" if r is None or r.get("train_seconds") is None else
                         f"{r['train_seconds']:.2f} / {r['fit_seconds'] - r['train_seconds']:.2f} / {r['acquisition_seconds']:.2f}")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lines += ["", "Peers on the 2-core CPU machine (measured in November 2026 with BoTorch 0.18, Optuna 5.0, pybnn; not rerun here): pybnn's DNGO (emcee) ~127 s at"
              " N = 1600; BoTorch SingleTaskGP 28 s; Optuna GPSampler 14 s."]
    _common.update_section(section, "\n".join(lines))


if __name__ == "__main__":
    main()
