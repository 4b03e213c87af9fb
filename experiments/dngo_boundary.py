"""Where DNGO's and the GP's suggestions go on Hartmann6: a diagnostic of DNGO's stalls in ``dngo_table1``.

Runner retired: the stored runs (``dngo_boundary_hartmann6.json``, keys ``"arm/budget"``) were made at commit
537ab0e with the defaults of then; they still render. It tests no claim.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver  # noqa: E402


def _spread(field: str, fmt: str):
    """A table column: a stored measure's mean ± std over seeds."""

    def cell(runs: dict, _) -> str:
        import numpy as np

        v = np.array([r[field] for r in runs.values()])
        return f"{v.mean():{fmt}} ± {v.std():{fmt}}"

    return cell


EXPERIMENT = driver.Experiment(
    name="dngo_boundary_hartmann6", title="DNGO vs GP: suggestions on the faces of the box (hartmann6)",
    problems={"hartmann6": driver.Problem("hartmann6", budget=60)}, arms={"gp": {}, "dngo": {}},
    about="Share of model-based suggestions with a coordinate on a face of the box (within 1e-6 of a bound) and"
          " distance (unit cube) from the best point to the nearest known minimiser, mean ± std over seeds."
          " Runner retired: the runs were made at commit 537ab0e.",
    columns={"share on a face": _spread("face_share_model", ".2f"),
             "distance to argmin": _spread("best_distance", ".3f")})


def report() -> dict:
    runs = {key.split("/")[0]: records for key, records in EXPERIMENT.results().items()}
    return {EXPERIMENT.name: driver.render(EXPERIMENT, {"hartmann6": runs})}


def claims() -> list[dict]:
    return []
