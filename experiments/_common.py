"""Shared plumbing of the experiment scripts: environment, machine description, BENCHMARKS.md sections."""

from __future__ import annotations

import datetime
import os
import platform
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = os.path.join(ROOT, "BENCHMARKS.md")
RESULTS = os.path.join(ROOT, "experiments", "results")
FIGURES = os.path.join(ROOT, "experiments", "figures")
PATHS = ("compiled", "ask-tell")  # how a script runs jbo's seeds: jbo.minimize_many, or jbo.minimize per seed


def use_results_dir(path: str | None) -> None:
    """Send this process's results JSON, BENCHMARKS.md sections and figures to the directory ``path``
    (``<path>/BENCHMARKS.md``, ``<path>/figures``) instead of the repository's: checks on tiny settings
    then leave the committed results alone. ``None`` keeps the repository's."""
    global RESULTS, BENCHMARKS, FIGURES
    if not path:
        return
    RESULTS = os.path.abspath(path)
    BENCHMARKS = os.path.join(RESULTS, "BENCHMARKS.md")
    FIGURES = os.path.join(RESULTS, "figures")
    os.makedirs(RESULTS, exist_ok=True)


def setup(threads: int = 1, cache: bool = True, cpu_devices: int | None = None) -> None:
    """Pin BLAS threads (before numpy/jax load) and enable float64 and JAX's persistent compile cache.

    ``cpu_devices`` splits the host CPU into that many JAX devices (before JAX starts its backend), so
    that ensemble members train in parallel (:mod:`jbo.devices`).
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads))
    import jax

    if cpu_devices:
        jax.config.update("jax_num_cpu_devices", cpu_devices)
    jax.config.update("jax_enable_x64", True)
    if cache and not os.environ.get("JBO_NO_CACHE"):
        jax.config.update("jax_compilation_cache_dir", os.path.expanduser("~/.cache/jbo/jax"))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)


def machine() -> str:
    """One line describing the machine and the stack."""
    import jax

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            match = re.search(r"model name\s*:\s*(.+)", f.read())
            cpu = match.group(1).strip() if match else cpu
    except OSError:
        pass
    kinds = [f"{d.platform} ({d.device_kind})" if d.platform != "cpu" else "cpu" for d in jax.devices()]
    devices = ", ".join(f"{kind} × {kinds.count(kind)} JAX devices" if kinds.count(kind) > 1 else kind
                        for kind in sorted(set(kinds)))
    return (f"{os.cpu_count()} cores ({cpu}), {devices}; Python {platform.python_version()}, "
            f"jax {jax.__version__}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")


def command() -> str:
    return "python " + " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])


def git_revision() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def header() -> str:
    """The provenance lines every BENCHMARKS.md section starts with."""
    today = datetime.date.today().isoformat()
    return (f"- date: {today}; commit: {git_revision()}\n- machine: {machine()}\n"
            f"- command: `{command()}`\n")


def update_section(name: str, markdown: str) -> None:
    """Replace (or append) the section ``name`` of BENCHMARKS.md, delimited by HTML comments."""
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    text = open(BENCHMARKS).read() if os.path.exists(BENCHMARKS) else "# jbo benchmarks\n\n"
    block = f"{begin}\n{markdown.rstrip()}\n{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    with open(BENCHMARKS, "w") as f:
        f.write(text)


def merge_result(path: str, keys: list[str], record) -> dict:
    """Set ``results[keys[0]][keys[1]]... = record`` in the JSON file ``path`` under a file lock.

    Several processes of one experiment (different methods or seeds on different cores) can then share
    one results file without overwriting each other's runs. Returns the merged results.
    """
    return merge_results(path, [(keys, record)])


def merge_results(path: str, items) -> dict:
    """:func:`merge_result` for several ``(keys, record)`` pairs at once (one lock, one write): all
    seeds of a compiled call are stored together. Returns the merged results."""
    import fcntl
    import json

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        results = json.load(open(path)) if os.path.exists(path) else {}
        for keys, record in items:
            node = results
            for key in keys[:-1]:
                node = node.setdefault(key, {})
            node[keys[-1]] = record
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(results, f, indent=1)
        os.replace(tmp, path)
    return results


def run_grid(path: str, problems, variants, seeds: int, run, describe) -> dict:
    """Run every missing ``(problem, variant, seed)`` of an ablation grid into the resumable JSON ``path``.

    Args:
      path: results file, ``results[problem][variant][str(seed)] = record`` (:func:`merge_result`, so
        several processes can share it; finished triples are skipped).
      problems, variants: names to run; seeds: seeds ``0 .. seeds-1``.
      run: ``(problem, variant, seed) -> record``, a dict with ``"values"`` and ``"seconds"``.
      describe: ``record -> str`` appended to the progress line after the best value.
    Returns:
      The merged results.
    """
    import json

    results = json.load(open(path)) if os.path.exists(path) else {}
    for problem in problems:
        for variant in variants:
            for seed in range(seeds):
                if str(seed) in results.get(problem, {}).get(variant, {}):
                    continue
                record = run(problem, variant, seed)
                best = min(v for v in record["values"] if v == v)
                print(f"{problem} {variant} seed {seed}: best {best:.5g}{describe(record)} ({record['seconds']:.0f} s)",
                      flush=True)
                results = merge_result(path, [problem, variant, str(seed)], record)
    return results


def add_grid_arguments(parser, variants, seeds: int = 10, problems=None) -> None:
    """The options every ablation grid script takes: ``--seeds``, ``--variants``, ``--report-only``
    and, when ``problems`` is given, ``--problems``."""
    parser.add_argument("--seeds", type=int, default=seeds)
    if problems is not None:
        parser.add_argument("--problems", nargs="+", default=list(problems), choices=list(problems))
    parser.add_argument("--variants", nargs="+", default=list(variants), choices=list(variants))
    parser.add_argument("--report-only", action="store_true", help="rewrite the section from the saved JSON")


def grid_results(args, path: str, problems, run, describe=lambda record: "", run_calls=None) -> dict:
    """The saved results (``args.report_only``) or those of :func:`run_grid` over ``args``' variants and
    seeds (:func:`run_grid_calls` with ``run_calls`` when it is given; ``run`` is then unused)."""
    import json

    if args.report_only:
        return json.load(open(path)) if os.path.exists(path) else {}
    if run_calls is not None:
        return run_grid_calls(path, problems, args.variants, range(args.seeds), run_calls)
    return run_grid(path, problems, args.variants, args.seeds, run, describe)


# ----------------------------------------------------------------------------------------------
# Running jbo's seeds: one compiled jbo.minimize_many call, or the ask/tell loop of jbo.minimize
# ----------------------------------------------------------------------------------------------
# Arguments jbo.minimize takes that have no meaning for a compiled run (it has no host loop).
HOST_ONLY = ("callback", "journal", "resume", "progress")


def display_path(path: str) -> str:
    """``path`` as a report names it: relative to the repository when inside it, else absolute."""
    path = os.path.abspath(path)
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def add_path_arguments(parser) -> None:
    """``--path`` (compiled / ask-tell), ``--chunk`` and ``--results-dir``: the options every script that
    runs jbo on JAX objectives takes."""
    parser.add_argument("--path", choices=PATHS, default="compiled",
                        help="compiled: all seeds of a (problem, method) in one jbo.minimize_many call (default);"
                             " ask-tell: the per-seed jbo.minimize loop, for comparison")
    parser.add_argument("--chunk", type=int, default=None,
                        help="seeds per jbo.minimize_many call (default: all of a cell's seeds in one call;"
                             " smaller if memory requires)")
    parser.add_argument("--results-dir", default=None,
                        help="write the results JSON, the report (<dir>/BENCHMARKS.md) and figures under this"
                             " directory instead of the repository's (checks on tiny settings)")


def check_compiled(options: dict) -> None:
    """Refuse, with a message, what the compiled path cannot run (rather than silently doing something else).

    Raises:
      SystemExit: a host-only argument (:data:`HOST_ONLY`), or an ensemble whose members the ask/tell
        driver would train split over several JAX devices (:func:`jbo.models.dngo.prepare`, host-side:
        one compiled program runs on one device).
    """
    from jbo import devices, loop, models

    host = sorted(set(options) & set(HOST_ONLY))
    if host:
        raise SystemExit(f"--path compiled: {host} need(s) the ask/tell loop; run with --path ask-tell")
    settings = loop.Settings.create(**{"model": "gp", **options})
    if settings.model.members > 1 and devices.num_devices() > 1:
        raise SystemExit(f"--path compiled: model {settings.model_name!r} with {devices.num_devices()} JAX devices"
                         " trains its networks split over the devices on the host (jbo.models.dngo.prepare), which"
                         " one compiled jbo.minimize_many program cannot do; run with one device (no --cpu-devices)"
                         " or with --path ask-tell")


def run_seeds(fn, space, budget: int, seeds, path: str = "compiled", chunk: int | None = None,
              step_seconds: bool = False, **options):
    """Run ``seeds`` of jbo on the JAX objective ``fn``; yield ``(seeds, values, call)`` once per call.

    ``path="compiled"``: one :func:`jbo.minimize_many` call for all ``seeds`` (or one per ``chunk`` of
    them); ``call`` is ``{"path", "seeds", "seconds": wall time of the call, "compile_seconds"}``.
    ``path="ask-tell"``: one :func:`jbo.minimize` per seed (each seed its own call, ``compile_seconds``
    ``None``: compilation, if any, is inside the first seeds' time); with ``step_seconds`` the call
    also holds the wall time of every evaluation's step (suggestion + evaluation).
    ``values`` is one list of objective values per seed, in evaluation order.
    """
    import time

    import jbo

    if path not in PATHS:
        raise ValueError(f"unknown path {path!r}; valid: {list(PATHS)}")
    seeds = [int(s) for s in seeds]
    if path == "compiled":
        check_compiled(options)
        size = max(1, int(chunk or len(seeds)))
        for i in range(0, len(seeds), size):
            part = seeds[i:i + size]
            start = time.perf_counter()
            result = jbo.minimize_many(fn, space, budget, part, **options)
            call = {"path": path, "seeds": part, "seconds": time.perf_counter() - start,
                    "compile_seconds": float(result.compile_seconds)}
            yield part, [[float(v) for v in row] for row in result.values], call
        return
    for seed in seeds:
        stamps = [time.perf_counter()]
        callback = (lambda _: stamps.append(time.perf_counter())) if step_seconds else None
        result = jbo.minimize(fn, space, budget=budget, seed=seed, callback=callback, **options)
        call = {"path": path, "seeds": [seed], "seconds": time.perf_counter() - stamps[0], "compile_seconds": None}
        if step_seconds:
            call["step_seconds"] = [b - a for a, b in zip(stamps[:-1], stamps[1:])]
        yield [seed], [[float(v) for v in result.values]], call


def seed_records(seeds, values, call) -> dict:
    """Per-seed records ``{str(seed): record}`` of one call: ``values``, ``seconds`` (an ask/tell seed's
    wall time; a compiled call's wall time shared equally by its seeds, compilation included), ``path``,
    and for a compiled call the ``call`` itself (seeds, wall and compile time), from which
    :func:`timing` reports the time per seed with compilation apart."""
    records = {}
    for seed, vals in zip(seeds, values):
        record = {"values": vals, "seconds": call["seconds"] / len(seeds), "path": call["path"]}
        if call["path"] == "compiled":
            record["call"] = {k: call[k] for k in ("seeds", "seconds", "compile_seconds")}
        elif "step_seconds" in call:
            record["step_seconds"] = call["step_seconds"]
        records[str(seed)] = record
    return records


def path_of(record: dict) -> str:
    """The path that produced a stored run (records stored before ``path`` existed ran ask/tell)."""
    return record.get("path", "ask-tell")


def by_path(records: dict) -> dict:
    """``{path: {seed: record}}`` of per-seed records, compiled first: a report row per path."""
    groups = {}
    for seed, record in records.items():
        groups.setdefault(path_of(record), {})[seed] = record
    return {p: groups[p] for p in sorted(groups, key=lambda p: PATHS.index(p) if p in PATHS else len(PATHS))}


def calls_of(records) -> list[dict]:
    """The calls behind per-seed records of one path (a compiled call once, however many of its seeds)."""
    calls, seen = [], set()
    for seed, record in records.items():
        if path_of(record) == "compiled" and "call" in record:
            call = record["call"]
            key = (tuple(call["seeds"]), call["seconds"])
            if key not in seen:
                seen.add(key)
                calls.append(dict(call, path="compiled"))
        else:
            calls.append({"path": path_of(record), "seeds": [int(seed)], "seconds": record["seconds"],
                          "compile_seconds": None})
    return calls


def timing(calls) -> dict:
    """Time per seed of the calls of one report row (all of one path).

    Returns:
      ``{"path", "per_seed", "compile", "wall", "calls"}``: ``per_seed`` is, for compiled calls, their
      wall time less compilation divided by their seeds (the seeds ran together, vmapped), for ask/tell
      the mean wall time of a seed's run (compilation, from JAX's persistent cache or not, inside);
      ``compile`` the compile time of each compiled call (empty for ask/tell); ``wall`` the total.
    """
    calls = list(calls)
    paths = {c["path"] for c in calls}
    path = paths.pop() if len(paths) == 1 else "mixed"
    n = sum(len(c["seeds"]) for c in calls)
    compile_seconds = [c["compile_seconds"] for c in calls if c.get("compile_seconds") is not None]
    wall = sum(c["seconds"] for c in calls)
    return {"path": path, "per_seed": (wall - sum(compile_seconds)) / max(1, n), "compile": compile_seconds,
            "wall": wall, "calls": len(calls)}


def seconds_text(seconds: float) -> str:
    """A duration for a table: two significant digits below 10 s, whole seconds above."""
    return f"{seconds:.2g}" if seconds < 10 else f"{seconds:.0f}"


def compile_text(t: dict) -> str:
    """The compile-time cell of a :func:`timing`: each compiled call's, or ``–`` for ask/tell."""
    return ", ".join(seconds_text(c) for c in t["compile"]) if t["compile"] else "–"


def run_grid_calls(path: str, problems, variants, seeds, run_calls) -> dict:
    """:func:`run_grid` by calls: every missing seed of a ``(problem, variant)`` in one go.

    Args:
      path: results file, ``results[problem][variant][str(seed)] = record`` (:func:`seed_records`; all
        seeds of a call are stored at once, finished seeds are skipped).
      seeds: the seeds to have.
      run_calls: ``(problem, variant, seeds) -> iterable of (seeds, values, call)`` (:func:`run_seeds`).
    Returns:
      The merged results.
    """
    import json

    import numpy as np

    results = json.load(open(path)) if os.path.exists(path) else {}
    for problem in problems:
        for variant in variants:
            done = results.get(problem, {}).get(variant, {})
            todo = [int(s) for s in seeds if str(s) not in done]
            if not todo:
                continue
            for call_seeds, values, call in run_calls(problem, variant, todo):
                records = seed_records(call_seeds, values, call)
                best = np.array([np.nanmin(np.asarray(v, float)) for v in values])
                compiled = f", compile {call['compile_seconds']:.0f} s" if call["compile_seconds"] is not None else ""
                print(f"{problem} {variant} seeds {call_seeds} ({call['path']}): best mean {best.mean():.5g}"
                      f" ({call['seconds']:.0f} s{compiled})", flush=True)
                results = merge_results(path, [([problem, variant, s], r) for s, r in records.items()])
    return results
