"""Plumbing of the speed benchmarks (``bench_*.py``): calls timed in fresh processes, scripts of parts whose results
are stored with the provenance of their run, markdown tables."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import _common


def fresh(function, *args, python: str = sys.executable, env: dict | None = None, stderr: bool = False) -> dict:
    """``function(*args)`` (a script's, returning a JSON dict) in a fresh interpreter with a new, empty compilation
    cache (``env`` may change that): what it returns, and the process's wall time seen from here (``wall``)."""
    here, module = os.path.split(os.path.splitext(os.path.abspath(sys.modules[function.__module__].__file__))[0])
    code = (f"import json, sys; sys.path.insert(0, {here!r}); from {module} import {function.__name__} as f;"
            f" print(json.dumps(f(*{args!r})))")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "JBO_CACHE_DIR": cache, "JBO_NO_CACHE": "", **(env or {})}
        start = time.perf_counter()
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, cwd=_common.ROOT)
        wall = time.perf_counter() - start
    if out.returncode:
        raise RuntimeError(f"subprocess failed:\n{out.stderr[-3000:]}")
    result = {"wall": wall, **json.loads(out.stdout.strip().splitlines()[-1])}
    return {**result, "stderr": out.stderr} if stderr else result


def hartmann6(budget: int, seeds: int, options: dict, compiled: bool = True) -> dict:
    """Hartmann6's seeds through one ``jbo.minimize_many`` program, or (``compiled=False``) through ``jbo.minimize``
    seed after seed: the seconds from before ``import jbo``, the best values (for :func:`fresh`)."""
    start = time.perf_counter()
    import jbo
    from jbo.benchmarks import get_problem

    p = get_problem("hartmann6")
    if compiled:
        r = jbo.minimize_many(p.evaluate, p.space(), budget=budget, seeds=range(seeds), **options)
        return {"seconds": time.perf_counter() - start, "compile": r.compile_seconds, "best": r.best_values.tolist()}
    best, first = [], None
    for seed in range(seeds):
        best.append(jbo.minimize(p.evaluate, p.space(), budget=budget, seed=seed, **options).best_value)
        first = first or time.perf_counter() - start
    return {"seconds": time.perf_counter() - start, "first_seed": first, "best": best}


def median(runs, key: str = "wall") -> float:
    return statistics.median(r[key] for r in runs)


def run_parts(parser, parts: dict, section: str, argv=None, cache: bool = True, own_provenance: bool = False):
    """The ``main`` of a script of parts (``{name: args -> result}``): run the parts named on the command line,
    store each result in ``<section>.json`` beside the provenance of its run (``<part>_header``: the section's,
    or with ``own_provenance`` the part's own, ``<section>_<part>``), then regenerate BENCHMARKS.md."""
    _common.add_parts_argument(parser, parts)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, parts=list(parts), cache=cache)
    if args is None:
        return
    for part in args.parts:
        print(f"running {part} ...", flush=True)
        result = parts[part](args)
        name = f"{section}_{part}" if own_provenance else section
        _common.record_provenance(name)
        _common.merge_results(os.path.join(_common.RESULTS, f"{section}.json"),
                              [([part], result), ([f"{part}_header"], _common.header(name))])
    _common.regenerate()


def render_parts(title: str, results: dict, blocks: dict) -> str:
    """A section of parts: for each stored part, the provenance of its run, then ``blocks[part](result)``'s lines."""
    lines = [f"## {title}"] + ([] if results else ["", "Not run."])
    for part, block in blocks.items():
        if part in results:
            lines += ["", results[f"{part}_header"].rstrip(), "", *block(results[part])]
    return "\n".join(lines)


def table(header, *rows) -> list[str]:
    """A markdown table of ``header``'s cells and ``rows`` of cells."""
    return [f"| {' | '.join(header)} |", "|" + "---|" * len(header), *(f"| {' | '.join(map(str, r))} |" for r in rows)]
