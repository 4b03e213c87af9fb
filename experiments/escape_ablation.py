"""Ablation of jbo's escape rule (:mod:`jbo.escape`) on problems it was not designed on.

The rule was developed on Hartmann6 (issue #2's trapping, BENCHMARKS.md core_quality). This script
measures it elsewhere: jbo's GP defaults (Matérn-5/2 ARD, slice sampling, log-EI) with the rule on and
off (the default), same seeds, on multimodal and unimodal problems of several dimensions:

* ``hartmann3`` (3-d, 4 local minima), 50 evaluations;
* ``levy4`` (Levy, 4-d, many local minima), 80 evaluations;
* ``alpine4`` (Alpine01, 4-d, many local minima), 80 evaluations;
* ``rosenbrock4`` (Rosenbrock, 4-d, one curved valley: where escaping can only cost), 80 evaluations.

A problem's variants run their missing seeds in one ``jbo.study`` (``--path compiled``, the default;
``--chunk N`` splits the seeds over calls of N; the number of escaped suggestions comes from the study's
``info["escape"]``) or, with ``--path ask-tell``, one ``jbo.minimize`` per seed (escapes counted by a
callback). Results go to a resumable JSON (finished (problem, variant, seed) triples are skipped; several
processes can share it), from which BENCHMARKS.md is regenerated (``experiments/report.py``): mean best ±
standard error, median, the number of seeds where each variant is better, and how many suggestions escaped.

    python experiments/escape_ablation.py [--seeds 10] [--problems ...] [--variants on off]
        [--path compiled|ask-tell] [--chunk N] [--results-dir DIR] [--report-only]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

PROBLEMS = {  # name: (registry name, dimension, budget)
    "hartmann3": ("hartmann3", None, 50),
    "levy4": ("levy", 4, 80),
    "alpine4": ("alpine01", 4, 80),
    "rosenbrock4": ("rosenbrock", 4, 80),
}
VARIANTS = {"on": {"escape": True}, "off": {"escape": False}}


def out() -> str:
    """The results JSON (under ``--results-dir`` when given)."""
    return os.path.join(_common.RESULTS, "escape_ablation.json")


def run(problem: str, variant: str, seed: int) -> dict:
    """One ask/tell run (``--path ask-tell``): values, escaped suggestions, seconds."""
    import jbo
    from jbo.benchmarks import get_problem

    name, dim, budget = PROBLEMS[problem]
    p = get_problem(name, dim)
    escaped = []
    start = time.perf_counter()
    result = jbo.minimize(p.evaluate, p.space(), budget=budget, seed=seed, **VARIANTS[variant],
                          callback=lambda opt: escaped.append(bool(opt.last_info.get("escape"))))
    return {"values": [float(v) for v in result.values], "escaped": int(sum(escaped)),
            "seconds": time.perf_counter() - start, "path": "ask-tell"}


def run_compiled(problems, variants, seeds, chunk: int | None = None) -> dict:
    """Every missing ``(problem, variant, seed)`` through :func:`jbo.study`, one per problem (and per chunk
    of seeds): per-seed records as :func:`_common.seed_records` makes them, plus ``escaped``. The call's
    seconds are shared among the arms as :func:`_common.run_arms` shares them."""

    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem

    for variant in variants:
        _common.check_compiled(VARIANTS[variant])
    path = out()
    results = _common.read_json(path, {})
    for problem in problems:
        name, dim, budget = PROBLEMS[problem]
        p = get_problem(name, dim)
        for missing, names in _common.missing_seeds(results, problem, variants, seeds).items():
            size = max(1, int(chunk or len(missing)))
            for i in range(0, len(missing), size):
                part = list(missing[i:i + size])
                start = time.perf_counter()
                result = jbo.study(p.evaluate, p.space(), budget, part, {v: VARIANTS[v] for v in names})
                wall = time.perf_counter() - start
                run_seconds = result.step_seconds.sum(axis=(1, 2))
                share = run_seconds / max(float(run_seconds.sum()), 1e-12)
                escape = result.info.get("escape")
                items = []
                for a, variant in enumerate(result.arms):
                    compile_seconds = sum(s / len(n) for n, s in result.programs if variant in n)
                    call = {"path": "compiled", "seeds": part, "arms": list(result.arms),
                            "seconds": float(share[a] * (wall - result.compile_seconds) + compile_seconds),
                            "compile_seconds": float(compile_seconds)}
                    values = [[float(v) for v in row] for row in result.values[a]]
                    records = _common.seed_records(part, values, call)
                    for s, seed in enumerate(part):
                        escaped = 0 if escape is None else int(np.nansum(escape[a, s]))
                        records[str(seed)]["escaped"] = escaped
                    items += [([problem, variant, seed], r) for seed, r in records.items()]
                    best = np.nanmin(np.asarray(values, float), axis=1)
                    print(f"{problem} {variant} seeds {part}: best mean {best.mean():.5g}"
                          f" ({call['seconds']:.0f} s, compile {compile_seconds:.0f} s)", flush=True)
                results = _common.merge_results(path, items)
    return results


def _paired(results: dict) -> list[dict]:
    """Per problem and path, the seeds both variants ran: best values, escapes and timing of each variant."""
    import numpy as np

    from jbo.benchmarks import get_problem

    rows = []
    for problem, (name, dim, budget) in PROBLEMS.items():
        by_variant = {v: _common.by_path(results.get(problem, {}).get(v, {})) for v in VARIANTS}
        for path in dict.fromkeys(p for v in VARIANTS for p in by_variant[v]):
            runs = {v: by_variant[v].get(path, {}) for v in VARIANTS}
            seeds = sorted(set.intersection(*(set(r) for r in runs.values())), key=int)
            if not seeds:
                continue
            rows.append(dict(problem=problem, budget=budget, path=path, seeds=seeds,
                             optimum=get_problem(name, dim).optimum,
                             best={v: np.array([np.nanmin(runs[v][s]["values"]) for s in seeds]) for v in VARIANTS},
                             escaped={v: np.mean([runs[v][s]["escaped"] for s in seeds]) for v in VARIANTS},
                             timing={v: _common.timing(_common.calls_of({s: runs[v][s] for s in seeds}))
                                     for v in VARIANTS}))
    return rows


def _verdict(row: dict) -> str:
    """``costs`` when the rule's mean best is higher and more seeds are better without it, ``helps`` the
    other way round, ``mixed`` otherwise."""
    import numpy as np

    on, off = row["best"]["on"], row["best"]["off"]
    on_better, off_better = int(np.sum(on < off - 1e-6)), int(np.sum(off < on - 1e-6))
    if on.mean() > off.mean() and off_better > on_better:
        return "costs"
    if on.mean() < off.mean() and on_better > off_better:
        return "helps"
    return "mixed"


def claims() -> list[dict]:
    """None: an ablation of an opt-in rule (its verdict is a line of the section's notes)."""
    return []


def report() -> None:
    write_report(_common.load_results("escape_ablation.json", {}))


def write_report(results: dict) -> None:
    import numpy as np

    lines = ["## Escape rule ablation (jbo.escape on problems it was not developed on)", "",
             _common.header("escape_ablation"),
             "jbo's GP defaults with the escape rule on and off (the default), same seeds; budgets include the initial "
             "design. Best value found: mean ± standard error and median over seeds; `better` counts the seeds where "
             "this variant's best is lower by more than 1e-6; `escapes / run` is the mean number of suggestions "
             "made by the rule. Path: `compiled` rows ran in one `jbo.study` (s / seed: wall time less compilation"
             " over the seeds), `ask-tell` rows `jbo.minimize` seed by seed (s / seed: one whole run).", "",
             "| problem (optimum) | evaluations | variant | path | seeds | best value (mean ± se) | median | better | "
             "escapes / run | s / seed | compile s |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = _paired(results)
    for row in rows:
        for variant in VARIANTS:
            b, other = row["best"][variant], row["best"]["off" if variant == "on" else "on"]
            mean, se = _common.mean_se(b)
            t = row["timing"][variant]
            lines.append(f"| {row['problem']} ({row['optimum']:.4g}) | {row['budget']} |"
                         f" {variant}{' (default)' if variant == 'off' else ''} | {row['path']} | {len(b)} |"
                         f" {mean:.4g} ± {se:.2g} | {np.median(b):.4g} | {int(np.sum(b < other - 1e-6))} |"
                         f" {row['escaped'][variant]:.1f} | {_common.seconds_text(t['per_seed'])} |"
                         f" {_common.compile_text(t)} |")
    if rows:
        verdicts = {}
        for row in rows:
            verdicts.setdefault(_verdict(row), []).append(row["problem"] + ("" if row["path"] == rows[0]["path"]
                                                                           else f" ({row['path']})"))
        text = "; ".join(f"{kind} on {', '.join(names)}" for kind, names in verdicts.items())
        lines += ["", f"Verdict per problem (the rule `costs` when its mean best is higher and more seeds are better"
                  f" without it, `helps` the other way round, else `mixed`): {text}."
                  + (" This is why `escape` is opt-in." if "costs" in verdicts else "")]
    _common.update_section("escape_ablation", "\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _common.add_grid_arguments(parser, VARIANTS, problems=PROBLEMS)
    _common.add_path_arguments(parser)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    if args.path == "compiled":
        run_compiled(args.problems, args.variants, range(args.seeds), args.chunk)
    else:
        _common.run_grid(out(), args.problems, args.variants, args.seeds, run,
                         lambda record: f", {record['escaped']} escapes")
    _common.record_provenance("escape_ablation")
    _common.regenerate()


if __name__ == "__main__":
    main()
