"""A long-lived process meeting many search spaces: programs per structure, a bounded number held.

Parts (results in experiments/results/bench_programs.json; ``--report-only`` rewrites BENCHMARKS.md):

* ``bounds``: one process runs ``--runs`` short MAP runs (``jbo.minimize``, 20 evaluations), each on a 2-d space
  with other bounds (a real and an integer whose ranges change from run to run): the time of the first run
  (it compiles), the mean time of the others, and the process's memory mappings after the first run and at most.
* ``structures``: one process meets ``--structures`` distinct structures (1 to 12 parameters of every kind,
  conditional ones included), a 12-evaluation MAP run each: its memory mappings at most, against the kernel's
  limit, with jbo holding at most ``jbo.cache.max_programs()`` compiled programs.

Both run with jbo's stored programs on, in a fresh cache directory (the first run compiles and stores).

    python experiments/bench_programs.py bounds structures
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402


def results_path() -> str:
    return os.path.join(_common.RESULTS, "bench_programs.json")


def _objective(config):
    return sum((float(v) - 0.3) ** 2 if not isinstance(v, str) else 0.1 for v in config.values())


def part_bounds(args) -> dict:
    import numpy as np

    import jbo
    from jbo import cache

    rng = np.random.default_rng(0)
    seconds, maps = [], []
    for run in range(args.runs):
        low = float(rng.uniform(-10, 0))
        space = jbo.Space({"x": jbo.Real(low, low + float(rng.uniform(0.5, 20))),
                           "n": jbo.Integer(int(rng.integers(-5, 5)), int(rng.integers(6, 60)))})
        start = time.perf_counter()
        jbo.minimize(_objective, space, budget=20, inference="map", seed=run)
        seconds.append(time.perf_counter() - start)
        maps.append(cache.mappings())
        if run % 100 == 0:
            print(f"run {run}: {seconds[-1]:.2f} s, {maps[-1]} mappings", flush=True)
    return {"runs": args.runs, "first_seconds": seconds[0], "later_mean_seconds": statistics.mean(seconds[1:]),
            "later_max_seconds": max(seconds[1:]), "mappings_after_first": maps[0], "mappings_max": max(maps),
            "mappings_last": maps[-1], "mapping_limit": cache.mapping_limit()}


def _structure(i: int, rng):
    """The ``i``-th space: its kinds and sizes drawn, so that each differs in structure from the others."""
    import jbo

    dim = 1 + i % 12
    params = {}
    for j in range(dim):
        kind = (i // 12 + j) % 4
        if kind == 0:
            params[f"r{j}"] = jbo.Real(0.0, 1.0)
        elif kind == 1:
            params[f"l{j}"] = jbo.Integer(1, int(rng.integers(10, 1000)), log=True)
        elif kind == 2:
            params[f"c{j}"] = jbo.Categorical([f"v{k}" for k in range(2 + (i + j) % 4)])
        else:
            params[f"i{j}"] = jbo.Integer(0, int(rng.integers(2, 50)))
    if i % 5 == 0 and dim > 1:  # a conditional one: the first categorical (or a new one) decides the last
        params["switch"] = jbo.Categorical(["a", "b"])
        last = list(params)[-2]
        params[last] = params[last]._with_when({"switch": ["b"]})
    return jbo.Space(params)


def part_structures(args) -> dict:
    import numpy as np

    import jbo
    from jbo import cache

    rng = np.random.default_rng(1)
    seen, maps, seconds = set(), [], []
    i = 0
    while len(seen) < args.structures:
        space = _structure(i, rng)
        i += 1
        if space.structure in seen:
            continue
        seen.add(space.structure)
        start = time.perf_counter()
        jbo.minimize(_objective, space, budget=12, inference="map", n_init=4, seed=i)
        seconds.append(time.perf_counter() - start)
        maps.append(cache.mappings())
        if len(seen) % 25 == 0:
            print(f"structure {len(seen)}: {seconds[-1]:.1f} s, {maps[-1]} mappings, "
                  f"{cache.held_programs()} programs held", flush=True)
    return {"structures": len(seen), "mappings_max": max(maps), "mappings_last": maps[-1],
            "mappings_after_first": maps[0], "mapping_limit": cache.mapping_limit(),
            "max_programs": cache.max_programs(), "mean_seconds": statistics.mean(seconds)}


def report() -> None:
    results = _common.load_results("bench_programs.json", {})
    lines = ["## Many search spaces in one process (bench_programs)", ""]
    if not results:
        lines.append("Not run.")
    if "bounds" in results:
        r = results["bounds"]
        lines += [results["bounds_header"].rstrip(), "",
                  f"{r['runs']} MAP runs of 20 evaluations in one process, each on a space with other bounds "
                  f"(a real and an integer): later runs compile nothing.", "",
                  "| first run [s] | later runs, mean [s] | ratio | mappings after the first | at most | limit |",
                  "|---|---|---|---|---|---|",
                  f"| {r['first_seconds']:.2f} | {r['later_mean_seconds']:.3f} | "
                  f"{r['later_mean_seconds'] / r['first_seconds']:.3f} | {r['mappings_after_first']} | "
                  f"{r['mappings_max']} | {r['mapping_limit']} |", ""]
    if "structures" in results:
        r = results["structures"]
        lines += [results["structures_header"].rstrip(), "",
                  f"{r['structures']} distinct structures (1–12 parameters, every kind, some conditional) in one "
                  f"process, a 12-evaluation MAP run each, jbo holding at most {r['max_programs']} programs:", "",
                  "| mappings after the first | at most | last | limit | mean seconds per structure |",
                  "|---|---|---|---|---|",
                  f"| {r['mappings_after_first']} | {r['mappings_max']} | {r['mappings_last']} | {r['mapping_limit']} "
                  f"| {r['mean_seconds']:.1f} |"]
    _common.update_section("bench_programs", "\n".join(lines))


def claims() -> list[dict]:
    results = _common.load_results("bench_programs.json", {})
    out = []
    what = "1 000 MAP runs on spaces with other bounds in one process: later runs compile nothing"
    if "bounds" in results:
        r = results["bounds"]
        ratio = r["later_mean_seconds"] / r["first_seconds"]
        ok = ratio <= 0.25 and r["mappings_max"] < 2 * r["mappings_after_first"]
        out.append(_common.claim("jbo", what, "≤ 0.25× the first run; mappings < 2× after the first",
                                 f"{ratio:.3f}×; {r['mappings_max']} vs {r['mappings_after_first']} mappings "
                                 f"({r['runs']} runs)", "yes" if ok else "no", "bench_programs"))
    else:
        out.append(_common.claim("jbo", what, "≤ 0.25×", "–", "not run", "bench_programs"))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = ["bounds", "structures"]
    _common.add_parts_argument(parser, parts)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--structures", type=int, default=300)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, parts=parts, cache=False)
    if args is None:
        return
    with tempfile.TemporaryDirectory() as folder:
        os.environ["JBO_CACHE_DIR"] = folder
        os.environ.pop("JBO_NO_CACHE", None)
        for part in args.parts:
            print(f"running {part} ...", flush=True)
            result = {"bounds": part_bounds, "structures": part_structures}[part](args)
            _common.record_provenance(f"bench_programs_{part}")
            _common.merge_results(results_path(), [([part], result),
                                                   ([part + "_header"], _common.header(f"bench_programs_{part}"))])
    _common.regenerate()


if __name__ == "__main__":
    main()
