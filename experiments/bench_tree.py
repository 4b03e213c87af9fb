"""Time per suggestion of the tree GP vs the arc-kernel GP on the same conditional data (issue #4: at most 1/5).

100 random configurations per leaf of ``jenatton_large`` in one ``jbo.loop`` state per model: the first two
``suggest`` calls compile (cold and warm-started), the median of the other two is the steady cost.

    python experiments/bench_tree.py [--inference slice map]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

PROBLEM, LEAVES, PER_LEAF, REPEATS, SECTION, BAR = "jenatton_large", 8, 100, 2, "bench_tree", 0.2
LOADED_FILE = "bench_tree_loaded.json"  # an earlier run on a loaded machine, quoted in one line


def time_model(model: str, inference: str, space, configs, values) -> dict:
    from jbo import loop

    settings = loop.Settings.create(model, inference=inference, seed=0)
    x = np.stack([loop.encode_observation(settings, space, c, i) for i, c in enumerate(configs)])
    state = loop.init(settings, space)._replace(x=x, y=np.asarray(values, float), n_suggested=len(x))
    calls = []
    for _ in range(2 + REPEATS):
        start = time.perf_counter()
        state = loop.suggest(settings, space, state)[0]
        calls.append(time.perf_counter() - start)
        state = state._replace(pending=state.pending[:0])  # N stays fixed
    steady = float(np.median(calls[2:]))
    return {"model": model, "inference": inference, "n": len(configs), "seconds_per_suggestion": steady,
            "all_calls": calls, "compile_seconds": max(0.0, calls[0] - steady) + max(0.0, calls[1] - steady)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inference", nargs="+", default=["slice", "map"])
    _common.add_output_arguments(parser)
    if (args := _common.start(parser, argv, cache=False)) is None:
        return
    from jbo.benchmarks import get_problem

    problem, rng = get_problem(PROBLEM), np.random.default_rng(0)
    space = problem.space()
    configs = [c for leaf in range(len(space.leaves())) for c in space.sample_leaf(rng, leaf, PER_LEAF)]
    values = [problem.evaluate(c) for c in configs]
    rows = [time_model(m, inf, space, configs, values) for inf in args.inference for m in ("tree", "arc")]
    _common.write_json(os.path.join(_common.RESULTS, f"{SECTION}.json"), rows)
    _common.record_provenance(SECTION)
    _common.regenerate()


def ratios(rows) -> dict:
    """``{inference: (tree s, arc s, tree / arc)}`` of the steady time per suggestion."""
    by = {(r["inference"], r["model"]): r["seconds_per_suggestion"] for r in rows}
    return {inf: (by[inf, "tree"], by[inf, "arc"], by[inf, "tree"] / by[inf, "arc"])
            for inf, model in by if model == "tree" and (inf, "arc") in by}


def _cell(row: dict, key: str) -> str:
    return f"{row[key]:.3f}" if row.get(key) is not None else "–"


def report() -> dict:
    rows, loaded = _common.load_results(f"{SECTION}.json", []), _common.load_results(LOADED_FILE, [])
    lines = ["## Tree GP vs arc GP: time per suggestion on the same conditional data", "", _common.header(SECTION)]
    if not rows:
        return {SECTION: "\n".join(lines + ["Not run yet."])}
    n = rows[0]["n"]
    lines += [f"`{PROBLEM}` ({LEAVES} leaves), {n // LEAVES} random observations per leaf (N = {n}); median of"
              f" {len(rows[0]['all_calls']) - 2} suggestions after the two compiling calls; both models in one"
              f" process. Bar (issue #4): tree ≤ {BAR} × arc for every inference of this run.", "",
              "| inference | model | s / suggestion | fit s | acquisition s | first two calls (compile) s |",
              "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['inference']} | {r['model']} | {r['seconds_per_suggestion']:.3f} | {_cell(r, 'fit_seconds')}"
                     f" | {_cell(r, 'acquisition_seconds')} | {r['compile_seconds']:.1f} |")
    measured = [f"{inf}: tree / arc = {r:.3f} (" + ("met)" if r <= BAR else "**not met**)")
                for inf, (_, _, r) in ratios(rows).items()]
    earlier = [f"{inf}: tree / arc = {r:.3f} ({t:.3g} s vs {a:.4g} s)" for inf, (t, a, r) in ratios(loaded).items()]
    lines += ["", f"Ratios measured in this run: {'; '.join(measured)}.",
              f"An earlier run with five other experiments on the 2 cores (`experiments/results/{LOADED_FILE}`): "
              f"{'; '.join(earlier)}: load slows the tree's many small per-leaf operations more."]
    return {SECTION: "\n".join(lines)}


def claims() -> list[dict]:
    """Issue #4's bar: ``yes`` when tree / arc ≤ 0.2 for every inference measured, ``partly`` for some."""
    what = "tree GP's time per suggestion at most 1/5 of the arc GP's on the same conditional data (issue #4)"
    rows = _common.load_results(f"{SECTION}.json", [])
    if not (measured := ratios(rows)):
        return [_common.claim("jbo", what, f"≤ {BAR}", "–", "not run", SECTION)]
    met = sum(r <= BAR for _, _, r in measured.values())
    figure = "; ".join(f"{inf}: {r:.3f} ({t:.2f} s vs {a:.2f} s)" for inf, (t, a, r) in measured.items())
    return [_common.claim("jbo", f"{what}, `{PROBLEM}`, {LEAVES} leaves × {rows[0]['n'] // LEAVES} observations",
                          f"≤ {BAR}", figure, "yes" if met == len(measured) else "partly" if met else "no", SECTION)]


if __name__ == "__main__":
    main()
