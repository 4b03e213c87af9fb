"""Shared plumbing of the experiment scripts: results files, provenance, command lines, running seeds through
:func:`jbo.study`, timing and the summary's claims (:mod:`driver` declares experiments on top of it)."""

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
#: Options of the papers' GP baselines (Spearmint's GP, the GP-EI of the tree and BOCK papers) in the reproduction
#: scripts: expected improvement over the whole box, where jbo's GP defaults to UCB in a trust region
#: (BENCHMARKS.md, suite).
PAPER_GP = {"acquisition": "ei", "trust_region": False}
#: Snoek et al.'s (2015) DNGO as the reproduction scripts run it: standardised targets and a whole-box search,
#: where jbo's DNGO defaults to Yeo-Johnson warped targets in a trust region (BENCHMARKS.md, dngo_vs_tpe).
PAPER_DNGO = {"output_warping": "none", "trust_region": False}
PATHS = ("compiled", "ask-tell")  # how stored seeds ran: one jbo.study (or minimize_many) call, or jbo.minimize each


# --- results files ------------------------------------------------------------------------------------------
#
# Small results stay JSON (readable, diffable). A large one is written as a compact container, ``<name>.jbr``
# next to where its ``<name>.json`` would be: ``JBR1`` then an LZMA stream of the JSON tree, every list of at
# least MIN_ARRAY floats replaced by ``{"$f8": [offset, length]}``, followed by those floats as float64 split into
# byte planes (the exponent bytes of neighbouring values then compress well). Reading gives back the same tree,
# every float bit for bit.

JBR_MAGIC = b"JBR1"
JBR_ABOVE = 256 * 1024  # JSON text larger than this is written as a container
MIN_ARRAY = 8


def _compact_path(path: str) -> str:
    return path[: -len(".json")] + ".jbr" if path.endswith(".json") else path + ".jbr"


def _encode_arrays(value, chunks: list, offset: list):
    if isinstance(value, dict):
        return {k: _encode_arrays(v, chunks, offset) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) >= MIN_ARRAY and all(type(v) is float for v in value):
            chunks.append(value)
            start, offset[0] = offset[0], offset[0] + len(value)
            return {"$f8": [start, len(value)]}
        return [_encode_arrays(v, chunks, offset) for v in value]
    return value


def _decode_arrays(value, data):
    if isinstance(value, dict):
        if set(value) == {"$f8"}:
            start, length = value["$f8"]
            return data[start:start + length].tolist()
        return {k: _decode_arrays(v, data) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode_arrays(v, data) for v in value]
    return value


def read_json(path: str, default=None):
    """The results at ``path`` (``<name>.json``, or its compact container ``<name>.jbr``), or ``default``."""
    import json
    import lzma
    import struct

    import numpy as np

    compact = _compact_path(path)
    if os.path.exists(compact) and not os.path.exists(path):
        with open(compact, "rb") as f:
            if f.read(4) != JBR_MAGIC:
                raise ValueError(f"{compact} is not a results container")
            blob = lzma.decompress(f.read())
        (length,) = struct.unpack("<Q", blob[:8])
        tree = json.loads(blob[8:8 + length])
        planes = np.frombuffer(blob[8 + length:], np.uint8)
        data = planes.reshape(8, -1).T.copy().view(np.float64).ravel() if planes.size else np.zeros(0)
        return _decode_arrays(tree, data)
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return default


