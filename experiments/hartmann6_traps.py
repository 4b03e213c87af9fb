"""How often a GP run on Hartmann6 ends in the local minimum at −3.2031 (issue #2's bar, mean best ≤ −3.31 over 10
seeds, holds only if at most one seed does), for jbo's defaults and settings a user can change, on the same seeds.

    python experiments/hartmann6_traps.py [--seeds 30] [--arms ...] [--chunk N]
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import driver  # noqa: E402

TRAP = -3.25  # above this a run has not reached the global minimum's basin (−3.2031 is the next minimum's value)
ARMS = {"today's defaults": {}, "elliptical": {"inference": "elliptical"}, "ucb_beta=3": {"ucb_beta": 3.0},
        "ucb_beta=4": {"ucb_beta": 4.0}, "no trust region": {"trust_region": False},
        "no trust region, ucb_beta=3": {"trust_region": False, "ucb_beta": 3.0}, "today's, n_init=12": {"n_init": 12},
        "today's, n_init=20": {"n_init": 20}, "today's, n_init=30": {"n_init": 30},
        # jbo's defaults once each run's initial design is a Sobol set scrambled for it (jbo.design.scrambled); the
        # arms above ran when every run's design was one scrambled set shifted (the same pattern in every run)
        "per-run design": {}}
# Issue #57: today's defaults with what might let a run escape the second basin (Spearmint's, which escaped it in
# Snoek et al. 2015's Table 1, warps its inputs and maximises EI over the whole box).
ESCAPES = {"today's, input warping": {"warp": True}, "today's, EI": {"acquisition": "ei"},
           "today's, 4x anchors": {"maximize": {"num_anchors": 4096, "num_local": 1024}},
           "Spearmint's choices": {"warp": True, "acquisition": "ei", "trust_region": False, "output_warping": "none"}}
# The arms run at 7081929 by the ask/tell loop with the defaults of then (the section's note); runner retired.
EARLIER = ("defaults", "map", "n_init=2", "n_init=3", "n_init=14", "warp", "ucb", "escape")


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a binomial proportion ``k / n``."""
    p, z2 = k / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_probability(p: float, seeds: int = 10, at_most: int = 1) -> float:
    """Chance that at most ``at_most`` of ``seeds`` independent runs are trapped, each with probability ``p`` (the
    bar's condition: at most one of 10)."""
    return sum(math.comb(seeds, k) * p**k * (1 - p) ** (seeds - k) for k in range(at_most + 1))


def _trapped(runs: dict) -> list[str]:
    return [s for s in sorted(runs, key=int) if driver.best_values(runs, [s])[0] > TRAP]


def _first_ten(runs: dict) -> list[float]:
    return list(driver.best_values(runs, [s for s in sorted(runs, key=int) if int(s) < 10]))


def _rate(runs, _) -> str:
    k, n = len(_trapped(runs)), len(runs)
    low, high = wilson(k, n)
    return f"{k / n:.2f} ({low:.2f}–{high:.2f})"


def _notes(results: dict) -> list[str]:
    rows = [(arm, r) for arm, by_seed in results.get("hartmann6", {}).items() for r in _common.by_path(by_seed).values()]
    k, n = sum(len(_trapped(r)) for _, r in rows), sum(len(r) for _, r in rows)
    if not n:
        return []
    rates = [len(_trapped(r)) / len(r) for _, r in rows]
    intervals = [wilson(len(_trapped(r)), len(r)) for _, r in rows]
    overlap = max(a for a, _ in intervals) <= min(b for _, b in intervals)
    first = [(arm, r, sum(_first_ten(r)) / len(_first_ten(r))) for arm, r in rows if _first_ten(r)]
    lucky = ", ".join(f"`{arm}` {mean:.4f} ({len(_trapped(r))}/{len(r)} trapped)" for arm, r, mean in first
                      if mean <= -3.31)
    low, high = wilson(k, n)
    lines = [f"All variants pooled: {k} of {n} runs trapped, rate {k / n:.2f} ({low:.2f}–{high:.2f}); at that rate 10"
             f" seeds meet the bar with probability {pass_probability(k / n):.2f}."
             f" Every variant traps {100 * min(rates):.0f}–{100 * max(rates):.0f} % of its seeds, with"
             f" {'overlapping' if overlap else 'not all overlapping'} intervals: no setting here changes the rate"
             " measurably."]
    if lucky:
        lines.append(f"Met on seeds 0–9 (the issue's measure) but trapped as shown over all seeds: {lucky}; passing 10"
                     " seeds is then the draw of the seeds, not a better method, so none is adopted.")
    return lines


EXPERIMENT = driver.Experiment(
    name="hartmann6_traps",
    title="Hartmann6 trap rate: GP runs ending in the −3.2031 local minimum (100 evaluations; 200 where named)",
    # hartmann6@200: Snoek et al. 2015's Table 1 budget, where Spearmint's GP reached -3.3166 +- 0.02 over 10 runs
    problems={"hartmann6": driver.Problem("hartmann6", budget=100),
              "hartmann6@200": driver.Problem("hartmann6", budget=200)},
    arms={**ARMS, **ESCAPES},
    default_arms=tuple(ARMS),
    about=f"Each arm: jbo's GP defaults with one setting changed, same seeds. A run is trapped when its best is above"
          f" {TRAP}: it has not reached the global minimum's basin. `P(pass)`: the chance that 10 independent seeds"
          " have at most one trapped run at the measured rate, i.e. that issue #2's bar can be met. The first table ran"
          " with the defaults of its commit (`per-run design`: each run's initial design scrambled for it, the others"
          " one shifted set for every run); the second with those defaults and what might escape the trap (input"
          " warping, EI, more anchors, Spearmint's choices); the last (runner retired) with the defaults of 7081929"
          " (see the note).",
    seeds=30,
    columns={"trapped": lambda runs, _: str(len(_trapped(runs))), "trap rate (95 % CI)": _rate,
             "P(pass)": lambda runs, _: f"{pass_probability(len(_trapped(runs)) / len(runs)):.2f}",
             "seeds 0–9": lambda runs, _: (f"{sum(_first_ten(runs)) / len(_first_ten(runs)):.4f}"
                                          f" ({len(_first_ten(runs))})" if _first_ten(runs) else "–"),
             "trapped seeds": lambda runs, _: ", ".join(_trapped(runs)) or "–"},
    notes=_notes,
)
claims = driver.reporter(EXPERIMENT)[1]


def report() -> dict:
    """The driver's section, one table per group of arms: today's, the escapes, the earlier defaults'."""
    results = EXPERIMENT.results()
    today, *others = (driver.table(dataclasses.replace(EXPERIMENT, arms=arms), results)
                      for arms in (ARMS, ESCAPES, dict.fromkeys(EARLIER)))
    tables = "\n\n".join("\n".join(t) for t in (today, *others) if len(t) > 2)
    section = driver.render(dataclasses.replace(EXPERIMENT, arms=ARMS), results)
    return {EXPERIMENT.name: section.replace("\n".join(today), tables)}


if __name__ == "__main__":
    driver.main(EXPERIMENT)
