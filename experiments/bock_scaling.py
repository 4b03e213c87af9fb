"""Seconds per suggestion against the dimension at a fixed number of observations: BOCK vs jbo's ARD GP (the
efficiency claim of Oh et al. 2018, §4.1: BOCK's kernel has P + 5 parameters at any dimension, an ARD kernel
d + 2).

For each dimension d (and N), a state holding N uniformly random observations of BOCK's normalised Rosenbrock
is built and ``jbo.loop.suggest`` is called on it ``2 + repeats`` times with the buffers padded to exactly N
(``size=N``), the suggestion dropped after each call so that N stays fixed. The first call compiles the
suggestion program and runs the cold fit (slice sampling from a prior draw with 50 burn-in sweeps); the
median of the calls from the third on is the steady cost of one suggestion (hyperparameter fit with 5
warm-started sweeps and 10 kept samples, then the acquisition search). "First call − steady" is reported
apart: compilation plus the cold fit's extra sweeps. Both models run with their defaults, measured side by
side in one process, JAX's persistent compile cache off: ``bock`` with BOCK's search (20 000 fresh Sobol
anchors, top 20, 200 Adam steps), ``gp`` with jbo's default search (1 024 + 256 anchors, top 10, 100 Adam
steps), a much smaller one. ``matern`` (the paper's non-ARD baseline with BOCK's search) is optional. A timing
benchmark of single suggestions, not a grid of runs (no ``jbo.study``): the rows go to
``experiments/results/bock_scaling.json``; the run's provenance is recorded and BENCHMARKS.md regenerated from
the stored results (``report()``, ``claims()``); ``--report-only`` only regenerates.

    python experiments/bock_scaling.py [--dims 10 20 50 100 200 500] [--n 200] [--extra 100:600]
        [--report-only] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

RESULTS_FILE = "bock_scaling.json"
SECTION = "bock_scaling"


def time_model(method: str, dim: int, n: int, repeats: int = 2, seed: int = 0, **options) -> dict:
    """Steady seconds per suggestion of ``method`` (with the model and loop ``options``) on N random observations
    of BOCK's normalised d-dimensional Rosenbrock (the module docstring says how)."""
    import jax.numpy as jnp
    import numpy as np

    from jbo import loop
    from jbo.benchmarks import get_problem

    problem = get_problem("rosenbrock", dim=dim, normalized=True)
    space = problem.space()
    rng = np.random.default_rng(seed)
    x = rng.random((n, dim))
    y = np.asarray(problem.fn(jnp.asarray(problem.bounds[:, 0] + x * np.ptp(problem.bounds, axis=1))))
    # n_init=2: the default initial design (d + 1 points) would cover all N observations at d >= N, and
    # those calls would time a design point, not the model.
    settings = loop.Settings.create(method, seed=seed, n_init=2, **options)
    state = loop.init(settings, space)._replace(x=x, y=y, n_suggested=n)
    calls = []
    for _ in range(2 + repeats):
        start = time.perf_counter()
        state, _, info = loop.suggest(settings, space, state, size=n)
        assert info["phase"] == "model", info
        calls.append(time.perf_counter() - start)
        state = state._replace(pending=state.pending[:0])  # keep N fixed: forget the suggestion
    steady = float(np.median(calls[2:]))
    return {"method": method, "dim": dim, "n": n, "seconds_per_suggestion": steady, "calls": calls,
            "first_minus_steady": calls[0] - steady, "n_pad": info.get("n_pad"),
            "maximize": settings.maximize._asdict()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[10, 20, 50, 100, 200, 500])
    parser.add_argument("--n", type=int, default=200, help="observations at every dimension")
    parser.add_argument("--extra", nargs="*", default=["100:600"], help="more d:N points (the issue's d = 100, N = 600)")
    parser.add_argument("--methods", nargs="+", default=["bock", "gp"], choices=["bock", "gp", "matern"])
    parser.add_argument("--repeats", type=int, default=2, help="steady calls after the first two")
    parser.add_argument("--max-seconds", type=float, default=300.0,
                        help="skip a method at larger d (same N) once one steady suggestion takes longer")
    parser.add_argument("--results", default=None, help=f"results JSON (default experiments/results/{RESULTS_FILE});"
                        " rows stored elsewhere record no provenance and are not in the report")
    _common.add_output_arguments(parser)
    parser.add_argument("--no-report", action="store_true", help="leave BENCHMARKS.md alone")
    # cache=False: compile times are part of what is measured; --report-only is handled below, where
    # --no-report can still skip the report
    args = _common.start(parser, argv, cache=False, handle_report_only=False)
    path = args.results or os.path.join(_common.RESULTS, RESULTS_FILE)
    rows = []
    if not args.report_only:
        points = [(d, args.n) for d in args.dims] + [tuple(int(v) for v in e.split(":")) for e in args.extra]
        stopped = set()
        started = time.perf_counter()
        for d, n in points:
            for method in args.methods:
                if (method, n) in stopped:
                    rows.append({"method": method, "dim": d, "n": n, "skipped": True})
                    continue
                row = time_model(method, d, n, args.repeats)
                rows.append(row)
                print(json.dumps(row), flush=True)
                if row["seconds_per_suggestion"] > args.max_seconds:
                    stopped.add((method, n))
                _common.write_json(path, rows)
        print(f"wall time {time.perf_counter() - started:.0f} s", flush=True)
        if rows and args.results is None:
            _common.record_provenance(SECTION)
    if not args.no_report:
        _common.regenerate()


