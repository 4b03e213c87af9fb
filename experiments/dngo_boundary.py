"""Where do DNGO's and the GP's suggestions go? A diagnostic of DNGO's Hartmann6 stalls in ``dngo_table1``.

A Sobol design or a GP rarely puts a point exactly on a face of the box; a model whose mean extrapolates beyond the
data pushes the acquisition there. The first runs (``dngo_boundary_<problem>.json``, keys ``"method/budget"``) keep
their sections; new runs go through the driver (section ``dngo_boundary``). A diagnostic: it tests no claim.

    python experiments/dngo_boundary.py [--seeds 10] [--arms gp dngo] [--chunk N]
"""

import dataclasses
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import driver  # noqa: E402

PREFIX = "dngo_boundary_"


def measure(result, arm: int, seed: int) -> dict:
    """A run's shares of model-based and initial points on a face, and its best point's distance to an argmin."""
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem

    (declared,) = EXPERIMENT.problems.values()  # per_seed is not told the problem: the experiment declares one
    problem = get_problem(declared.registry, declared.dim)
    lo, hi = problem.bounds[:, 0], problem.bounds[:, 1]
    configs = problem.space().decode_many(result.x[arm, seed])
    unit = (np.array([[c[n] for n in problem.names] for c in configs], float) - lo) / (hi - lo)
    on_face, n_init = np.any((unit < 1e-6) | (unit > 1 - 1e-6), axis=1), jbo.loop.Settings().initial_size(problem.dim)
    argmins = (np.atleast_2d(problem.argmins) - lo) / (hi - lo)
    best = unit[np.nanargmin(result.values[arm, seed])]
    return {"face_share_model": float(on_face[n_init:].mean()), "face_share_design": float(on_face[:n_init].mean()),
            "best_distance": float(np.linalg.norm(argmins - best, axis=1).min())}


def _spread(field: str, fmt: str):
    """A table column: a measure's mean ± std over seeds."""

    def cell(runs: dict, _) -> str:
        import numpy as np

        v = np.array([r[field] for r in runs.values()])
        return f"{v.mean():{fmt}} ± {v.std():{fmt}}"

    return cell


EXPERIMENT = driver.Experiment(
    name="dngo_boundary", title="DNGO vs GP: suggestions on the faces of the box",
    problems={"hartmann6": driver.Problem("hartmann6", budget=60)},
    arms={"gp": {"model": "gp"}, "dngo": {"model": "dngo"}},
    about="Share of model-based suggestions with a coordinate on a face of the box (within 1e-6 of a bound) and"
          " distance (unit cube) from the best point to the nearest known minimiser, mean ± std over seeds.",
    per_seed=measure, columns={"share on a face": _spread("face_share_model", ".2f"),
                               "distance to argmin": _spread("best_distance", ".3f")})


def report() -> dict:
    """The first runs' sections (``dngo_boundary_<problem>``), and the driver's once it has runs."""
    sections = {}
    for path in sorted(glob.glob(os.path.join(_common.RESULTS, PREFIX + "*.json"))):
        problem = os.path.basename(path)[len(PREFIX):-len(".json")]
        runs = {key.split("/")[0]: records for key, records in _common.read_json(path).items()}
        first = dataclasses.replace(EXPERIMENT, name=PREFIX + problem, title=f"{EXPERIMENT.title} ({problem})",
                                    problems={problem: driver.Problem(problem, budget=60)})
        sections[first.name] = driver.render(first, {problem: runs})
    if EXPERIMENT.results():
        sections[EXPERIMENT.name] = driver.render(EXPERIMENT, EXPERIMENT.results())
    return sections


def claims() -> list[dict]:
    return []


if __name__ == "__main__":
    driver.main(EXPERIMENT)
