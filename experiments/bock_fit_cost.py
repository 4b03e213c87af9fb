"""What the evidence-chosen warp costs BOCK per suggestion: the default ``bock`` (two fits per suggestion, the
standardised targets and their Yeo-Johnson warp, the one of larger evidence kept: ``evidence_warp=True``) against
the same model fitted once (``evidence_warp=False``, the warp fixed; BOCK's default before) and the paper's model
(``units="objective"``: one fit, no warp), side by side in one process.

Each is timed as :func:`bock_scaling.time_model` times it: N random observations of BOCK's normalised Rosenbrock,
buffers padded to N, the median of the steady calls from the third on (hyperparameter fit with warm-started slice
sweeps, then BOCK's acquisition search, which is not doubled), "first − steady" apart. Rows go to
``experiments/results/bock_fit_cost.json`` (merged by model, d and N), the run's provenance is recorded and
BENCHMARKS.md regenerated; ``--report-only`` only regenerates.

    python experiments/bock_fit_cost.py [--points 20:200 100:600] [--repeats 3] [--report-only] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

RESULTS_FILE = "bock_fit_cost.json"
SECTION = "bock_fit_cost"
#: The models timed: label -> (what it is, BOCK options).
MODELS = {
    "bock": ("the default: the warp chosen by the evidence at each suggestion (two fits)", {}),
    "bock one fit": ("`evidence_warp=False, noise_floor=1e-6`: the Yeo-Johnson warp fixed (one fit; the default"
                     " before the evidence chose)", {"evidence_warp": False, "noise_floor": 1e-6}),
    "bock objective units": ("`units=\"objective\"`: the paper's model (one fit, no warp)", {"units": "objective"}),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", nargs="+", default=["20:200", "100:600"], help="d:N points to time at")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--repeats", type=int, default=3, help="steady calls after the first two")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, cache=False)  # compile times are part of what is measured
    if args is None:
        return
    import bock_scaling

    path = os.path.join(_common.RESULTS, RESULTS_FILE)
    for point in args.points:
        dim, n = (int(v) for v in point.split(":"))
        for label in args.models:
            row = bock_scaling.time_model("bock", dim, n, args.repeats, **MODELS[label][1])
            row["method"] = label
            print(json.dumps(row), flush=True)
            _common.merge_result(path, [f"{label}/{dim}/{n}"], row)
    _common.record_provenance(SECTION)
    _common.regenerate()


def _rows() -> dict:
    return _common.load_results(RESULTS_FILE, {})


def report() -> None:
    """Rewrite the ``bock_fit_cost`` section from the stored timings (no runs)."""
    rows = _rows()
    lines = ["## BOCK: what the evidence-chosen warp costs per suggestion", "", _common.header(SECTION)]
    if not rows:
        _common.update_section(SECTION, "\n".join(lines + ["Not run yet."]))
        return
    points = sorted({(r["dim"], r["n"]) for r in rows.values()})
    labels = [m for m in MODELS if any(r["method"] == m for r in rows.values())]
    repeats = min(len(r["calls"]) for r in rows.values()) - 2
    searches = {tuple(r["maximize"][k] for k in ("num_anchors", "top_k", "num_steps")) for r in rows.values()}
    search = "; ".join(f"{format(a, ',').replace(',', ' ')} anchors, top {k}, {s} Adam steps"
                       for a, k, s in sorted(searches))
    lines += [f"Steady seconds per suggestion (median of {repeats} calls from the third on; \"first − steady\":"
              " compilation plus the cold fit's burn-in), N random observations of BOCK's normalised Rosenbrock,"
              f" the models side by side in one process, BOCK's acquisition search ({search}) for all. Models: "
              + "; ".join(f"`{m}`: {MODELS[m][0]}" for m in labels) + ".", "",
              "| d | N | " + " | ".join(f"{m} s / suggestion" for m in labels) + " | `bock` / `bock one fit` | "
              + " | ".join(f"{m} first − steady" for m in labels) + " |",
              "|---|---|" + "---|" * (2 * len(labels) + 1)]
    for dim, n in points:
        get = {m: rows.get(f"{m}/{dim}/{n}") for m in labels}
        ratio = (f"{get['bock']['seconds_per_suggestion'] / get['bock one fit']['seconds_per_suggestion']:.2f}×"
                 if get.get("bock") and get.get("bock one fit") else "–")
        lines.append(f"| {dim} | {n} | "
                     + " | ".join(f"{r['seconds_per_suggestion']:.2f}" if r else "–" for r in get.values())
                     + f" | {ratio} | "
                     + " | ".join(f"{r['first_minus_steady']:.0f} s" if r else "–" for r in get.values()) + " |")
    _common.update_section(SECTION, "\n".join(lines))


def claims() -> list[dict]:
    """None: the section measures a cost, not a claim."""
    return []


if __name__ == "__main__":
    main()
