"""DNGO against Optuna's TPE at a small budget: six-hump camel, Styblinski-Tang-4 and Michalewicz-5, 40 evaluations;
TPE (Optuna's ``TPESampler``, its defaults) and random search run by :func:`suite.run_peer`.

    python experiments/dngo_vs_tpe.py [--seeds 10] [--problems ...] [--methods dngo tpe random ...] [--chunk N]
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import driver  # noqa: E402
from dngo_table1 import command_line  # noqa: E402

PEERS = {"tpe": "optuna-tpe", "random": "random"}  # method -> suite.run_peer's name
# Whole-box arms varying one choice each: stored, runners retired (their options: this file at commit 32d8999).
RETIRED = ("dngo-yeo-johnson", "dngo-rank", "dngo-yeo-johnson-ucb", "dngo-yeo-johnson-linear")
EXPERIMENT = driver.Experiment(
    name="dngo_vs_tpe", title="DNGO against TPE at a small budget",
    problems={"six_hump_camel": driver.Problem("six_hump_camel", budget=40),
              "styblinski_tang": driver.Problem("styblinski_tang", 4, 40),
              "michalewicz": driver.Problem("michalewicz", 5, 40)},
    arms={"dngo": {"model": "dngo"}, "dngo-paper": {"model": "dngo", **_common.PAPER_DNGO},
          "dngo-trust": {"model": "dngo", "output_warping": "none", "trust_region": True}},
    default_arms=("dngo",))


def run_peer(name: str, peer: str, seed: int) -> dict:
    """One run of TPE or random search on a problem (:func:`suite.run_peer`)."""
    import suite
    from jbo.benchmarks import get_problem

    declared, start = EXPERIMENT.problems[name], time.perf_counter()
    values = suite.run_peer(PEERS[peer], get_problem(declared.registry, declared.dim), declared.budget, seed)
    return {"values": values, "seconds": time.perf_counter() - start}


def main(argv=None):
    args = command_line(EXPERIMENT, argv, peers=PEERS)
    if args is None:
        return
    _common.record_provenance(EXPERIMENT.name, accumulates=True)
    arms = [m for m in args.arms if m in EXPERIMENT.arms]
    peers = [m for m in args.arms if m in PEERS]
    driver.run(EXPERIMENT, args.problems, arms, range(args.seeds), args.chunk, args.store)
    _common.run_grid(EXPERIMENT.results_file, args.problems, peers, args.seeds, run_peer, lambda record: "")
    _common.regenerate()


def _best(runs: dict) -> tuple[float, float, int]:
    """The runs' best values: mean, standard error and count."""
    return *_common.mean_se([min(r["values"]) for r in runs.values()]), len(runs)


def report() -> dict:
    """One row per problem, one column per method (the best in bold): 3 rows, not the driver's 25."""
    results = EXPERIMENT.results()
    methods = [m for m in (*EXPERIMENT.arms, *RETIRED, *PEERS) if any(m in cell for cell in results.values())]
    lines = [f"## {EXPERIMENT.title}", "", _common.header(EXPERIMENT.name),
             "Best value per run, mean ± standard error (seeds); lower is better; the optimum in brackets; 40"
             " evaluations. `dngo`: jbo's default (Yeo-Johnson warped targets, a trust region); `dngo-paper`: the"
             " default before it (standardised targets, the whole box); `dngo-trust`: the trust region alone; the other"
             " arms vary one choice on the whole box (runners retired: the first two commands ran them, before commit"
             " 281bdc7).", "",
             "| problem | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    for name, cell in results.items():
        stats = {m: _best(cell[m]) for m in methods if m in cell}
        top = min(mean for mean, _, _ in stats.values())
        texts = []
        for m in methods:
            text = "{:.3f} ± {:.3f} ({})".format(*stats[m]) if m in stats else "–"
            texts.append(f"**{text}**" if m in stats and stats[m][0] == top else text)
        _, space, optimum = EXPERIMENT.problems[name].build()
        lines.append(f"| {name} (d = {space.dim}) [{optimum:.3f}] | " + " | ".join(texts) + " |")
    return {EXPERIMENT.name: "\n".join(lines)} if results else {}


def claims() -> list[dict]:
    """Issue #28's bar: the default DNGO's mean best below TPE's on every problem (≥ 10 seeds each)."""
    pairs = {name: (_best(cell["dngo"]), _best(cell["tpe"])) for name, cell in EXPERIMENT.results().items()
             if "dngo" in cell and "tpe" in cell}
    if not pairs:
        return []
    ahead = [name for name, (d, t) in pairs.items() if d[0] < t[0]]
    seeds = min(min(d[2], t[2]) for d, t in pairs.values())
    held = len(ahead) == len(pairs) == len(EXPERIMENT.problems) and seeds >= 10
    figure = "; ".join(f"{name} {d[0]:.3f} ± {d[1]:.3f} vs {t[0]:.3f} ± {t[1]:.3f}" for name, (d, t) in pairs.items())
    return [_common.claim("jbo", f"DNGO vs TPE, {', '.join(pairs)}: mean best", "DNGO ahead on all",
                          f"ahead on {len(ahead)}/{len(pairs)}: {figure} ({seeds}+ seeds)", "yes" if held else "no",
                          EXPERIMENT.name)]


if __name__ == "__main__":
    main()
