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
    import fcntl
    import json

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        results = json.load(open(path)) if os.path.exists(path) else {}
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


def grid_results(args, path: str, problems, run, describe=lambda record: "") -> dict:
    """The saved results (``args.report_only``) or those of :func:`run_grid` over ``args``' variants and seeds."""
    import json

    if args.report_only:
        return json.load(open(path)) if os.path.exists(path) else {}
    return run_grid(path, problems, args.variants, args.seeds, run, describe)
