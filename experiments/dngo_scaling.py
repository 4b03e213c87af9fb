"""DNGO's Fig. 1: time per suggestion against N on Hartmann6, GP (MAP, slice) vs DNGO (1 and 5 networks).

For each N a loop state holding N uniformly random Hartmann6 observations is built and
``jbo.loop.suggest`` is called on it repeatedly; the first two calls compile (cold and warm-started
programs) and are reported apart, the median of the later calls is the steady cost of one suggestion
(GP: hyperparameter fit + acquisition; DNGO: network training + BLR statistics + slice sampling of
α, β, λ, c, Λ + acquisition). All methods run in one process, one after another, so their ratios are
measured side by side. A GP method stops once one suggestion exceeds ``--max-seconds`` (120 s). The
log-log slope of a method's time is fitted by least squares from N = 400 to the largest N.

A run measures one device (the machine's CPU, split or not into several JAX devices, or its
accelerator) and stores it in a results file named after the device
(:func:`results_name`: ``experiments/results/dngo_scaling_<device>.json``; the devices measured before
this naming keep their files, :data:`KNOWN`), with its provenance under the same name in
``experiments/results/provenance.json``. The section ``dngo_scaling`` is one table of every device's
stored timings; a run on a device replaces only that device's rows.

    python experiments/dngo_scaling.py [--n 100 200 400 800 1600 3200 6400] [--repeats 2]
        [--cpu-devices 2] [--results-dir DIR] [--report-only]
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

SECTION = "dngo_scaling"
METHODS = {
    "gp-map": dict(model="gp", inference="map"),
    "gp-slice": dict(model="gp", inference="slice"),
    "dngo": dict(model="dngo", inference="slice", **_common.PAPER_DNGO),
    "ensemble-5": dict(model="ensemble", inference="slice", n_networks=5, **_common.PAPER_DNGO),
}
# Results files (and provenance keys) of the devices measured before files were named after the device:
# they keep their names, so that a rerun on one of these devices replaces its rows.
KNOWN = {"2-core CPU": "dngo_scaling", "2-core CPU, 2 JAX devices": "dngo_scaling_cpu2",
         "H200": "dngo_scaling_gpu", "H100": "dngo_scaling_gpu_h100"}
# Snoek et al. 2015, Fig. 1 (figure only; /work/shared/paper-tables.md): on Hartmann6 the time per suggested
# experiment grows linearly in the number of observations for DNGO and cubically for the GP (Spearmint).
PAPER_SLOPES = {"dngo": 1.0, "gp": 3.0}
SLOPE_FROM = 400  # the slopes are fitted over N >= SLOPE_FROM
DNGO_SLOPE_BAR = 1.1  # "~linear": issue #3's bar on DNGO's log-log slope
GP_SLOPE_TOLERANCE = 0.5  # "~cubic": the GP's slope within this of 3
# Issue #3's bars on the ensemble of five networks: time per suggestion ≤ this multiple of one network's.
ENSEMBLE_BARS = {"CPU": 3.0, "GPU": 1.3}
PEERS = ("Peers on the 2-core CPU machine (measured in November 2026 with BoTorch 0.18, Optuna 5.0, pybnn; not rerun"
         " here): pybnn's DNGO (emcee) ~127 s at N = 1600; BoTorch SingleTaskGP 28 s; Optuna GPSampler 14 s.")


# ----------------------------------------------------------------------------------------------
# Devices
# ----------------------------------------------------------------------------------------------
def results_name(label: str) -> str:
    """The results file's stem (and provenance key) of a device: :data:`KNOWN`'s, or ``dngo_scaling_<device>``."""
    return KNOWN.get(label) or "dngo_scaling_" + re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


def _machine_line(saved: dict) -> str:
    """The machine line of a results file: its own, or the one in the header block that older files stored."""
    machine = saved.get("machine") or ""
    found = re.search(r"machine: (.+)", machine)
    return found.group(1).strip() if found else machine.strip()


def load_devices() -> list[dict]:
    """Every device's stored timings: ``{"name", "label", "rows", "repeats", "args", "machine"}``, CPUs first.

    Reads every ``dngo_scaling*.json`` under the results directory except files named after a commit
    (``..._<hex>``: superseded runs kept for the record before this table existed)."""
    devices = []
    for path in sorted(glob.glob(os.path.join(_common.RESULTS, "dngo_scaling*.json"))):
        name = os.path.basename(path)[: -len(".json")]
        if re.search(r"_[0-9a-f]{7,40}$", name):
            continue
        saved = _common.read_json(path)
        if isinstance(saved, list):  # the first format: rows only
            saved = {"rows": saved, "repeats": None, "args": {}, "machine": None}
        machine = _machine_line(saved)
        label = saved.get("device") or (_common.device_label(machine) if machine else name)
        devices.append({"name": name, "label": label, "rows": saved["rows"], "repeats": saved.get("repeats"),
                        "args": saved.get("args") or {}, "machine": machine})
    return sorted(devices, key=lambda d: ("CPU" not in d["label"], d["label"]))


def kind_of(label: str) -> str:
    return "CPU" if "CPU" in label else "GPU"


# ----------------------------------------------------------------------------------------------
# Timing
# ----------------------------------------------------------------------------------------------
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


def slope(ns, seconds, n_min=SLOPE_FROM):
    """Least-squares slope of log(seconds) against log(N) over N >= n_min (``nan`` with fewer than 2 sizes)."""
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
    parser.add_argument("--cpu-devices", type=int, default=None,
                        help="split the host CPU into this many JAX devices (ensemble members then train split over them)")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, cache=False)
    if args is None:
        return
    machine = _common.machine()
    label = _common.device_label(machine)
    name = results_name(label)
    print(f"device: {label} (results {name}.json)", flush=True)
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
    os.makedirs(_common.RESULTS, exist_ok=True)
    saved_args = {k: v for k, v in vars(args).items()
                  if k in ("n", "methods", "slice_max_n", "gp_max_n", "cpu_devices", "max_seconds")}
    path = os.path.join(_common.RESULTS, f"{name}.json")
    _common.write_json(path, {"device": label, "rows": rows, "repeats": args.repeats, "args": saved_args,
                              "machine": machine})
    _common.record_provenance(name)
    _common.regenerate()


# ----------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------
def _times(device: dict) -> dict:
    """``{method: ([n], [seconds])}`` of one device, in N order."""
    series = {}
    for r in sorted(device["rows"], key=lambda r: r["n"]):
        ns, ss = series.setdefault(r["method"], ([], []))
        ns.append(r["n"])
        ss.append(r["seconds_per_suggestion"])
    return series


def _ratios(device: dict, top: str, bottom: str) -> dict:
    """``{n: time(top) / time(bottom)}`` at the sizes where the device measured both methods."""
    get = {(r["method"], r["n"]): r["seconds_per_suggestion"] for r in device["rows"]}
    return {n: get[(top, n)] / get[(bottom, n)] for (m, n) in sorted(get, key=lambda k: k[1])
            if m == top and (bottom, n) in get}


def _range(values, fmt="{:.2f}") -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else fmt.format(lo) + "–" + fmt.format(hi)


def _ratio_text(ratio: float) -> str:
    return f"{ratio:.2f}×" if ratio >= 1 else f"{ratio:.2g}×"


def _steps(rows) -> str:
    # Rows saved before the key existed were timed with the then default of 1000 training steps.
    steps = sorted({r.get("network_steps") or 1000 for r in rows})
    return "/".join(str(s) for s in steps)


def _caps(device: dict, ns) -> list[str]:
    """The GP methods a device's run capped below its largest N (``--slice-max-n``, ``--gp-max-n``)."""
    args, methods = device["args"], {r["method"] for r in device["rows"]}
    largest = max(args.get("n") or ns)
    return [f"{label} at N = {args[key]}" for method, label, key in (("gp-slice", "GP-slice", "slice_max_n"),
                                                                     ("gp-map", "GP-MAP", "gp_max_n"))
            if method in methods and args.get(key) is not None and args[key] < largest]


