"""A steady suggestion at d = 100, N = 600 (issue #53 item 3): the ARD GP and BOCK as they are, with elliptical slice
sampling and with BOCK's anchors screened under one sample, each row timed by ``bock_scaling.time_model``.

    python experiments/bench_highdim.py [--rows ...] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import _speed  # noqa: E402

RESULTS_FILE, SECTION = "bench_highdim.json", "bench_highdim"
SCREEN = {"maximize": {"screen": 1024}}
FAST = {"inference": "elliptical", **SCREEN}
PAPER = "bock, objective units (the paper's)"
ROWS = {  # label -> (model, options, the row it is compared with)
    "gp": ("gp", {}, None), "gp, elliptical": ("gp", {"inference": "elliptical"}, "gp"),
    "bock": ("bock", {}, None), "bock, screen": ("bock", SCREEN, "bock"),
    "bock, elliptical + screen": ("bock", FAST, "bock"),
    PAPER: ("bock", {"units": "objective"}, None),
    "bock, objective units, screen": ("bock", {"units": "objective", **SCREEN}, PAPER),
    "bock, objective units, elliptical + screen": ("bock", {"units": "objective", **FAST}, PAPER),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=list(ROWS))
    parser.add_argument("--repeats", type=int, default=2, help="steady calls after the first two")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, cache=False)
    if args is None:
        return
    import bock_scaling

    dim, n = 100, 600
    for label in args.rows:
        row = {**bock_scaling.time_model(ROWS[label][0], dim, n, args.repeats, **ROWS[label][1]), "label": label}
        print(json.dumps(row), flush=True)
        _common.merge_result(os.path.join(_common.RESULTS, RESULTS_FILE), [f"{label}/{dim}/{n}"], row)
    _common.record_provenance(SECTION, accumulates=True)
    _common.regenerate()


def report() -> dict:
    rows, cells = _common.load_results(RESULTS_FILE, {}), []
    for key, row in rows.items():
        label, dim, n = key.rsplit("/", 2)
        against = ROWS.get(label, (None, None, None))[2]
        base = rows.get(f"{against}/{dim}/{n}") if against else None
        ratio = f"{row['seconds_per_suggestion'] / base['seconds_per_suggestion']:.2f}" if base else "–"
        cells.append([label, dim, n, f"{row['seconds_per_suggestion']:.2f}", f"{row['first_minus_steady']:.0f}",
                      against or "–", ratio])
    table = _speed.table(["row", "d", "N", "steady s / suggestion", "first − steady [s]", "against", "ratio"], *cells)
    return {SECTION: "\n".join(["## A suggestion in 100 dimensions (bench_highdim)", "", *([
        _common.header(SECTION).rstrip(), "", *table, "", "BOCK's rows fit twice per suggestion (the evidence-chosen"
        " warp); its Adam refinement (20 starts x 200 steps under 10 samples) is not cut by these options."]
        if rows else ["Not run."])])}


def claims() -> list[dict]:
    """The cheaper options' steady suggestion against the default's: ``yes`` when every ratio is at most 0.2,
    ``partly`` when some is."""
    rows = _common.load_results(RESULTS_FILE, {})
    pairs = (("gp, elliptical", "gp"), ("bock, elliptical + screen", "bock"),
             ("bock, objective units, elliptical + screen", PAPER))
    what = ("Steady suggestion at d = 100, N = 600: the cheaper options against the default (GP; BOCK; BOCK in the"
            " paper's units)")
    found = [(base, rows[f"{fast}/100/600"], rows[f"{base}/100/600"]) for fast, base in pairs
             if f"{fast}/100/600" in rows and f"{base}/100/600" in rows]
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
