"""How often does a GP run end in Hartmann6's local minimum (−3.2031), and does any setting change that?

Issue #2's Hartmann6 bar (mean best ≤ −3.31 over 10 seeds at 100 evaluations) is decided by how many of
the 10 seeds stop in the local minimum at −3.2031 (bump 4 of the function, nearly flat along x3 and x5,
against −3.3224 at the global one): at most one may. This script measures that trap rate for jbo's
defaults and for variants of the settings a user can change, on the same seeds, and reports

* the seeds trapped (best ≥ ``TRAP``) and the rate with its 95 % Wilson interval,
* mean best ± standard error over all seeds and over seeds 0–9 (the issue's measure),
* the probability that 10 independent seeds meet the bar, given the measured rate
  (at most one trapped seed: ``(1 - p)^10 + 10 p (1 - p)^9``, the others assumed at the optimum).

The variants' missing seeds run in one ``jbo.study`` (``--path compiled``, the default; variants that
differ only in values share a program; ``--chunk N`` splits the seeds over calls of N) or, with ``--path
ask-tell``, one ``jbo.minimize`` per seed as before; the table has a row per (variant, path) and says
which. Results go to a resumable JSON (finished seeds are skipped, all seeds of a call are stored at
once; several processes can share it), from which BENCHMARKS.md is regenerated (``experiments/report.py``;
``--results-dir DIR``: both under DIR instead; ``--report-only``: only the regeneration).

    python experiments/hartmann6_traps.py [--seeds 30] [--variants ...] [--path compiled|ask-tell]
        [--chunk N] [--results-dir DIR] [--report-only]
"""

from __future__ import annotations

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

BUDGET = 100
TRAP = -3.25  # above this a run has not reached the global minimum's basin (−3.2031 is the next minimum's value)
VARIANTS = {  # name: jbo.minimize options (all else the defaults)
    "today's defaults": {},
    "defaults": {},
    "map": {"inference": "map"},
    "n_init=2": {"n_init": 2},
    "n_init=3": {"n_init": 3},
    "n_init=14": {"n_init": 14},
    "warp": {"warp": True},
    "ucb": {"acquisition": "ucb"},
    "escape": {"escape": True},
    "elliptical": {"inference": "elliptical"},
    "ucb_beta=3": {"ucb_beta": 3.0},
    "ucb_beta=4": {"ucb_beta": 4.0},
    "no trust region": {"trust_region": False},
    "no trust region, ucb_beta=3": {"trust_region": False, "ucb_beta": 3.0},
    "today's, n_init=12": {"n_init": 12},
    "today's, n_init=20": {"n_init": 20},
    "today's, n_init=30": {"n_init": 30},
}


def out() -> str:
    """The results JSON (under ``--results-dir`` when given)."""
    return os.path.join(_common.RESULTS, "hartmann6_traps.json")


def run_calls(path: str, chunk: int | None):
    """``(problem, variant, seeds) -> (seeds, values, call) per call`` on ``path`` (:func:`_common.run_seeds`)."""

    def calls(problem: str, variant: str, seeds):
        from jbo.benchmarks import get_problem

        p = get_problem(problem)
        return _common.run_seeds(p.evaluate, p.space(), BUDGET, seeds, path, chunk, **VARIANTS[variant])

    return calls


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a binomial proportion ``k / n``."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_probability(p: float, seeds: int = 10) -> float:
    """Chance that at most one of ``seeds`` independent runs is trapped (the bar's condition)."""
    return (1 - p) ** seeds + seeds * p * (1 - p) ** (seeds - 1)


def setup_of(problem: str, variants):
    """``(fn, space, budget, {variant: options})`` of one :func:`jbo.study` over ``variants``
    (:func:`_common.run_study_grid`)."""
    from jbo.benchmarks import get_problem

    p = get_problem(problem)
    return p.evaluate, p.space(), BUDGET, {v: VARIANTS[v] for v in variants}


def claims() -> list[dict]:
    """None: the section explains why core_quality's Hartmann6 bar is not met (its verdict is a claim there)."""
    return []


def report() -> None:
    write_report(_common.load_results("hartmann6_traps.json", {}))


def _rows(results: dict) -> list[dict]:
    """One dict per (variant, path) of the stored runs: seeds, best values, trapped seeds and timing."""
    import numpy as np

    runs = results.get("hartmann6", {})
    rows = []
    for variant, options in VARIANTS.items():
        for path, by_seed in _common.by_path(runs.get(variant, {})).items():
            seeds = sorted(by_seed, key=int)
            best = np.array([np.nanmin(by_seed[s]["values"]) for s in seeds])
            rows.append(dict(variant=variant, options=options, path=path, seeds=seeds, best=best,
                             trapped=[s for s, b in zip(seeds, best) if b > TRAP],
                             first=[b for s, b in zip(seeds, best) if int(s) < 10],
                             timing=_common.timing(_common.calls_of(by_seed))))
    return rows