def _provenance(device: dict) -> str:
    """One line naming where a device's timings were measured (provenance.json, else the file's own)."""
    stored = _common.stored_provenance(device["name"])
    repeats = f"; median of {device['repeats']} suggestions" if device["repeats"] else ""
    where = f"`{_common.display_path(os.path.join(_common.RESULTS, device['name'] + '.json'))}`"
    if stored is None:
        return f"- {device['label']} ({where}): machine {device['machine'] or 'not recorded'}{repeats}"
    return (f"- {device['label']} ({where}): date {stored['date']}; commit {stored['commit']}; machine"
            f" {stored['machine']}; command `{stored['command']}`{repeats}")


def plot(curves: dict, labels: list[str], path: str) -> str:
    """Time per suggestion against N, log-log: a colour per method, a line style per device."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    colours = {m: f"C{i}" for i, m in enumerate(METHODS)}
    styles = dict(zip(labels, [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1)), "v"), ((0, (1, 3)), "x")]))
    for (method, label), (n, seconds) in curves.items():
        line, marker = styles.get(label, ("-", "."))
        ax.plot(n, seconds, ls=line, marker=marker, ms=4, lw=1.5, color=colours.get(method, "k"),
                label=f"{method} ({label})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("observations N")
    ax.set_ylabel("seconds per suggestion")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title("Hartmann6: time per suggestion (cf. Snoek et al. 2015, Fig. 1)")
    fig.savefig(path, dpi=110)
    return path


def report() -> None:
    write_report(load_devices())


def write_report(devices: list[dict]) -> None:
    import numpy as np

    figure = _common.display_path(os.path.join(_common.FIGURES, f"{SECTION}.png"))
    lines = ["## DNGO scaling: time per suggestion vs N (Hartmann6; Snoek et al. 2015, Fig. 1)", ""]
    if not devices:
        _common.update_section(SECTION, "\n".join(lines + ["- provenance: not recorded", "", "Not run."]))
        return
    ns = sorted({r["n"] for d in devices for r in d["rows"]})
    caps = [f"{d['label']}: " + " and ".join(_caps(d, ns)) for d in devices if _caps(d, ns)]
    lines += ["- provenance: one run per device, each listed under the table (date, commit, machine, command).", "",
              "Median time of one `jbo.loop.suggest` after the two compiling calls, a device's methods in one process."
              " GP: Matérn-5/2 ARD, MAP (L-BFGS from the last estimate) or slice (10 samples); DNGO: tanh 50-50-50"
              " network, `steps` Adam steps (mini-batches of 256 once N > 256), BLR with the quadratic prior mean,"
              " 10 slice samples of α, β, λ, c, Λ; ensemble-5: five such networks, mean aggregator (with several"
              " JAX devices their training is split over them). Ratio rows divide two methods' times on one device.",
              "– : not measured: a GP method stops once a suggestion exceeds 120 s"
              + (", and runs capped the GPs' N (" + "; ".join(caps) + ")" if caps else "")
              + ". The devices' runs are of different commits and DNGO step counts (column `steps`): compare"
              " times within a device.",
              f"Verdicts (summary table): Snoek et al.'s Fig. 1 holds where the log-log slope over N ≥ {SLOPE_FROM} is"
              f" ≤ {DNGO_SLOPE_BAR} for DNGO and within {GP_SLOPE_TOLERANCE} of 3 for the GP (on every device that"
              " measured both); an ensemble bar (≤ 3× one network on CPU, ≤ 1.3× on GPU) holds on a device when"
              " ensemble-5 / dngo is under it at every N: `yes` on every device of that kind, `partly` on some.",
              PEERS, "",
              "| device | method | steps | " + " | ".join(f"N={n}" for n in ns) + f" | slope (N ≥ {SLOPE_FROM}) |",
              "|---|---|---|" + "---|" * (len(ns) + 1)]
    curves = {}
    for d in devices:
        series = _times(d)
        for method, (n_list, s_list) in series.items():
            get = dict(zip(n_list, s_list))
            rows = [r for r in d["rows"] if r["method"] == method]
            steps = _steps(rows) if method in ("dngo", "ensemble-5") else "–"
            s = slope(n_list, s_list)
            cells = [f"{get[n]:.2f} s" if n in get else "–" for n in ns]
            lines.append(f"| {d['label']} | {method} | {steps} | " + " | ".join(cells)
                         + f" | {'–' if np.isnan(s) else f'{s:.2f}'} |")
            curves[(method, d["label"])] = (n_list, s_list)
        for top, bottom in (("ensemble-5", "dngo"), ("dngo", "gp-map")):
            ratio = _ratios(d, top, bottom)
            if ratio:
                cells = [_ratio_text(ratio[n]) if n in ratio else "–" for n in ns]
                lines.append(f"| {d['label']} | {top} / {bottom} | – | " + " | ".join(cells) + " | |")
    lines += ["", "Devices:", "", *[_provenance(d) for d in devices]]
    if _common.PLOTS and curves:
        os.makedirs(_common.FIGURES, exist_ok=True)
        plot(curves, [d["label"] for d in devices], os.path.join(_common.ROOT, figure))
    lines += ["", f"Figure: `{figure}`."]
    _common.update_section(SECTION, "\n".join(lines))


def _commit(device: dict) -> str:
    """`` (at <commit>)`` of a device's stored provenance, or nothing."""
    stored = _common.stored_provenance(device["name"])
    return f" at {stored['commit']}" if stored else ""


