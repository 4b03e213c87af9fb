"""Ablation of jbo's escape rule (:mod:`jbo.escape`) on problems it was not developed on (it was on Hartmann6).

jbo's GP defaults with the rule on and off (the default), same seeds: Hartmann3 (4 local minima), Levy-4 and
Alpine01-4 (many), Rosenbrock-4 (one curved valley, where escaping can only cost). The number of escaped
suggestions of a run is read from the study's ``info["escape"]``.

    python experiments/escape_ablation.py [--seeds 10] [--problems ...] [--variants on off] [--chunk N]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver  # noqa: E402


def _escaped(result, arm: int, seed: int) -> dict:
    import numpy as np

    escape = result.info.get("escape")
    return {"escaped": 0 if escape is None else int(np.nansum(escape[arm, seed]))}


def _better(runs, siblings) -> str:
    """Seeds on which this arm's best is lower than the other arm's by more than 1e-6."""
    (other,) = [r for r in siblings.values() if r is not runs] or [None]
    if other is None:
        return "–"
    seeds = sorted(set(runs) & set(other), key=int)
    return str(int((driver.best_values(runs, seeds) < driver.best_values(other, seeds) - 1e-6).sum()))


def verdicts(results: dict) -> dict:
    """``{problem: verdict}``: the rule ``costs`` when its mean best is higher and more seeds are better without
    it, ``helps`` the other way round, else ``mixed`` (on the seeds both arms ran)."""
    found = {}
    for problem, arms in results.items():
        seeds = sorted(set(arms.get("on", {})) & set(arms.get("off", {})), key=int)
        if seeds:
            on, off = driver.best_values(arms["on"], seeds), driver.best_values(arms["off"], seeds)
            on_better, off_better = int((on < off - 1e-6).sum()), int((off < on - 1e-6).sum())
            found[problem] = ("costs" if on.mean() > off.mean() and off_better > on_better else
                              "helps" if on.mean() < off.mean() and on_better > off_better else "mixed")
    return found


def _notes(results: dict) -> list[str]:
    grouped = {}
    for problem, kind in verdicts(results).items():
        grouped.setdefault(kind, []).append(problem)
    if not grouped:
        return []
    text = "; ".join(f"{kind} on {', '.join(names)}" for kind, names in grouped.items())
    return [f"Verdict per problem (the rule `costs` when its mean best is higher and more seeds are better without"
            f" it, `helps` the other way round, else `mixed`): {text}."
            + (" This is why `escape` is opt-in." if "costs" in grouped else "")]


EXPERIMENT = driver.Experiment(
    name="escape_ablation",
    title="Escape rule ablation (jbo.escape on problems it was not developed on)",
    problems={"hartmann3": driver.Problem("hartmann3", budget=50), "levy4": driver.Problem("levy", 4, 80),
              "alpine4": driver.Problem("alpine01", 4, 80), "rosenbrock4": driver.Problem("rosenbrock", 4, 80)},
    arms={"on": {"escape": True}, "off": {"escape": False}},
    about="jbo's GP defaults with the escape rule on and off (the default), same seeds. `better`: the seeds where"
          " this arm's best is lower than the other's by more than 1e-6; `escapes / run`: suggestions made by the rule.",
    per_seed=_escaped,
    columns={"better": _better,
             "escapes / run": lambda runs, _: f"{sum(r['escaped'] for r in runs.values()) / len(runs):.1f}"},
    notes=_notes,
)
report, claims = driver.reporter(EXPERIMENT)

if __name__ == "__main__":
    driver.main(EXPERIMENT)
