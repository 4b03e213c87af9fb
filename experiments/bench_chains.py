"""Slice sampling in C chains against one chain, per device (issue #29, item 5).

The GP's default draws its ``S = 10`` hyperparameter samples as one slice chain that each suggestion continues
by ``S`` sweeps. With ``num_chains = C`` (:class:`jbo.inference.InferenceConfig`) it runs ``C`` independent
chains of ``S / C`` sweeps each, side by side (``vmap``) on an accelerator and one after another on a CPU;
every chain burns in from its own prior draw on the first fit. This script times one steady suggestion of both
on Hartmann6 with ``N`` random observations (as ``bench_suggest.py``) on the machine's JAX device and merges the
rows into ``experiments/results/bench_chains.json`` under that device (``_common.device_label``), so runs on
other devices add their rows.
The quality of the two at equal samples is the suite's ``gp-chains`` arms (``experiments/suite.py``).

    python experiments/bench_chains.py [--n 50 100 200] [--chains 1 10] [--results-dir DIR] [--report-only]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

SECTION = "bench_chains"
RESULTS_FILE = "bench_chains.json"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--chains", type=int, nargs="+", default=[1, 10], help="divisors of the 10 samples")
    parser.add_argument("--repeats", type=int, default=3)
    _common.add_output_arguments(parser)
    started = _common.start_device_run(parser, argv, SECTION, RESULTS_FILE)
    if started is None:
        return
    args, path, device = started
    import bench_suggest

    for n in args.n:
        for chains in args.chains:
            row = bench_suggest.time_jbo("slice", n, args.repeats, num_chains=chains)
            record = {key: row[key] for key in ("seconds_per_suggestion", "first_call_seconds", "compile_seconds",
                                                "n_pad", "samples")}
            _common.merge_result(path, [device, str(n), str(chains)], {**record, "repeats": args.repeats})
            print(f"{device} N={n} chains={chains}: {record['seconds_per_suggestion']:.3f} s per suggestion, "
                  f"first call {record['first_call_seconds']:.1f} s", flush=True)
    _common.regenerate()


CLAIM_N, CLAIM_CHAINS = 200, 10


def claims() -> list[dict]:
    """Issue #29, item 5: on an accelerator, are 10 chains of one sample faster than one chain of 10 at N = 200?
    Decided by the accelerator rows alone (on a CPU the chains run one after another: no gain is expected);
    ``not run`` without them."""
    what = (f"GP slice sampling on an accelerator, Hartmann6, N = {CLAIM_N}: {CLAIM_CHAINS} chains of one sample"
            f" against one chain of {CLAIM_CHAINS}, seconds per suggestion")
    rows = {device: by_n.get(str(CLAIM_N), {}) for device, by_n in _common.load_results(RESULTS_FILE, {}).items()}
    measured = {device: (r["1"]["seconds_per_suggestion"], r[str(CLAIM_CHAINS)]["seconds_per_suggestion"])
                for device, r in rows.items() if not _common.on_cpu(device) and "1" in r and str(CLAIM_CHAINS) in r}
    cpu_text = ""
    for device, r in rows.items():
        if _common.on_cpu(device) and "1" in r and str(CLAIM_CHAINS) in r:
            one, many = r["1"]["seconds_per_suggestion"], r[str(CLAIM_CHAINS)]["seconds_per_suggestion"]
            cpu_text += f"; {device}: {many:.3f} s vs {one:.3f} s"
    if not measured:
        return [_common.claim("jbo", what, "faster", "no accelerator run" + cpu_text, "not run", SECTION)]
    figure = "; ".join(f"{device}: {many:.3f} s vs {one:.3f} s" for device, (one, many) in measured.items())
    verdict = "yes" if all(many < one for one, many in measured.values()) else "no"
    return [_common.claim("jbo", what, "faster", figure + cpu_text, verdict, SECTION)]


def report() -> None:
    results = _common.load_results(RESULTS_FILE, {})
    if not results:
        return
    ns = sorted({int(n) for rows in results.values() for n in rows})
    lines = ["## Slice sampling in several chains against one chain", "", _common.PER_DEVICE_HEADER, "",
             "The GP's default (Hartmann6, Matérn-5/2 ARD, 10 slice samples per suggestion, float64) with its samples"
             " drawn by one chain (`num_chains=1`, the default: each suggestion continues it by 10 sweeps) or by C"
             " chains of 10 / C sweeps each (`num_chains=C`: side by side on an accelerator, one after another on a"
             " CPU). Steady seconds per suggestion (median of the calls after the two compiling ones; in brackets,"
             " the first call: compilation plus the cold fit, where every chain burns in for 50 sweeps). `ratio`:"
             " C chains / one chain. On an accelerator, `bash experiments/device_session.sh` runs these rows with"
             " the test suite in one lease. At equal samples ten chains of one sweep are behind one chain in quality"
             " (the suite's `gp-chains` arms), so one chain stays the default where they are faster too.", "",
             "| device | chains | " + " | ".join(f"N={n}" for n in ns) + " |", "|---|---|" + "---|" * len(ns)]
    for device, rows in results.items():
        chains = sorted({int(c) for by_chains in rows.values() for c in by_chains})
        for c in chains:
            cells = []
            for n in ns:
                r = rows.get(str(n), {}).get(str(c))
                cells.append(f"{r['seconds_per_suggestion']:.3f} s ({r['first_call_seconds']:.1f} s)" if r else "–")
            lines.append(f"| {device} | {c} | " + " | ".join(cells) + " |")
        for c in chains[1:]:
            cells = []
            for n in ns:
                one, many = rows.get(str(n), {}).get("1"), rows.get(str(n), {}).get(str(c))
                cells.append(f"{many['seconds_per_suggestion'] / one['seconds_per_suggestion']:.2f}"
                             if one and many else "–")
            lines.append(f"| {device} | ratio {c} / 1 | " + " | ".join(cells) + " |")
    lines += ["", *_common.device_provenance(SECTION, results)]
    _common.update_section(SECTION, "\n".join(lines))


if __name__ == "__main__":
    main()