def write_json(path: str, results) -> str:
    """Write ``results`` atomically: JSON when small, else the compact container (:func:`read_json` reads both);
    the other form is removed. Returns the path written."""
    import json
    import lzma
    import struct

    import numpy as np

    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    text = json.dumps(results, indent=1)
    if len(text) <= JBR_ABOVE:
        target, other = path, _compact_path(path)
        payload = text.encode()
    else:
        target, other = _compact_path(path), path
        chunks, offset = [], [0]
        tree = json.dumps(_encode_arrays(results, chunks, offset), separators=(",", ":")).encode()
        data = np.asarray([v for chunk in chunks for v in chunk], np.float64)
        planes = data.view(np.uint8).reshape(-1, 8).T.copy().tobytes() if data.size else b""
        payload = JBR_MAGIC + lzma.compress(struct.pack("<Q", len(tree)) + tree + planes, preset=6)
    with open(target + ".tmp", "wb") as f:
        f.write(payload)
    os.replace(target + ".tmp", target)
    if os.path.exists(other):
        os.remove(other)
    return target


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
    """Pin BLAS threads (before numpy/jax load) and enable float64 and JAX's persistent compile cache (``cache=False``:
    neither it nor jbo's stored programs).

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
    elif not cache:  # nor jbo's stored programs: a script that times compilation compiles
        os.environ["JBO_NO_CACHE"] = "1"


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


def device_label(machine: str) -> str:
    """The device a timing ran on, from a :func:`_common.machine` line: ``"2-core CPU"``, ``"2-core CPU,
    2 JAX devices"`` (the host split by ``--cpu-devices``), ``"H100"`` (an accelerator's model)."""
    head = machine.split("; Python")[0]
    cores, _, devices = head.partition(" cores (")
    devices = devices.rsplit("), ", 1)[-1]
    count = re.search(r"× (\d+) JAX devices", devices)
    if devices.startswith("cpu"):
        label = f"{cores.strip()}-core CPU"
        return label + (f", {count.group(1)} JAX devices" if count else "")
    kind = re.search(r"\((.+?)\)", devices)
    kind = kind.group(1) if kind else devices
    model = re.search(r"\b([A-Z]+\d+[A-Za-z]*)\b", kind)
    return (model.group(1) if model else kind) + (f" × {count.group(1)}" if count else "")


def on_cpu(device: str) -> bool:
    """Whether a :func:`device_label` names a CPU ("2-core CPU", ...) rather than an accelerator's model."""
    return "CPU" in device


def command() -> str:
    """The command line that ran, quoted so that it runs again as written."""
    import shlex

    return "python " + shlex.join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])


def git_revision() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def provenance_path() -> str:
    """The results file of every section's provenance (``{section: {date, commit, machine, command}}``)."""
    return os.path.join(RESULTS, "provenance.json")


def record_provenance(section: str, accumulates: bool = False) -> None:
    """Store now's date, commit, machine and command as the provenance of ``section``: a script calls it
    once it has run (not when it only rewrites its report), so that a report regenerated later from the
    stored data still says where its figures were measured.

    ``accumulates``: the section's data grows run by run (a resumable grid whose commands add methods or
    dimensions): the new command is appended to the stored ones (``"a; b"``) unless it is among them already,
    and a stored note about older data is kept."""

    path = provenance_path()
    record = {"date": datetime.date.today().isoformat(), "commit": git_revision(), "machine": machine(),
              "command": command()}
    stored = stored_provenance(section) if accumulates else None
    if stored:
        commands = stored["command"].split("; ")
        record["command"] = "; ".join(commands + [record["command"]] * (record["command"] not in commands))
        if stored.get("note"):
            record["note"] = stored["note"]
    merge_result(path, [section], record)


def stored_provenance(name: str) -> dict | None:
    """The provenance stored under ``name`` (:func:`record_provenance`), or ``None``."""

    path = provenance_path()
    return read_json(path, {}).get(name)


#: The header line of a section whose rows come from several devices, each run's provenance under the table.
PER_DEVICE_HEADER = "- provenance: one run per device, each listed under the table (date, commit, machine, command)."


def record_device_provenance(section: str, device: str) -> None:
    """:func:`record_provenance` of one device's rows of ``section`` (stored as ``section/device``), for a
    section whose rows from several machines accumulate (:func:`device_provenance`)."""
    record_provenance(f"{section}/{device}", accumulates=True)


def start_device_run(parser, argv, section: str, results_file: str):
    """:func:`start` for a script whose rows are merged per device: ``(args, results path, device label)``, the
    device's provenance recorded, or ``None`` where :func:`start` ended the run. Compile times are part of what
    such scripts measure, so the compilation cache stays off."""
    args = start(parser, argv, cache=False)
    if args is None:
        return None
    device = device_label(machine())
    record_device_provenance(section, device)
    return args, os.path.join(RESULTS, results_file), device


