"""Where do DNGO's and the GP's suggestions go? A diagnostic of DNGO's Hartmann6 failures.

In ``dngo_table1.py`` DNGO's Hartmann6 runs stall more often than the GP's. This script reruns GP and
DNGO (jbo's defaults, as in that table) on a box problem and measures, per run, the share of
model-based suggestions with at least one coordinate on a face of the search box (within 1e-6 of a
bound, in unit-cube units), the best value and the distance from the best point to the nearest known
minimiser (unit-cube units). A Sobol design or a GP rarely puts a point exactly on a face; a model
whose mean extrapolates beyond the data pushes the acquisition optimiser there.

The methods' missing seeds run together in one ``jbo.study`` call (``--path compiled``, the default;
``--chunk N`` splits them); ``--path ask-tell`` runs one ``jbo.minimize`` per seed, as the stored runs
made before the compiled path were. Results go to ``experiments/results/dngo_boundary_<problem>.json``
(resumable: finished (method, seed) pairs are skipped), from which the section
``dngo_boundary_<problem>`` is written. A diagnostic: it tests no claim (``claims()`` is empty).

    python experiments/dngo_boundary.py [--problem hartmann6] [--seeds 10] [--budget 60] [--methods gp dngo]
        [--path compiled|ask-tell] [--chunk N] [--results-dir DIR] [--report-only]
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

FACE_TOLERANCE = 1e-6
PREFIX = "dngo_boundary_"


def section_of(problem: str) -> str:
    """The BENCHMARKS.md section (and provenance key, and results file stem) of a problem."""
    return PREFIX + problem


def measure(problem_name: str, configs, values, seconds: float, path: str) -> dict:
    """The record of one run from its evaluated configurations and values (both paths)."""
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem

    problem = get_problem(problem_name)
    lo, hi = problem.bounds[:, 0], problem.bounds[:, 1]
    x = np.array([[c[n] for n in problem.names] for c in configs], dtype=float)
    unit = (x - lo) / (hi - lo)
    n_init = jbo.loop.Settings().initial_size(problem.dim)
    on_face = np.any((unit < FACE_TOLERANCE) | (unit > 1 - FACE_TOLERANCE), axis=1)
    best = unit[int(np.nanargmin(values))]
    argmins = (np.atleast_2d(problem.argmins) - lo) / (hi - lo)
    return {"values": [float(v) for v in values], "seconds": float(seconds), "path": path,
            "face_share_model": float(on_face[n_init:].mean()), "face_share_design": float(on_face[:n_init].mean()),
            "best_distance": float(np.min(np.linalg.norm(argmins - best, axis=1)))}


def run(problem_name: str, method: str, seed: int, budget: int) -> dict:
    """One seed of one method by ``jbo.minimize`` (``--path ask-tell``)."""
    import jbo
    from jbo.benchmarks import get_problem

    problem = get_problem(problem_name)
    start = time.perf_counter()
    result = jbo.minimize(problem.evaluate, problem.space(), budget=budget, seed=seed, model=method)
    seconds = time.perf_counter() - start
    return measure(problem_name, [h["config"] for h in result.history], result.values, seconds, "ask-tell")


def run_study(problem_name: str, methods, seeds, budget: int, chunk: int | None = None):
    """``seeds`` of every method in one :func:`jbo.study` call (per ``chunk`` of seeds). Yields
    ``(method, seed, record)``; a record's ``seconds`` is its share of the call's wall time less
    compilation (shared among the methods in proportion to their runs' seconds), and its ``call`` holds
    the call's seeds, seconds and compile seconds, as :func:`_common.run_arms` counts them."""
    import jbo
    from jbo.benchmarks import get_problem

    problem = get_problem(problem_name)
    space = problem.space()
    arms = {method: {"model": method} for method in methods}
    for options in arms.values():
        _common.check_compiled(options)
    seeds = [int(s) for s in seeds]
    size = max(1, int(chunk or len(seeds)))
    for i in range(0, len(seeds), size):
        part = seeds[i:i + size]
        start = time.perf_counter()
        result = jbo.study(problem.evaluate, space, budget, part, arms)
        wall = time.perf_counter() - start
        run_seconds = result.step_seconds.sum(axis=(1, 2))
        share = run_seconds / max(float(run_seconds.sum()), 1e-12)
        for a, method in enumerate(result.arms):
            compile_seconds = sum(s / len(names) for names, s in result.programs if method in names)
            call = {"seeds": part, "arms": list(result.arms), "compile_seconds": float(compile_seconds),
                    "seconds": float(share[a] * (wall - result.compile_seconds) + compile_seconds)}
            for k, seed in enumerate(part):
                record = measure(problem_name, space.decode_many(result.x[a, k]), result.values[a, k],
                                 call["seconds"] / len(part), "compiled")
                yield method, seed, {**record, "call": call}


# ----------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------
def _seconds(seconds: float) -> str:
    """Whole seconds, as the rows stored before compiled runs were; two digits below a second."""
    return f"{seconds:.0f}" if seconds >= 1 else f"{seconds:.2g}"


def report() -> None:
    """Every stored problem's section, from ``experiments/results/dngo_boundary_<problem>.json``."""
    for path in sorted(glob.glob(os.path.join(_common.RESULTS, PREFIX + "*.json"))):
        problem = os.path.basename(path)[len(PREFIX): -len(".json")]
        write_report(_common.load_results(os.path.basename(path), {}), problem)


def claims() -> list[dict]:
    """None: a diagnostic of where the suggestions go, not a test of a claim."""
    return []


def write_report(results: dict, problem: str) -> None:
    import numpy as np

    lines = [f"## DNGO vs GP: suggestions on the faces of the box ({problem})", "", _common.header(section_of(problem)),
             "Share of model-based suggestions with a coordinate on a face of the box (within 1e-6 of a bound),"
             " best value and distance (unit cube) from the best point to the nearest known minimiser; mean ±"
             " std over seeds, jbo defaults (the settings of `dngo_table1.py`). s / run: `ask-tell`, the wall time"
             " of one `jbo.minimize`; `compiled`, a seed's share of one `jbo.study` call, compilation apart.", "",
             "| method | path | seeds | evaluations | share of suggestions on a face | best value | distance to argmin |"
             " s / run | compile s |", "|---|---|---|---|---|---|---|---|---|"]
    groups = []
    for key, all_runs in sorted(results.items()):
        method, budget = key.split("/")
        for path, runs in _common.by_path(all_runs).items():
            groups.append((key if len(runs) == len(all_runs) else f"{key} ({path})", runs))
            rows = list(runs.values())

            def stat(field, fmt, rows=rows):
                v = np.array([r[field] for r in rows])
                return f"{v.mean():{fmt}} ± {v.std():{fmt}}"

            best = np.array([np.nanmin(r["values"]) for r in rows])
            t = _common.timing(_common.calls_of(runs))
            lines.append(f"| {method} | {path} | {len(rows)} | {budget} | {stat('face_share_model', '.2f')} |"
                         f" {best.mean():.4f} ± {best.std():.4f} | {stat('best_distance', '.3f')} |"
                         f" {_seconds(t['per_seed'])} | {_common.compile_text(t)} |")
    lines += ["", "Per seed (share on a face / best value):", ""]
    for name, runs in groups:
        cells = [f"{s}: {r['face_share_model']:.2f} / {np.nanmin(r['values']):.3f}" for s, r in sorted(
            runs.items(), key=lambda kv: int(kv[0]))]
        lines.append(f"- {name}: " + "; ".join(cells))
    _common.update_section(section_of(problem), "\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="hartmann6")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--methods", nargs="+", default=["gp", "dngo"])
    _common.add_path_arguments(parser)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    path = os.path.join(_common.RESULTS, f"{section_of(args.problem)}.json")
    results = _common.load_results(os.path.basename(path), {})
    todo = {}  # missing seeds -> the methods missing exactly those (they run together)
    for method in args.methods:
        done = results.get(f"{method}/{args.budget}", {})
        missing = tuple(s for s in range(args.seeds) if str(s) not in done)
        if missing:
            todo.setdefault(missing, []).append(method)
    for seeds, methods in todo.items():
        if args.path == "compiled":
            records = run_study(args.problem, methods, seeds, args.budget, args.chunk)
        else:
            records = ((m, s, run(args.problem, m, s, args.budget)) for m in methods for s in seeds)
        for method, seed, record in records:
            key = f"{method}/{args.budget}"
            print(f"{key} seed {seed} ({record['path']}): face share {record['face_share_model']:.2f}, best"
                  f" {min(record['values']):.4f} ({record['seconds']:.0f} s)", flush=True)
            results = _common.merge_result(path, [key, str(seed)], record)
    if todo:
        _common.record_provenance(section_of(args.problem))
    _common.regenerate()


if __name__ == "__main__":
    main()
