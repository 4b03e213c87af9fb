"""Ablation of two DNGO defaults, both spelled out so that the runs do not depend on jbo's: gradient refinement of
the acquisition (``refine``) or the anchors alone, and the quadratic prior's curvature scale (``cN``).

    python experiments/dngo_ablation.py [--seeds 10] [--problems branin hartmann3 hartmann6] [--arms ...]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import driver  # noqa: E402
from dngo_table1 import convergence_figures, paired, verdict  # noqa: E402

VARIANTS = {f"{search}-c{scale}": dict(model="dngo", **_common.PAPER_DNGO, maximize={"num_steps": steps},
                                       curvature_scale=float(scale))
            for scale in (1, 10) for search, steps in (("refine", 100), ("anchors", 0))}
SWAP = {"refine": "anchors", "anchors": "refine", "c1": "c10", "c10": "c1"}  # a variant's neighbours


def default_variant() -> str:
    """The variant that jbo's current DNGO defaults amount to (``""``: none)."""
    from jbo import loop

    settings = loop.Settings(model="dngo")
    return next((name for name, o in VARIANTS.items() if o["maximize"]["num_steps"] == settings.maximize.num_steps
                 and o["curvature_scale"] == settings.model.curvature_scale), "")


EXPERIMENT = driver.Experiment(
    name="dngo_ablation", title="DNGO ablation: acquisition refinement and curvature scale of the quadratic prior",
    problems={"branin": driver.Problem("branin", budget=200), "hartmann3": driver.Problem("hartmann3", budget=100),
              "hartmann6": driver.Problem("hartmann6", budget=200)},
    arms=VARIANTS,
    about="`jbo.minimize(model=\"dngo\")` with both choices explicit: `refine` = 100 Adam steps from the best anchors,"
          " `anchors` = the best anchor; `cN` = horseshoe scale N on diag(Λ). Best value found over seeds 0 .. n-1.",
    columns={"worst seed": lambda runs, _: f"{driver.best_values(runs).max():.4f}"},
    notes=lambda results: [
        f"jbo's DNGO defaults are `{default_variant() or 'none of these'}`. A default holds on a problem when its mean"
        " best value is below the alternative's (the variant differing in that choice alone) or within one standard"
        " error of the difference: `yes` on every problem, `partly` on some, `no` on none."])
report, _ = driver.reporter(EXPERIMENT)


def figures() -> None:
    convergence_figures(EXPERIMENT, EXPERIMENT.results(), "DNGO, refinement × curvature scale")


def claims() -> list[dict]:
    """Each of jbo's two DNGO defaults against the variant differing in that choice alone (the section's rule)."""
    import numpy as np

    results, rows = EXPERIMENT.results(), []
    default = default_variant() or "anchors-c1"
    label = "jbo's default" if default_variant() else "not jbo's default now"
    search, scale = default.split("-")
    budgets = ", ".join(f"{p} {d.budget}" for p, d in EXPERIMENT.problems.items())
    for other, what in ((f"{SWAP[search]}-{scale}", "acquisition search"),
                        (f"{search}-{SWAP[scale]}", "curvature scale of the quadratic prior")):
        held, parts, counts = [], [], set()
        for problem, declared in EXPERIMENT.problems.items():
            a, b = map(driver.best_values, paired(results.get(problem, {}), (default, other), declared.budget))
            if len(a) > 1:
                held.append(bool(a.mean() <= b.mean() + np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))))
                parts.append(f"{problem}: {a.mean():.4f} vs {b.mean():.4f}")
                counts.add(len(a))
        figure = "; ".join(parts) + f" ({'/'.join(str(c) for c in sorted(counts))} seeds)" if parts else "–"
        rows.append(_common.claim("jbo", f"DNGO's {what}: `{default}` ({label}) no worse than `{other}` (mean best"
                                  f" value; evaluations: {budgets})", "–", figure, verdict(held), EXPERIMENT.name))
    return rows


if __name__ == "__main__":
    driver.main(EXPERIMENT)