def device_provenance(section: str, devices) -> list[str]:
    """The lines listing where each device's rows of ``section`` were measured (:func:`record_device_provenance`)."""
    lines = ["Devices:", ""]
    for device in devices:
        stored = stored_provenance(f"{section}/{device}")
        lines.append(f"- {device}: " + (f"date {stored['date']}; commit {stored['commit']}; machine"
                                        f" {stored['machine']}; command `{stored['command']}`"
                                        if stored else "provenance not recorded"))
    return lines


def header(section: str, command_form: str | None = None) -> str:
    """The provenance lines a BENCHMARKS.md section starts with, from the stored data
    (:func:`record_provenance`), and its ``note`` where one was added to stored data by hand (what changed in
    jbo since the data was made; a new run of the section records its provenance afresh, without it).

    ``command_form``: for a section whose data accumulated over many runs, the general form of their commands
    (e.g. ``--dims D``), shown with the count of runs instead of every run's command, which stays in the
    provenance file."""

    path = provenance_path()
    stored = stored_provenance(section)
    if stored is None:
        return "- provenance: not recorded\n"
    note = f"- note: {stored['note']}\n" if stored.get("note") else ""
    runs = stored["command"].split("; ")
    command = f"`{stored['command']}`"
    if command_form and len(runs) > 1:
        shown = os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path
        command = f"`{command_form}`, {len(runs)} runs (each run's command: `{shown}`, `{section}`)"
    return (f"- date: {stored['date']}; commit: {stored['commit']}\n- machine: {stored['machine']}\n"
            f"- command: {command}\n{note}")


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

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        results = read_json(path, {})
        for keys, record in items:
            node = results
            for key in keys[:-1]:
                node = node.setdefault(key, {})
            node[keys[-1]] = record
        write_json(path, results)
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

    results = read_json(path, {})
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


def add_output_arguments(parser) -> None:
    """Add ``--report-only`` and ``--results-dir``, the options every experiment script takes (:func:`start`)."""
    parser.add_argument("--report-only", action="store_true",
                        help="only rewrite BENCHMARKS.md from the stored results (no runs)")
    parser.add_argument("--results-dir", default=None,
                        help="write the results JSON, the report (<dir>/BENCHMARKS.md) and figures under this"
                             " directory instead of the repository's (checks on tiny settings)")


def add_parts_argument(parser, parts, default=None) -> None:
    """Add the positional ``parts``: which of the script's ``parts`` to run (checked by :func:`start`).

    Args:
      default: the parts run when none is named; ``None``: a part must be named, or ``--report-only`` given.
    """
    # no choices: argparse refuses an empty '*' positional with choices, so start() checks the names
    parser.add_argument("parts", nargs="*", default=default, help=f"any of {list(parts)}")


def start(parser, argv=None, *, parts=None, cache: bool = True, handle_report_only: bool = True):
    """The preamble of an experiment script's ``main``: parse its command line, check the named parts, call
    :func:`setup` and :func:`use_results_dir`, and with ``--report-only`` rewrite the report.

    Args:
      parser: the script's parser, with :func:`add_output_arguments` (and :func:`add_parts_argument` where
        ``parts`` is given).
      argv: the arguments; ``None``: the command line's.
      parts: the script's part names, or ``None`` when it takes no parts.
      cache: passed to :func:`setup`, whose ``cpu_devices`` is the script's ``--cpu-devices`` where it takes one.
      handle_report_only: ``False`` leaves ``--report-only`` to the script (a flow of its own, such as one
        that honours ``--no-report``).
    Returns:
      The parsed arguments, or ``None`` once ``--report-only`` has rewritten the report: nothing is left to do.
    """
    args = parser.parse_args(argv)
    if parts is not None:
        unknown = set(args.parts) - set(parts)
        if unknown:
            parser.error(f"unknown part(s) {sorted(unknown)}; valid: {list(parts)}")
        if not args.parts and not args.report_only:
            parser.error(f"name a part ({', '.join(parts)}) or give --report-only")
    setup(cache=cache, cpu_devices=getattr(args, "cpu_devices", None))
    use_results_dir(args.results_dir)
    if args.report_only and handle_report_only:
        regenerate()
        return None
    return args


