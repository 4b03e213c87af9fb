"""What the evidence-chosen warp costs BOCK per suggestion: the default ``bock`` (two fits per suggestion) against
the same model fitted once and the paper's model, timed as :func:`bock_scaling.time_model` times them.

    python experiments/bock_fit_cost.py [--points 20:200 100:600] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import bock_scaling  # noqa: E402

RESULTS_FILE, SECTION = "bock_fit_cost.json", "bock_fit_cost"
#: label -> (what it is, BOCK's options); rows are stored under "label/d/N".
MODELS = {"bock": ("the default: the warp chosen by the evidence at each suggestion (two fits)", {}),
          "bock one fit": ("`evidence_warp=False, noise_floor=1e-6`: the warp fixed (one fit; the default before)",
                           {"evidence_warp": False, "noise_floor": 1e-6}),
          "bock objective units": ("`units=\"objective\"`: the paper's model (one fit, no warp)",
                                   {"units": "objective"})}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", nargs="+", default=["20:200", "100:600"], help="d:N points to time at")
    parser.add_argument("--repeats", type=int, default=3, help="steady calls after the first two")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, cache=False)  # compile times are part of what is measured
    if args is None:
        return
    for dim, n in (map(int, point.split(":")) for point in args.points):
        for label, (_, options) in MODELS.items():
            row = {**bock_scaling.time_model("bock", dim, n, args.repeats, **options), "method": label}
            print(json.dumps(row), flush=True)
            _common.merge_result(os.path.join(_common.RESULTS, RESULTS_FILE), [f"{label}/{dim}/{n}"], row)
    _common.record_provenance(SECTION)
    _common.regenerate()


def report() -> dict:
    rows = _common.load_results(RESULTS_FILE, {})
    lines = ["## BOCK: what the evidence-chosen warp costs per suggestion", "", _common.header(SECTION)]
    if not rows:
        return {SECTION: "\n".join(lines + ["Not run yet."])}
    pairs = [(r, rows.get(f"bock/{r['dim']}/{r['n']}")) for k, r in rows.items() if k.startswith("bock one fit/")]
    ratios = "; ".join(f"{b['seconds_per_suggestion'] / r['seconds_per_suggestion']:.2f}× at d = {r['dim']}, N ="
                       f" {r['n']}" for r, b in pairs if b)
    models = "; ".join(f"`{m}`: {text}" for m, (text, _) in MODELS.items())
    lines += bock_scaling.table(sorted(rows.values(), key=lambda r: list(MODELS).index(r["method"])),
                                f"BOCK's default search for all. {models}; `bock` / `bock one fit`: {ratios or '–'}.")
    return {SECTION: "\n".join(lines)}


def claims() -> list[dict]:
    return []  # a cost, not a claim


if __name__ == "__main__":
    main()
