"""A long-lived process meeting many search spaces (issue #54), jbo's stored programs on in a fresh cache directory:
MAP runs on spaces with other bounds (``bounds``: later runs compile nothing) and on distinct structures
(``structures``: memory mappings stay under the kernel's limit with a bounded number of programs held).

    python experiments/bench_programs.py bounds structures
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _speed  # noqa: E402


def _objective(config):
    return sum((float(v) - 0.3) ** 2 if not isinstance(v, str) else 0.1 for v in config.values())


def _runs(spaces, **options) -> tuple[list, list]:
    """Seconds and memory mappings after each MAP run of ``jbo.minimize`` on each space, in one process."""
    import jbo
    from jbo import cache

    seconds, maps = [], []
    for i, space in enumerate(spaces):
        start = time.perf_counter()
        jbo.minimize(_objective, space, inference="map", seed=i, **options)
        seconds.append(time.perf_counter() - start)
        maps.append(cache.mappings())
        if i % 100 == 0:
            print(f"run {i}: {seconds[-1]:.2f} s, {maps[-1]} mappings, {cache.held_programs()} programs held",
                  flush=True)
    return seconds, maps


def part_bounds(args) -> dict:
    import numpy as np

    import jbo
    from jbo import cache

    rng = np.random.default_rng(0)
    spaces = [jbo.Space({"x": jbo.Real(low, low + float(rng.uniform(0.5, 20))),
                         "n": jbo.Integer(int(rng.integers(-5, 5)), int(rng.integers(6, 60)))})
              for low in (float(rng.uniform(-10, 0)) for _ in range(args.runs))]
    seconds, maps = _runs(spaces, budget=20)
    return {"runs": args.runs, "first_seconds": seconds[0], "later_mean_seconds": statistics.mean(seconds[1:]),
            "later_max_seconds": max(seconds[1:]), "mappings_after_first": maps[0], "mappings_max": max(maps),
            "mappings_last": maps[-1], "mapping_limit": cache.mapping_limit()}


def _structure(i: int, rng):
    """The ``i``-th space: its kinds and sizes drawn, so that each differs in structure from the others."""
    import jbo

    params = {}
    for j in range(1 + i % 12):
        kind = (i // 12 + j) % 4
        params[f"{'rlci'[kind]}{j}"] = (jbo.Real(0.0, 1.0) if kind == 0 else
                                        jbo.Integer(1, int(rng.integers(10, 1000)), log=True) if kind == 1 else
                                        jbo.Categorical([f"v{k}" for k in range(2 + (i + j) % 4)]) if kind == 2 else
                                        jbo.Integer(0, int(rng.integers(2, 50))))
    if i % 5 == 0 and len(params) > 1:  # a conditional one: a new categorical decides the last
        last = list(params)[-1]
        params["switch"] = jbo.Categorical(["a", "b"])
        params[last] = params[last]._with_when({"switch": ["b"]})
    return jbo.Space(params)


def part_structures(args) -> dict:
    import numpy as np

    from jbo import cache

    rng, spaces, i = np.random.default_rng(1), {}, 0
    while len(spaces) < args.structures:
        space, i = _structure(i, rng), i + 1
        spaces.setdefault(space.structure, space)
    seconds, maps = _runs(spaces.values(), budget=12, n_init=4)
    return {"structures": len(spaces), "mappings_max": max(maps), "mappings_last": maps[-1],
            "mappings_after_first": maps[0], "mapping_limit": cache.mapping_limit(),
            "max_programs": cache.max_programs(), "mean_seconds": statistics.mean(seconds)}


def _bounds(r):
    return [f"{r['runs']} MAP runs of 20 evaluations in one process, each on a space with other bounds (a real and an"
            " integer): later runs compile nothing.", "",
            *_speed.table(["first run [s]", "later runs, mean [s]", "ratio", "mappings after the first", "at most",
                           "limit"],
                          [f"{r['first_seconds']:.2f}", f"{r['later_mean_seconds']:.3f}",
                           f"{r['later_mean_seconds'] / r['first_seconds']:.3f}", r["mappings_after_first"],
                           r["mappings_max"], r["mapping_limit"]])]


def _structures(r):
    return [f"{r['structures']} distinct structures (1–12 parameters, every kind, some conditional) in one process, a"
            f" 12-evaluation MAP run each, jbo holding at most {r['max_programs']} programs:", "",
            *_speed.table(["mappings after the first", "at most", "last", "limit", "mean seconds per structure"],
                          [r["mappings_after_first"], r["mappings_max"], r["mappings_last"], r["mapping_limit"],
                           f"{r['mean_seconds']:.1f}"])]


SECTION = _speed.Parts("bench_programs", "Many search spaces in one process (bench_programs)",
                       blocks={"bounds": _bounds, "structures": _structures},
                       runners={"bounds": part_bounds, "structures": part_structures},
                       options={"--runs": 1000, "--structures": 300}, cache=False, own_provenance=True)
report = SECTION.report


def claims() -> list[dict]:
    """Later runs on spaces with other bounds cost at most a quarter of the first (they compile nothing), and the
    process's memory mappings stay under twice those after the first run."""

    def decide(r):
        ratio = r["later_mean_seconds"] / r["first_seconds"]
        ok = ratio <= 0.25 and r["mappings_max"] < 2 * r["mappings_after_first"]
        figure = f"{ratio:.3f}×; {r['mappings_max']} vs {r['mappings_after_first']} mappings ({r['runs']} runs)"
        return figure, "yes" if ok else "no"

    return [SECTION.claim("bounds", "1 000 MAP runs on spaces with other bounds in one process: later runs compile"
                          " nothing", "≤ 0.25× the first run; mappings < 2× after the first", decide)]


def main(argv=None):
    with tempfile.TemporaryDirectory() as folder:  # the first run compiles and stores
        os.environ["JBO_CACHE_DIR"] = folder
        os.environ.pop("JBO_NO_CACHE", None)
        SECTION.main(argv)


if __name__ == "__main__":
    main()