def add_grid_arguments(parser, variants, seeds: int = 10, problems=None) -> None:
    """The options every ablation grid script takes: ``--seeds``, ``--variants`` and, when ``problems`` is
    given, ``--problems``."""
    parser.add_argument("--seeds", type=int, default=seeds)
    if problems is not None:
        parser.add_argument("--problems", nargs="+", default=list(problems), choices=list(problems))
    parser.add_argument("--variants", nargs="+", default=list(variants), choices=list(variants))


# ----------------------------------------------------------------------------------------------
# Running jbo's seeds: one compiled jbo.minimize_many call, or the ask/tell loop of jbo.minimize
# ----------------------------------------------------------------------------------------------
# Arguments jbo.minimize takes that have no meaning for a compiled run (it has no host loop).
HOST_ONLY = ("callback", "journal", "resume", "progress")


def display_path(path: str) -> str:
    """``path`` as a report names it: relative to the repository when inside it, else absolute."""
    path = os.path.abspath(path)
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def add_chunk_argument(parser) -> None:
    """``--chunk``: how many seeds one compiled call runs."""
    parser.add_argument("--chunk", type=int, default=None,
                        help="seeds per compiled call (jbo.study or jbo.minimize_many; default: all of a cell's"
                             " seeds in one call; smaller if memory requires)")


def check_compiled(options: dict) -> None:
    """Refuse, with a message, what the compiled path cannot run (rather than silently doing something else).

    Raises:
      SystemExit: a host-only argument (:data:`HOST_ONLY`), or an ensemble whose members the ask/tell
        driver would train split over several JAX devices (:func:`jbo.models.dngo.prepare`, host-side:
        one compiled program runs on one device).
    """
    from jbo import devices, loop

    host = sorted(set(options) & set(HOST_ONLY))
    if host:
        raise SystemExit(f"--path compiled: {host} need(s) the ask/tell loop; run with --path ask-tell")
    settings = loop.Settings.create(**{"model": "gp", **options})
    if settings.model.members > 1 and devices.num_devices() > 1:
        raise SystemExit(f"--path compiled: model {settings.model_name!r} with {devices.num_devices()} JAX devices"
                         " trains its networks split over the devices on the host (jbo.models.dngo.prepare), which"
                         " one compiled jbo.minimize_many program cannot do; run with one device (no --cpu-devices)"
                         " or with --path ask-tell")


def study_calls(fn, space, budget: int, seeds, arms: dict, chunk: int | None = None, store: str | None = None):
    """Run ``seeds`` of every arm through one :func:`jbo.study` call (per ``chunk`` of seeds): arms that differ
    only in values share one compiled program. With ``store`` the study keeps its runs there as they go (values
    only) and continues what it finds. Yields ``(arm index, arm, seeds, values, call, result)`` per arm and call.

    ``values``: one list of objective values per seed, in evaluation order. ``call``: ``{"path": "compiled",
    "seeds", "seconds", "compile_seconds", "arms"}``, the study's wall time less compilation shared among its arms
    in proportion to their runs' seconds, plus the compile time of the arm's program shared among the arms it
    ran. A continued study's wall time misses what earlier processes ran: with a store it is the runs' stored
    step seconds over the runs made at once, one per core (``timed_from: "store"``). ``result``: the
    :class:`jbo.StudyResult`.
    """
    import time

    import jbo

    for options in arms.values():
        check_compiled(options)
    seeds = [int(s) for s in seeds]
    size = max(1, int(chunk or len(seeds)))
    for i in range(0, len(seeds), size):
        part = seeds[i:i + size]
        start = time.perf_counter()
        result = jbo.study(fn, space, budget, part, arms, **({"store": store, "store_points": False} if store else {}))
        wall = time.perf_counter() - start
        run_seconds = result.step_seconds.sum(axis=(1, 2))
        share = run_seconds / max(float(run_seconds.sum()), 1e-12)
        if store:
            wall = float(run_seconds.sum()) / min(len(part), os.cpu_count() or 1) + result.compile_seconds
        for a, name in enumerate(result.arms):
            compile_seconds = sum(s / len(names) for names, s in result.programs if name in names)
            call = {"path": "compiled", "seeds": part, "arms": list(result.arms),
                    "seconds": float(share[a] * (wall - result.compile_seconds) + compile_seconds),
                    "compile_seconds": float(compile_seconds), **({"timed_from": "store"} if store else {})}
            yield a, name, part, [[float(v) for v in row] for row in result.values[a]], call, result


