"""DNGO's Fig. 1 (Snoek et al. 2015): time per suggestion against N on Hartmann6, GP (MAP, slice) vs DNGO (1 and 5
networks). A run times one device's methods in one process, stored in ``results/dngo_scaling_<device>.json``.

    python experiments/dngo_scaling.py [--n 100 200 400 800 1600 3200 6400] [--repeats 2] [--cpu-devices 2]
"""

import argparse
import glob
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from dngo_table1 import verdict  # noqa: E402

SECTION = "dngo_scaling"
METHODS = {"gp-map": dict(model="gp", inference="map"), "gp-slice": dict(model="gp", inference="slice"),
           "dngo": dict(model="dngo", inference="slice", **_common.PAPER_DNGO),
           "ensemble-5": dict(model="ensemble", inference="slice", n_networks=5, **_common.PAPER_DNGO)}
# The results files of devices measured before the files were named after the device (a rerun replaces them).
KNOWN = {"2-core CPU": "dngo_scaling", "2-core CPU, 2 JAX devices": "dngo_scaling_cpu2",
         "H200": "dngo_scaling_gpu", "H100": "dngo_scaling_gpu_h100"}
SLOPE_FROM = 400  # log-log slopes are fitted over N >= SLOPE_FROM
ENSEMBLE_BARS = {"CPU": 3.0, "GPU": 1.3}  # issue #3: five networks' suggestion <= this multiple of one network's


def time_suggestions(settings: dict, n: int, repeats: int) -> dict:
    """The median time of ``repeats`` ``jbo.loop.suggest`` calls on N random observations, after two compiling ones."""
    import jax
    import numpy as np

    from jbo import loop
    from jbo.benchmarks import get_problem

    problem, cfg = get_problem("hartmann6"), loop.Settings.create(seed=0, **settings)
    x = np.random.default_rng(0).random((n, problem.dim))
    state = loop.init(cfg, problem.space())._replace(x=x, y=np.asarray(problem.fn(jax.numpy.asarray(x))), n_suggested=n)
    calls = []
    for _ in range(2 + repeats):
        start = time.perf_counter()
        state = loop.suggest(cfg, problem.space(), state)[0]
        calls.append(time.perf_counter() - start)
        state = state._replace(pending=state.pending[:0])  # keep N fixed: forget the suggestion
    return {"n": n, "seconds_per_suggestion": float(np.median(calls[2:])), "all_calls": calls,
            "network_steps": cfg.model.network.num_steps if cfg.model_name in ("dngo", "ensemble") else None}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[100, 200, 400, 800, 1600, 3200, 6400])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cpu-devices", type=int, default=None, help="split the host CPU into this many JAX devices")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, cache=False)
    if args is None:
        return
    rows, stopped = [], set()
    for n in args.n:
        for method in (m for m in args.methods if m not in stopped):
            rows.append({"method": method, **time_suggestions(METHODS[method], n, args.repeats)})
            print(rows[-1], flush=True)
            if method.startswith("gp") and rows[-1]["seconds_per_suggestion"] > 120:  # the GP's cost only grows
                stopped.add(method)
    label = _common.device_label(_common.machine())
    name = KNOWN.get(label) or "dngo_scaling_" + re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")
    _common.write_json(os.path.join(_common.RESULTS, f"{name}.json"), {
        "device": label, "rows": rows, "repeats": args.repeats, "machine": _common.machine(),
        "args": {k: getattr(args, k) for k in ("n", "methods", "cpu_devices")}})
    _common.record_provenance(name)
    _common.regenerate()


# --------------------------------------------------------------------------------------------------- the report
def load_devices() -> list[dict]:
    """Every device's stored file, with ``label`` and ``times`` (``{method: {n: seconds}}``), CPUs first."""
    devices = []
    for path in glob.glob(os.path.join(_common.RESULTS, "dngo_scaling*.json")):
        saved, times = _common.read_json(path), {}
        for r in sorted(saved["rows"], key=lambda r: r["n"]):
            times.setdefault(r["method"], {})[r["n"]] = r["seconds_per_suggestion"]
        found = re.search(r"machine: (.+)", saved["machine"])  # older files stored the whole provenance block
        label = saved.get("device") or _common.device_label(found[1] if found else saved["machine"])
        devices.append(dict(saved, name=os.path.basename(path)[:-len(".json")], times=times, label=label))
    return sorted(devices, key=lambda d: ("CPU" not in d["label"], d["label"]))


def slope(times: dict) -> float:
    """Least-squares slope of log(seconds) against log(N) over N >= :data:`SLOPE_FROM` (``nan``: under 2 sizes)."""
    import numpy as np

    points = np.log([(n, s) for n, s in times.items() if n >= SLOPE_FROM]).reshape(-1, 2)
    return float(np.polyfit(points[:, 0], points[:, 1], 1)[0]) if len(points) > 1 else float("nan")


def ratios(device: dict, top: str, bottom: str) -> dict:
    """``{n: time(top) / time(bottom)}`` at the sizes where the device measured both methods."""
    top, bottom = device["times"].get(top, {}), device["times"].get(bottom, {})
    return {n: top[n] / bottom[n] for n in top if n in bottom}


def _range(values, fmt="{:.2f}") -> str:
    """``low–high`` of the values as ``fmt`` writes them (one value when equal)."""
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return low if low == high else f"{low}–{high}"


