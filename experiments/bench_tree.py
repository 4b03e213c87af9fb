"""Time per suggestion of the tree GP vs the arc-kernel GP on the same conditional data (issue #4 speed).

The data: ``--per-leaf`` random configurations in each of the 8 leaves of Jenatton's large balanced
tree function (``jenatton_large``), evaluated, encoded as the loop stores them. For each model a loop
state holding those observations is built and ``jbo.loop.suggest`` called repeatedly; the first two
calls compile (cold and warm-started programs) and are reported apart, the median of the later calls
is the steady cost of one suggestion (hyperparameter inference + acquisition). Both models run in one
process, one after the other, with the same inference method.

    python experiments/bench_tree.py [--per-leaf 100] [--inference slice map] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402


def observations(problem_name: str, per_leaf: int, seed: int = 0):
    import numpy as np

    from jbo.benchmarks import get_problem

    problem = get_problem(problem_name)
    space = problem.space()
    rng = np.random.default_rng(seed)
    configs = [c for leaf in range(len(space.leaves())) for c in space.sample_leaf(rng, leaf, per_leaf)]
    values = np.array([problem.evaluate(c) for c in configs])
    return space, configs, values


def time_model(model: str, inference: str, space, configs, values, repeats: int, seed: int = 0) -> dict:
    import numpy as np

    from jbo import loop

    settings = loop.Settings.create(model, inference=inference, seed=seed)
    x = np.stack([loop.encode_observation(settings, space, c, i) for i, c in enumerate(configs)])
    state = loop.init(settings, space)._replace(x=x, y=np.asarray(values, dtype=float), n_suggested=len(configs))
    calls = []
    for _ in range(2 + repeats):
        start = time.perf_counter()
        state, _, info = loop.suggest(settings, space, state)
        calls.append(time.perf_counter() - start)
        state = state._replace(pending=state.pending[:0])  # keep N fixed
    steady = float(np.median(calls[2:]))
    return {"model": model, "inference": inference, "n": len(configs), "seconds_per_suggestion": steady,
            "all_calls": calls, "compile_seconds": max(0.0, calls[0] - steady) + max(0.0, calls[1] - steady)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="jenatton_large")
    parser.add_argument("--per-leaf", type=int, default=100)
    parser.add_argument("--inference", nargs="+", default=["slice", "map"])
    parser.add_argument("--models", nargs="+", default=["tree", "arc"])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    _common.setup(cache=False)
    space, configs, values = observations(args.problem, args.per_leaf)
    rows = []
    for inference in args.inference:
        for model in args.models:
            r = time_model(model, inference, space, configs, values, args.repeats)
            rows.append(r)
            print(json.dumps(r), flush=True)
    os.makedirs(_common.RESULTS, exist_ok=True)
    json.dump(rows, open(os.path.join(_common.RESULTS, "bench_tree.json"), "w"), indent=1)
    write_report(rows, args, len(space.leaves()))


def write_report(rows, args, n_leaves):
    lines = ["## Tree GP vs arc GP: time per suggestion on the same conditional data", "", _common.header(),
             f"`{args.problem}` ({n_leaves} leaves), {args.per_leaf} random observations per leaf"
             f" (N = {rows[0]['n']}); median of {args.repeats} suggestions after the two compiling calls; both models"
             " in one process. Bar (issue #4): tree ≤ 1/5 of arc.", "",
             "| inference | model | s / suggestion | fit s | acquisition s | first two calls (compile) s |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        split = lambda key: f"{r[key]:.3f}" if r.get(key) is not None else "–"  # one program since 87bfd7b: no split
        lines.append(f"| {r['inference']} | {r['model']} | {r['seconds_per_suggestion']:.3f} | {split('fit_seconds')} |"
                     f" {split('acquisition_seconds')} | {r['compile_seconds']:.1f} |")
    by = {(r["inference"], r["model"]): r["seconds_per_suggestion"] for r in rows}
    ratios = [f"{inf}: tree / arc = {by[(inf, 'tree')] / by[(inf, 'arc')]:.3f}"
              for inf in dict.fromkeys(r["inference"] for r in rows) if (inf, "tree") in by and (inf, "arc") in by]
    if ratios:
        lines += ["", "Ratios measured in this run: " + "; ".join(ratios) + "."]
    _common.update_section("bench_tree", "\n".join(lines))


if __name__ == "__main__":
    main()