def claims() -> list[dict]:
    """Snoek et al. 2015's Fig. 1 and issue #3's ensemble bars, decided from the stored timings.

    * Fig. 1 (DNGO's time per suggestion grows ~linearly in N, the GP's ~cubically): on every device that
      measured DNGO and GP-MAP at two or more N ≥ 400, the least-squares log-log slope over N ≥ 400 is
      ≤ 1.1 for DNGO and within 0.5 of 3 for GP-MAP. ``yes`` when both hold on every such device, ``partly``
      when one of the two (or both on some devices only), ``no`` when neither; ``not run`` without such a device.
    * Ensemble bars (five networks ≤ 3× one network on a CPU, ≤ 1.3× on a GPU): a device meets its bar
      when ensemble-5 / dngo is at most the bar at every N it measured both. ``yes`` when every device of
      the kind meets it, ``partly`` when some do, ``no`` when none, ``not run`` without such a device.
    """
    devices = load_devices()
    paper = "Snoek et al. 2015, Fig. 1"
    rows = []
    parts, verdicts = [], []
    for d in devices:
        series = _times(d)
        if "dngo" not in series or "gp-map" not in series:
            continue
        s_dngo, s_gp = slope(*series["dngo"]), slope(*series["gp-map"])
        if math.isnan(s_dngo) or math.isnan(s_gp):  # fewer than two sizes >= SLOPE_FROM
            continue
        checks = (s_dngo <= DNGO_SLOPE_BAR, abs(s_gp - PAPER_SLOPES["gp"]) <= GP_SLOPE_TOLERANCE)
        verdicts.append(checks)
        n_max = max(n for n in series["dngo"][0] if n in series["gp-map"][0])
        ratio = _ratios(d, "dngo", "gp-map")[n_max]
        parts.append(f"{d['label']}{_commit(d)}: log-log slope DNGO {s_dngo:.2f}, GP-MAP {s_gp:.2f} (N ≥ {SLOPE_FROM});"
                     f" DNGO {ratio:.3f}× GP-MAP at N = {n_max}")
    if not verdicts:
        verdict = "not run"
    elif all(all(c) for c in verdicts):
        verdict = "yes"
    elif any(any(c) for c in verdicts):
        verdict = "partly"
    else:
        verdict = "no"
    rows.append(_common.claim(paper, "Hartmann6: time per suggestion grows ~linearly in N for DNGO, ~cubically"
                                     " for the GP", "DNGO ∝ N, GP ∝ N³ (slopes 1 and 3; figure only)",
                              "; ".join(parts) or "–", verdict, SECTION))
    for kind, bar in ENSEMBLE_BARS.items():
        met, parts, sizes = [], [], []
        for d in devices:
            if kind_of(d["label"]) != kind:
                continue
            ratio = _ratios(d, "ensemble-5", "dngo")
            if not ratio:
                continue
            met.append(max(ratio.values()) <= bar)
            sizes += list(ratio)
            parts.append(f"{d['label']}{_commit(d)}: {_range(list(ratio.values()))}×")
        verdict = ("not run" if not met else "yes" if all(met) else "partly" if any(met) else "no")
        at = f", N = {_range(sizes, '{:d}')}" if sizes else ""
        rows.append(_common.claim("jbo", f"Hartmann6: ensemble of 5 networks per suggestion ≤ {bar:g}× one network"
                                         f" ({kind}{at})", f"≤ {bar:g}× (issue #3)", "; ".join(parts) or "–", verdict,
                                  SECTION))
    return rows


if __name__ == "__main__":
    main()