def _provenance(device: dict) -> str:
    """Where a device's file was made, and its DNGO's Adam steps (1000, the default then, where not stored)."""
    p = _common.stored_provenance(device["name"])
    where = _common.display_path(os.path.join(_common.RESULTS, device["name"] + ".json"))
    made = f"date {p['date']}; commit {p['commit']}; machine {p['machine']}; command `{p['command']}`" if p else "–"
    steps = sorted({r.get("network_steps") or 1000 for r in device["rows"] if not r["method"].startswith("gp")})
    return (f"- {device['label']} (`{where}`): {made}; median of {device['repeats']} suggestions; DNGO"
            f" {'/'.join(map(str, steps))} Adam steps")


def report() -> dict:
    devices = load_devices()
    ns = sorted({r["n"] for d in devices for r in d["rows"]})
    lines = ["## DNGO scaling: time per suggestion vs N (Hartmann6; Snoek et al. 2015, Fig. 1)", "",
             _common.PER_DEVICE_HEADER, "",
             "Median time of one `jbo.loop.suggest` after the two compiling calls. GP: Matérn-5/2 ARD, MAP or slice"
             " (10 samples); DNGO: tanh 50-50-50 network, Adam steps as listed per device, BLR with the quadratic prior"
             " mean, 10 slice samples; ensemble-5: five such networks, mean aggregator. Ratio rows divide two methods'"
             " times.",
             "– : not measured (a GP stops once a suggestion exceeds 120 s, or the run's command capped its N). The"
             " devices ran different commits and DNGO step counts: compare times within a device.",
             "Peers on the 2-core CPU (November 2026, not rerun here): pybnn's DNGO (emcee) ~127 s at N = 1600;"
             " BoTorch SingleTaskGP 28 s; Optuna GPSampler 14 s.", "",
             "| device | method | " + " | ".join(f"N={n}" for n in ns) + f" | slope (N ≥ {SLOPE_FROM}) |",
             "|---|---|" + "---|" * (len(ns) + 1)]
    for d in devices:
        for method, times in d["times"].items():
            cells = [f"{times[n]:.2f} s" if n in times else "–" for n in ns]
            cells.append("–" if slope(times) != slope(times) else f"{slope(times):.2f}")
            lines.append(f"| {d['label']} | {method} | " + " | ".join(cells) + " |")
        for top, bottom in (("ensemble-5", "dngo"), ("dngo", "gp-map")):
            ratio = ratios(d, top, bottom)
            cells = [(f"{ratio[n]:.2f}×" if ratio[n] >= 1 else f"{ratio[n]:.2g}×") if n in ratio else "–" for n in ns]
            lines += [f"| {d['label']} | {top} / {bottom} | " + " | ".join(cells) + " | |"] if ratio else []
    lines += ["", "Devices:", "", *map(_provenance, devices), "",
              f"Figure (`report.py --figures`): `experiments/figures/{SECTION}.png`."]
    return {SECTION: "\n".join(lines)}


def figures() -> None:
    """Time per suggestion against N, log-log, a line per device and method."""
    from jbo.plotting import plot_times

    times = {f"{method} ({d['label']})": (list(t), list(t.values())) for d in load_devices()
             for method, t in d["times"].items()}
    plot_times(times, os.path.join(_common.FIGURES, f"{SECTION}.png"),
               title="Hartmann6: time per suggestion (cf. Snoek et al. 2015, Fig. 1)")


def claims() -> list[dict]:
    """Fig. 1 holds on a device that timed DNGO and GP-MAP at two or more N ≥ 400 when DNGO's log-log slope is ≤ 1.1
    and GP-MAP's within 0.5 of 3. An ensemble bar holds on a device when five networks take at most the bar times
    one network at every N."""
    devices, parts, held = load_devices(), [], []
    commit = {d["name"]: f" at {p['commit']}" if (p := _common.stored_provenance(d["name"])) else "" for d in devices}
    for d in devices:
        s_dngo, s_gp = slope(d["times"].get("dngo", {})), slope(d["times"].get("gp-map", {}))
        if s_dngo == s_dngo and s_gp == s_gp:  # not nan: both measured at two sizes or more
            held += [s_dngo <= 1.1, abs(s_gp - 3.0) <= 0.5]
            ratio = ratios(d, "dngo", "gp-map")
            parts.append(f"{d['label']}{commit[d['name']]}: log-log slope DNGO {s_dngo:.2f}, GP-MAP {s_gp:.2f}"
                         f" (N ≥ {SLOPE_FROM}); DNGO {ratio[max(ratio)]:.3f}× GP-MAP at N = {max(ratio)}")
    rows = [_common.claim("Snoek et al. 2015, Fig. 1", "Hartmann6: time per suggestion grows ~linearly in N for DNGO,"
                          " ~cubically for the GP", "DNGO ∝ N, GP ∝ N³ (slopes 1 and 3; figure only)",
                          "; ".join(parts) or "–", verdict(held), SECTION)]
    for kind, bar in ENSEMBLE_BARS.items():
        held, parts, sizes = [], [], []
        for d in (d for d in devices if ("CPU" in d["label"]) == (kind == "CPU")):
            if ratio := ratios(d, "ensemble-5", "dngo"):
                held.append(max(ratio.values()) <= bar)
                sizes += list(ratio)
                parts.append(f"{d['label']}{commit[d['name']]}: {_range(list(ratio.values()))}×")
        at = f", N = {_range(sizes, '{:d}')}" if sizes else ""
        rows.append(_common.claim("jbo", f"Hartmann6: ensemble of 5 networks per suggestion ≤ {bar:g}× one network"
                                         f" ({kind}{at})", f"≤ {bar:g}× (issue #3)", "; ".join(parts) or "–",
                                  verdict(held), SECTION))
    return rows


if __name__ == "__main__":
    main()
