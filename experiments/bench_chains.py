"""Slice sampling in C chains against one chain, per device (issue #29, item 5): one steady suggestion of the GP's
default (``bench_suggest.time_jbo``) with ``num_chains`` 1 and C, rows merged under this machine's JAX device.

    python experiments/bench_chains.py [--n 50 100 200] [--chains 1 10]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import _speed  # noqa: E402

SECTION, RESULTS_FILE = "bench_chains", "bench_chains.json"
CLAIM_N, CLAIM_CHAINS = 200, 10


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

    keys = ("seconds_per_suggestion", "first_call_seconds", "compile_seconds", "n_pad", "samples")
    for n in args.n:
        for chains in args.chains:
            row = bench_suggest.time_jbo("slice", n, args.repeats, num_chains=chains)
            record = {**{key: row[key] for key in keys}, "repeats": args.repeats}
            _common.merge_result(path, [device, str(n), str(chains)], record)
            print(f"{device} N={n} chains={chains}: {row['seconds_per_suggestion']:.3f} s per suggestion", flush=True)
    _common.regenerate()


def claims() -> list[dict]:
    """10 chains of one sample against one chain of 10 at N = 200, decided on the accelerators' rows alone (a CPU
    runs the chains one after another)."""
    what = (f"GP slice sampling on an accelerator, Hartmann6, N = {CLAIM_N}: {CLAIM_CHAINS} chains of one sample"
            f" against one chain of {CLAIM_CHAINS}, seconds per suggestion")
    pairs = {device: (r["1"]["seconds_per_suggestion"], r[str(CLAIM_CHAINS)]["seconds_per_suggestion"])
             for device, by_n in _common.load_results(RESULTS_FILE, {}).items()
             if "1" in (r := by_n.get(str(CLAIM_N), {})) and str(CLAIM_CHAINS) in r}
    text = lambda cpu: "; ".join(f"{d}: {many:.3f} s vs {one:.3f} s" for d, (one, many) in pairs.items()
                                 if _common.on_cpu(d) == cpu)
    cpu_text = "; " + text(True) if text(True) else ""
    if not text(False):
        return [_common.claim("jbo", what, "faster", "no accelerator run" + cpu_text, "not run", SECTION)]
    verdict = "yes" if all(many < one for d, (one, many) in pairs.items() if not _common.on_cpu(d)) else "no"
    return [_common.claim("jbo", what, "faster", text(False) + cpu_text, verdict, SECTION)]


def report() -> dict:
    results, rows = _common.load_results(RESULTS_FILE, {}), []
    ns = sorted({int(n) for by_n in results.values() for n in by_n})
    for device, by_n in results.items():
        get = lambda n, c: by_n.get(str(n), {}).get(str(c))
        seconds = lambda n, c: get(n, c)["seconds_per_suggestion"]
        chains = sorted({int(c) for by_chains in by_n.values() for c in by_chains})
        rows += [[device, c, *(f"{seconds(n, c):.3f} s ({get(n, c)['first_call_seconds']:.1f} s)"
                               if get(n, c) else "–" for n in ns)] for c in chains]
        rows += [[device, f"ratio {c} / 1", *(f"{seconds(n, c) / seconds(n, 1):.2f}"
                                              if get(n, c) and get(n, 1) else "–" for n in ns)] for c in chains[1:]]
    return {SECTION: "\n".join([
        "## Slice sampling in several chains against one chain", "", _common.PER_DEVICE_HEADER, "",
        "The GP's default (Hartmann6, 10 slice samples per suggestion) drawn by one chain (`num_chains=1`, the"
        " default) or by C chains of 10 / C sweeps: steady seconds per suggestion (in brackets the first call). Ten"
        " chains of one sweep are behind one chain in quality (the suite's `gp-chains`): one chain stays the default.",
        "",
        *_speed.table(["device", "chains", *(f"N={n}" for n in ns)], *rows), "",
        *_common.device_provenance(SECTION, results)])} if results else {}


if __name__ == "__main__":
    main()