def run_arms(fn, space, budget: int, seeds, arms: dict, chunk: int | None = None, store: str | None = None):
    """:func:`study_calls` yielding ``(arm, seeds, values, call)``."""
    for _, name, part, values, call, _ in study_calls(fn, space, budget, seeds, arms, chunk, store):
        yield name, part, values, call


def run_seeds(fn, space, budget: int, seeds, chunk: int | None = None, **options):
    """:func:`run_arms` of one arm (``options``), yielding ``(seeds, values, call)``."""
    for _, part, values, call in run_arms(fn, space, budget, seeds, {"run": options}, chunk):
        call.pop("arms")
        yield part, values, call


def seed_records(seeds, values, call) -> dict:
    """Per-seed records ``{str(seed): record}`` of one call: ``values``, ``seconds`` (an ask/tell seed's
    wall time; a compiled call's wall time shared equally by its seeds, compilation included), ``path``,
    and for a compiled call the ``call`` itself (seeds, wall and compile time), from which
    :func:`timing` reports the time per seed with compilation apart."""
    records = {}
    for seed, vals in zip(seeds, values):
        record = {"values": vals, "seconds": call["seconds"] / len(seeds), "path": call["path"]}
        if call["path"] == "compiled":
            record["call"] = {k: call[k] for k in ("seeds", "seconds", "compile_seconds", "arms") if k in call}
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


# ----------------------------------------------------------------------------------------------
# The report: sections from stored data, and the claims the summary table lists
# ----------------------------------------------------------------------------------------------
VERDICTS = ("yes", "partly", "no", "not run")


def claim(paper: str, what: str, paper_figure: str, jbo_figure: str, reproduced: str, section: str,
          headline: bool = False) -> dict:
    """One row of BENCHMARKS.md's summary table.

    Args:
      paper: the paper whose claim it is (``"jbo"`` for a claim of this library's own, e.g. a speed bar).
      what: the claim, in a few words (problem, budget, what is compared).
      paper_figure: the paper's figure for it (``"–"`` where the paper gives none).
      jbo_figure: jbo's figure, computed from the stored results.
      reproduced: one of :data:`VERDICTS`, decided from the data by the script that owns the section.
      section: the BENCHMARKS.md section holding the table the figures come from.
      headline: also shown in the README's results table.
    """
    if reproduced not in VERDICTS:
        raise ValueError(f"reproduced must be one of {VERDICTS}, got {reproduced!r}")
    return dict(paper=paper, claim=what, paper_figure=paper_figure, jbo_figure=jbo_figure,
                reproduced=reproduced, section=section, headline=headline)


def load_results(name: str, default=None):
    """The stored results file ``name`` (under :data:`RESULTS`), or ``default`` when it does not exist."""

    path = os.path.join(RESULTS, name)
    return read_json(path, default)


def mean_se(values) -> tuple[float, float]:
    """Mean and standard error (``nan`` with a single value)."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
    return float(values.mean()), float(se)


def regenerate(figures: bool = True) -> None:
    """Rewrite BENCHMARKS.md (and, for the repository's results, the README's headline table) from all stored
    results, drawing the figures again: what a script calls once its runs are stored. ``experiments/report.py``
    runs in its own process (it imports every script; none imports it)."""
    command = [sys.executable, os.path.join(ROOT, "experiments", "report.py")]
    if RESULTS != os.path.join(ROOT, "experiments", "results"):
        command += ["--results-dir", RESULTS]
    subprocess.run(command + (["--figures"] if figures else []), check=True)


def missing_seeds(results: dict, problem: str, variants, seeds) -> dict[tuple[int, ...], list[str]]:
    """The seeds a problem's variants still lack, grouped: ``{missing seeds: [variants]}``, so that variants
    missing the same seeds run as the arms of one study."""
    todo: dict[tuple[int, ...], list[str]] = {}
    for variant in variants:
        done = results.get(problem, {}).get(variant, {})
        missing = tuple(int(s) for s in seeds if str(s) not in done)
        if missing:
            todo.setdefault(missing, []).append(variant)
    return todo