def report() -> None:
    """Rewrite the ``bock_scaling`` section from the stored timings (no runs)."""
    write_report(_common.load_results(RESULTS_FILE, []))


def steady(rows) -> dict:
    """``{(method, d, N): seconds per suggestion}`` of the rows measured (not skipped)."""
    return {(r["method"], r["dim"], r["n"]): r["seconds_per_suggestion"] for r in rows if not r.get("skipped")}


def growth(rows):
    """``(N, d_low, d_high, {method: (s at d_low, s at d_high)})`` for BOCK and the ARD GP over the widest range
    of dimensions both were measured at with one N, or None."""
    get = steady(rows)
    best = None
    for n in sorted({r["n"] for r in rows}):
        dims = sorted(d for (m, d, k) in get if m == "bock" and k == n and ("gp", d, n) in get)
        if len(dims) >= 2 and (best is None or dims[-1] / dims[0] > best[2] / best[1]):
            best = (n, dims[0], dims[-1])
    if best is None:
        return None
    n, lo, hi = best
    return n, lo, hi, {m: (get[m, lo, n], get[m, hi, n]) for m in ("bock", "gp")}


def claims() -> list[dict]:
    """Oh et al.'s Fig. 4 (plotted only: whole-run wall-clock time against d, BOCK less affected than an ARD GP):
    ``yes`` when BOCK's steady seconds per suggestion grow by a smaller factor than jbo's ARD GP's over the
    widest range of d measured for both at one N, else ``no``. jbo's own bar (issue 13): BOCK faster per
    suggestion than the ARD GP at d = 100, N = 600: ``yes`` / ``no``."""
    rows = _common.load_results(RESULTS_FILE, [])
    g = growth(rows)
    what = "time per suggestion grows more slowly with the dimension for BOCK than for an ARD GP"
    paper = "plotted only (whole runs at d = 20, 50, 100: BOCK less affected by d than Spearmint)"
    if g is None:
        out = [_common.claim("Oh et al. 2018, Fig. 4", what, paper, "–", "not run", SECTION)]
    else:
        n, lo, hi, times = g
        factor = {m: b / a for m, (a, b) in times.items()}
        out = [_common.claim("Oh et al. 2018, Fig. 4", what + f" (N = {n}, d = {lo} → {hi})", paper,
                             "; ".join(f"{label} ×{factor[m]:.1f} ({times[m][0]:.2f} → {times[m][1]:.2f} s)"
                                       for m, label in (("bock", "BOCK"), ("gp", "ARD GP"))),
                             "yes" if factor["bock"] < factor["gp"] else "no", SECTION)]
    get = steady(rows)
    what = "BOCK faster per suggestion than jbo's ARD GP at d = 100, N = 600 (issue 13)"
    if ("bock", 100, 600) in get and ("gp", 100, 600) in get:
        b, a = get["bock", 100, 600], get["gp", 100, 600]
        out.append(_common.claim("jbo", what, "–", f"{b:.2f} s vs {a:.2f} s ({a / b:.1f}×)", "yes" if b < a else "no",
                                 SECTION))
    else:
        out.append(_common.claim("jbo", what, "–", "–", "not run", SECTION))
    return out