def _row(r: dict) -> str:
    """One table row of :func:`_rows`' dict."""
    import numpy as np

    best, t = r["best"], r["timing"]
    k, n = len(r["trapped"]), len(r["seeds"])
    lo, hi = wilson(k, n)
    mean, se = _common.mean_se(best)
    first_text = f"{np.mean(r['first']):.4f} ({len(r['first'])})" if r["first"] else "–"
    return (f"| {r['variant']} | `{r['options'] or '{}'}` | {r['path']} | {n} | {k} |"
            f" {k / n:.2f} ({lo:.2f}–{hi:.2f}) | {pass_probability(k / n):.2f} | {mean:.4f} ± {se:.4f} |"
            f" {first_text} | {', '.join(r['trapped']) or '–'} | {_common.seconds_text(t['per_seed'])} |"
            f" {_common.compile_text(t)} |")


def write_report(results: dict) -> None:
    import numpy as np

    lines = ["## Hartmann6 trap rate: GP runs ending in the −3.2031 local minimum (100 evaluations)", "",
             _common.header("hartmann6_traps"),
             f"Each row is jbo's GP defaults with one setting changed, on the same seeds; budget {BUDGET} evaluations "
             f"including the initial design. A run is trapped when its best value is above {TRAP}: it has not reached "
             "the global minimum's basin (optimum −3.32237; the local minimum next to it in value is −3.2031). `P(pass)` "
             "is the chance that 10 independent seeds have at most one trapped run at the measured rate, i.e. that "
             "issue #2's bar (mean ≤ −3.31) can be met. Path: `compiled` rows ran in one `jbo.study` (or a few; s / seed:"
             " wall time less compilation over the seeds, compile time apart), `ask-tell` rows `jbo.minimize` seed by"
             " seed (s / seed: one run, the first seed paying for compilation, if any). The first table ran with"
             " today's defaults (`compiled`), the second with the defaults of its date (see the note above).", ""]
    rows = _rows(results)
    for table in ([r for r in rows if r["path"] == "compiled"], [r for r in rows if r["path"] != "compiled"]):
        if not table:
            continue
        lines += ([""] if lines[-1] else []) + [
            "| variant | options | path | seeds | trapped | trap rate (95 % CI) | P(pass) | mean best ± se"
            " | seeds 0–9 | trapped seeds | s / seed | compile s |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        lines += [_row(r) for r in table]
    total_k, total_n = sum(len(r["trapped"]) for r in rows), sum(len(r["seeds"]) for r in rows)
    total_k, total_n = sum(len(r["trapped"]) for r in rows), sum(len(r["seeds"]) for r in rows)
    if total_n:
        p = total_k / total_n
        lo, hi = wilson(total_k, total_n)
        lines += ["", f"All variants pooled: {total_k} of {total_n} runs trapped, rate {p:.2f} ({lo:.2f}–{hi:.2f}); "
                  f"at that rate 10 seeds meet the bar with probability {pass_probability(p):.2f}."]
        rates = [len(r["trapped"]) / len(r["seeds"]) for r in rows]
        intervals = [wilson(len(r["trapped"]), len(r["seeds"])) for r in rows]
        overlap = max(lo for lo, _ in intervals) <= min(hi for _, hi in intervals)
        lines += ["", f"Every variant traps {100 * min(rates):.0f}–{100 * max(rates):.0f} % of its seeds, with"
                  f" {'overlapping' if overlap else 'not all overlapping'} intervals: no setting here changes the"
                  " rate measurably."]
        lucky = [r for r in rows if r["first"] and np.mean(r["first"]) <= -3.31]
        if lucky:
            lines += ["", "Met on seeds 0–9 (the issue's measure) but trapped as shown over all seeds: " + ", ".join(
                f"`{r['variant']}` {np.mean(r['first']):.4f} ({len(r['trapped'])}/{len(r['seeds'])} trapped)"
                for r in lucky) + "; passing 10 seeds is then the draw of the seeds, not a better method, so none"
                " is adopted."]
    _common.update_section("hartmann6_traps", "\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _common.add_grid_arguments(parser, VARIANTS, seeds=30)
    _common.add_path_arguments(parser)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    if args.path == "compiled":
        for variant in args.variants:  # refuse before running anything
            _common.check_compiled(VARIANTS[variant])
        _common.run_study_grid(out(), ["hartmann6"], args.variants, range(args.seeds), setup_of, args.chunk)
    else:
        _common.run_grid_calls(out(), ["hartmann6"], args.variants, range(args.seeds), run_calls(args.path, args.chunk))
    _common.record_provenance("hartmann6_traps", accumulates=True)
    _common.regenerate()


if __name__ == "__main__":
    main()
