"""A steady suggestion in 100 dimensions at N = 600: the ARD GP and BOCK, as they are and with elliptical slice
sampling (``inference="elliptical"``) and, for BOCK's 20 000 anchors, screening under one sample
(``maximize={"screen": 1024}``), side by side in one process.

Each row is timed as :func:`bock_scaling.time_model` times it (N random observations of BOCK's normalised
Rosenbrock, buffers padded to N, the median of the steady calls from the third on). Rows go to
``experiments/results/bench_highdim.json``; the run's provenance is recorded and BENCHMARKS.md regenerated.

    python experiments/bench_highdim.py [--point 100:600] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

RESULTS_FILE = "bench_highdim.json"
SECTION = "bench_highdim"
SCREEN = {"maximize": {"screen": 1024}}
FAST = {"inference": "elliptical", **SCREEN}
#: label -> (model, options, the row it is compared with)
ROWS = {
    "gp": ("gp", {}, None),
    "gp, elliptical": ("gp", {"inference": "elliptical"}, "gp"),
    "bock": ("bock", {}, None),
    "bock, screen": ("bock", SCREEN, "bock"),
    "bock, elliptical + screen": ("bock", FAST, "bock"),
    "bock, objective units (the paper's)": ("bock", {"units": "objective"}, None),
    "bock, objective units, screen": ("bock", {"units": "objective", **SCREEN}, "bock, objective units (the paper's)"),
    "bock, objective units, elliptical + screen": ("bock", {"units": "objective", **FAST},
                                                   "bock, objective units (the paper's)"),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--point", default="100:600", help="d:N")
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=list(ROWS))
    parser.add_argument("--repeats", type=int, default=2, help="steady calls after the first two")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, cache=False)
    if args is None:
        return
    import bock_scaling

    dim, n = (int(v) for v in args.point.split(":"))
    path = os.path.join(_common.RESULTS, RESULTS_FILE)
    for label in args.rows:
        model, options, _ = ROWS[label]
        row = bock_scaling.time_model(model, dim, n, args.repeats, **options)
        row["label"] = label
        print(json.dumps(row), flush=True)
        _common.merge_result(path, [f"{label}/{dim}/{n}"], row)
    _common.record_provenance(SECTION, accumulates=True)
    _common.regenerate()


def report() -> None:
    rows = _common.load_results(RESULTS_FILE, {})
    lines = ["## A suggestion in 100 dimensions (bench_highdim)", ""]
    if not rows:
        _common.update_section(SECTION, "\n".join(lines + ["Not run."]))
        return
    lines += [_common.header(SECTION).rstrip(), "",
              "| row | d | N | steady s / suggestion | first − steady [s] | against | ratio |",
              "|---|---|---|---|---|---|---|"]
    for key, row in rows.items():
        label, dim, n = key.rsplit("/", 2)
        against = ROWS.get(label, (None, None, None))[2]
        base = rows.get(f"{against}/{dim}/{n}") if against else None
        ratio = f"{row['seconds_per_suggestion'] / base['seconds_per_suggestion']:.2f}" if base else "–"
        lines.append(f"| {label} | {dim} | {n} | {row['seconds_per_suggestion']:.2f} | "
                     f"{row['first_minus_steady']:.0f} | {against or '–'} | {ratio} |")
    lines += ["", "BOCK's rows fit twice per suggestion (the evidence-chosen warp); its Adam refinement (20 starts x "
              "200 steps under 10 samples) is not cut by these options."]
    _common.update_section(SECTION, "\n".join(lines))


def claims() -> list[dict]:
    """One row: the cheaper options' steady suggestion against the default's for the GP, BOCK and BOCK in the
    paper's units; ``yes`` when every ratio is at most 0.2, ``partly`` when some is, ``no`` otherwise."""
    rows = _common.load_results(RESULTS_FILE, {})
    pairs = (("gp, elliptical", "gp"), ("bock, elliptical + screen", "bock"),
             ("bock, objective units, elliptical + screen", "bock, objective units (the paper's)"))
    what = "Steady suggestion at d = 100, N = 600: the cheaper options against the default (GP; BOCK; BOCK in the paper's units)"
    found = [(base, rows.get(f"{fast}/100/600"), rows.get(f"{base}/100/600")) for fast, base in pairs]
    found = [(base, a, b) for base, a, b in found if a and b]
    if not found:
        return [_common.claim("jbo", what, "≤ 0.2× each", "–", "not run", SECTION)]
    ratios = [a["seconds_per_suggestion"] / b["seconds_per_suggestion"] for _, a, b in found]
    figure = "; ".join(f"{base.split(' (')[0]} {r:.2f}× ({a['seconds_per_suggestion']:.1f} s vs "
                       f"{b['seconds_per_suggestion']:.1f} s)" for r, (base, a, b) in zip(ratios, found))
    done = sum(r <= 0.2 for r in ratios)
    verdict = "yes" if done == len(pairs) else "partly" if done else "no"
    return [_common.claim("jbo", what, "≤ 0.2× each", figure, verdict, SECTION)]


if __name__ == "__main__":
    main()