def write_report(rows):
    methods = list(dict.fromkeys(r["method"] for r in rows))
    points = sorted({(r["n"], r["dim"]) for r in rows})
    get = {(r["method"], r["dim"], r["n"]): r for r in rows}

    def cell(method, d, n, field):
        r = get.get((method, d, n))
        if r is None:
            return "–"
        if r.get("skipped"):
            return "skipped"
        return f"{r[field]:.2f} s" if field == "seconds_per_suggestion" else f"{r[field]:.0f} s"

    lines = ["## BOCK: seconds per suggestion vs dimension", "", _common.header(SECTION)]
    if not rows:
        _common.update_section(SECTION, "\n".join(lines + ["Not run yet."]))
        return
    repeats = min(len(r["calls"]) for r in rows if not r.get("skipped")) - 2
    lines += [f"Median of {repeats} steady suggestions (the third call on), N random observations of BOCK's"
              " normalised Rosenbrock, buffers padded to exactly N, float64, 10 slice samples per suggestion"
              " (5 warm-started sweeps), both models measured side by side in one process on a shared 2-core"
              " machine (other jobs running: treat ±30 % as noise). Each model with its defaults (BOCK: the"
              " authors' priors in the objective's units) and its default search: BOCK"
              " 20 000 Sobol anchors + 10 local, top 20, 200 Adam steps; the ARD GP 1 024 + 256 anchors, top 10,"
              " 100 Adam steps (BOCK scores ~16× more anchors and runs twice the Adam starts and steps)."
              " \"first − steady\": the first call minus a steady one, i.e. compilation plus the cold fit's 50"
              " burn-in sweeps.", "",
              "| N | d | " + " | ".join(f"{m} s / suggestion" for m in methods) + " | "
              + " | ".join(f"{m} first − steady" for m in methods) + " |",
              "|---|---|" + "---|" * (2 * len(methods))]
    for n, d in points:
        lines.append(f"| {n} | {d} | " + " | ".join(cell(m, d, n, "seconds_per_suggestion") for m in methods)
                     + " | " + " | ".join(cell(m, d, n, "first_minus_steady") for m in methods) + " |")
    bock, gp = get.get(("bock", 100, 600)), get.get(("gp", 100, 600))
    if bock and gp and not bock.get("skipped") and not gp.get("skipped"):
        ratio = gp["seconds_per_suggestion"] / bock["seconds_per_suggestion"]
        verdict = "met" if bock["seconds_per_suggestion"] < gp["seconds_per_suggestion"] else "**not met**"
        lines += ["", f"Issue 13's speed bar (d = 100, N = 600): BOCK {bock['seconds_per_suggestion']:.2f} s per"
                  f" suggestion vs the ARD GP's {gp['seconds_per_suggestion']:.2f} s ({ratio:.1f}×): {verdict}; first"
                  f" call − steady (compilation + cold fit) {bock['first_minus_steady']:.0f} s vs"
                  f" {gp['first_minus_steady']:.0f} s."]
    lines += ["", "Summary verdicts: Fig. 4's claim is reproduced when BOCK's time per suggestion grows by a smaller"
              " factor than the ARD GP's over the widest range of d measured for both at one N."]
    path = os.path.join(_common.FIGURES, "bock_scaling.png")
    if _common.PLOTS:
        _plot(rows, path)
    lines += ["", f"Figure: `{_common.display_path(path)}`."]
    _common.update_section(SECTION, "\n".join(lines))


def _plot(rows, path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for n in sorted({r["n"] for r in rows}):
        for method in dict.fromkeys(r["method"] for r in rows):
            pts = sorted((r["dim"], r["seconds_per_suggestion"]) for r in rows
                         if r["method"] == method and r["n"] == n and not r.get("skipped"))
            if pts:
                ax.plot(*zip(*pts), marker="o", ls="-" if len(pts) > 1 else "none", label=f"{method}, N = {n}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("dimension d")
    ax.set_ylabel("seconds per suggestion (steady)")
    ax.set_title("BOCK vs ARD GP: time per suggestion")
    ax.legend()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
