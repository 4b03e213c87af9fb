"""DNGO against Optuna's TPE at a small budget: six-hump camel, Styblinski-Tang-4 and Michalewicz-5.

Each problem in its own box (``jbo.benchmarks``, not shifted), ``--budget`` evaluations (default 40, the initial
design included), seeds ``0 .. --seeds-1``. jbo's arms (:data:`ARMS`: DNGO with its defaults and variants of it)
run together in one :func:`jbo.study` call per problem (``problem.evaluate`` is a JAX function); TPE is Optuna's
``TPESampler`` with its defaults and the run's seed, in this process, and random search
(:func:`suite.run_peer`). Results go to the resumable
``experiments/results/dngo_vs_tpe.json`` (``{problem: {method: {seed: record}}}``), from which the
``dngo_vs_tpe`` section and its claim are written.

    python experiments/dngo_vs_tpe.py [--seeds 10] [--budget 40] [--problems ...] [--methods dngo tpe]
    python experiments/dngo_vs_tpe.py --report-only
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import suite  # noqa: E402

SECTION = "dngo_vs_tpe"
RESULTS_FILE = "dngo_vs_tpe.json"
#: problem name -> dimension (``None``: the function's own).
PROBLEMS = {"six_hump_camel": None, "styblinski_tang": 4, "michalewicz": 5}
#: jbo arms: name -> options of ``jbo.study``. ``dngo`` is the default (Yeo-Johnson warped targets, a trust
#: region); ``dngo-paper`` the default before it (Snoek et al.'s standardised targets, the whole box), measured
#: as ``dngo`` until then; the others vary one choice of one of them.
WHOLE_BOX = {"trust_region": False}
ARMS = {
    "dngo": {"model": "dngo"},
    "dngo-paper": {"model": "dngo", **_common.PAPER_DNGO},
    "dngo-trust": {"model": "dngo", "output_warping": "none", "trust_region": True},
    "dngo-yeo-johnson": {"model": "dngo", "output_warping": "yeo-johnson", **WHOLE_BOX},
    "dngo-rank": {"model": "dngo", "output_warping": "rank", **WHOLE_BOX},
    "dngo-yeo-johnson-ucb": {"model": "dngo", "output_warping": "yeo-johnson", "acquisition": "ucb", **WHOLE_BOX},
    "dngo-yeo-johnson-linear": {"model": "dngo", "output_warping": "yeo-johnson", "quadratic_prior": False,
                                **WHOLE_BOX},
}
PEERS = ("tpe", "random")
PEER_NAMES = {"tpe": "optuna-tpe", "random": "random"}  # suite.run_peer's names
METHODS = tuple(ARMS) + PEERS


def problem_of(name: str):
    from jbo.benchmarks import get_problem

    dim = PROBLEMS[name]
    return get_problem(name) if dim is None else get_problem(name, dim=dim)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=list(PROBLEMS))
    parser.add_argument("--methods", nargs="+", default=["dngo", "tpe", "random"], choices=METHODS)
    _common.add_chunk_argument(parser)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    path = os.path.join(_common.RESULTS, RESULTS_FILE)
    _common.record_provenance(SECTION, accumulates=True)
    for name in args.problems:
        problem = problem_of(name)
        stored = _common.load_results(RESULTS_FILE, {}).get(name, {})
        missing = {m: [s for s in range(args.seeds) if str(s) not in stored.get(m, {})] for m in args.methods}
        arms = {m: ARMS[m] for m in args.methods if m in ARMS and missing[m]}
        for arm_seeds in sorted({tuple(missing[m]) for m in arms}):
            group = {m: ARMS[m] for m in arms if tuple(missing[m]) == arm_seeds}
            for arm, seeds, values, call in _common.run_arms(problem.evaluate, problem.space(), args.budget,
                                                             arm_seeds, group, args.chunk):
                records = _common.seed_records(seeds, values, call)
                _common.merge_results(path, [([name, arm, s], r) for s, r in records.items()])
                print(f"{name} {arm}: mean best {_mean_best(records):.3f} over {len(seeds)} seeds "
                      f"({call['seconds']:.0f} s, compile {call['compile_seconds']:.0f} s)", flush=True)
        for peer in (m for m in args.methods if m in PEERS):
            for seed in missing[peer]:
                start = time.perf_counter()
                values = suite.run_peer(PEER_NAMES[peer], problem, args.budget, seed)
                record = {"values": values, "seconds": time.perf_counter() - start}
                _common.merge_result(path, [name, peer, str(seed)], record)
            print(f"{name} {peer}: done", flush=True)
    _common.regenerate()


# ----------------------------------------------------------------------------------------------
# The report
# ----------------------------------------------------------------------------------------------
def _mean_best(runs: dict) -> float:
    import numpy as np

    return float(np.mean([min(r["values"]) for r in runs.values()]))


def _best(runs: dict) -> tuple[float, float, int]:
    mean, se = _common.mean_se([min(r["values"]) for r in runs.values()])
    return mean, se, len(runs)


def section(results: dict) -> str:
    methods = [m for m in METHODS if any(m in cell for cell in results.values())]
    lines = ["## DNGO against TPE at a small budget", "", _common.header(SECTION),
             "Best value per run (mean ± standard error over seeds; lower is better; the optimum in brackets). Each "
             "problem in its own box; budgets include the initial design. `dngo`: jbo's default (Yeo-Johnson warped "
             "targets, a trust region); `dngo-paper`: the default before it (standardised targets, the whole box, as "
             "Snoek et al.); `dngo-trust`: the trust region alone; the other arms vary one choice on the whole box.",
             "",
             "| problem | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    for name, cell in results.items():
        problem = problem_of(name)
        best = min(_best(cell[m])[0] for m in methods if m in cell)
        texts = []
        for m in methods:
            if m not in cell:
                texts.append("–")
                continue
            mean, se, n = _best(cell[m])
            budget = len(next(iter(cell[m].values()))["values"])
            text = f"{mean:.3f} ± {se:.3f} ({n} seeds, {budget} evals)"
            texts.append(f"**{text}**" if mean == best else text)
        lines.append(f"| {name} (d = {problem.dim}) [{problem.optimum:.3f}] | " + " | ".join(texts) + " |")
    return "\n".join(lines) + "\n"


def report() -> None:
    results = _common.load_results(RESULTS_FILE)
    if results:
        _common.update_section(SECTION, section(results))


def claims() -> list[dict]:
    """Issue #28's bar: the default DNGO's mean best below TPE's on every problem (≥ 10 seeds each)."""
    results = _common.load_results(RESULTS_FILE) or {}
    pairs = {name: (_best(cell["dngo"]), _best(cell["tpe"])) for name, cell in results.items()
             if "dngo" in cell and "tpe" in cell}
    if not pairs:
        return []
    ahead = [name for name, (d, t) in pairs.items() if d[0] < t[0]]
    enough = all(d[2] >= 10 and t[2] >= 10 for d, t in pairs.values())
    figure = "; ".join(f"{name} {d[0]:.3f} ± {d[1]:.3f} vs {t[0]:.3f} ± {t[1]:.3f}" for name, (d, t) in pairs.items())
    return [_common.claim("jbo", f"DNGO vs TPE, {', '.join(pairs)}: mean best", "DNGO ahead on all",
                          f"ahead on {len(ahead)}/{len(pairs)}: {figure} "
                          f"({min(min(d[2], t[2]) for d, t in pairs.values())}+ seeds)",
                          "yes" if len(ahead) == len(pairs) == len(PROBLEMS) and enough else "no", SECTION)]


if __name__ == "__main__":
    main()
