"""The suite's summary rows (experiments/suite.py) count a peer only where it ran every function and seed."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "experiments"))


def _runs(best_values, optimum=0.0):
    return {str(seed): {"values": [10.0, best], "optimum": optimum, "seconds": 0.1}
            for seed, best in enumerate(best_values)}


def _cell(gp, tpe, random, optuna_gp=None):
    cell = {"gp": _runs(gp), "optuna-tpe": _runs(tpe), "random": _runs(random)}
    if optuna_gp is not None:
        cell["optuna-gp"] = _runs(optuna_gp)
    return cell


def test_a_peer_in_progress_is_not_counted_and_unrun_cells_are_listed():
    import suite

    full = {"sphere": _cell([1e-3] * 4, [1e-1] * 4, [1.0] * 4, [1e-2] * 4),
            "ackley": _cell([1e-2] * 4, [1e-1] * 4, [1.0] * 4, [1e-1] * 2)}  # GPSampler: 2 of 4 seeds
    rows = suite.claims_of({"2/20": full})
    cell_row, missing_row = rows
    assert "GPSampler partly run" in cell_row["jbo_figure"] and cell_row["reproduced"] == "partly"
    full["ackley"]["optuna-gp"] = _runs([1e-1] * 4)
    cell_row, _ = suite.claims_of({"2/20": full})
    assert "GPSampler 2/2" in cell_row["jbo_figure"] and cell_row["reproduced"] == "yes"
    assert missing_row["reproduced"] == "not run" and "d = 2, 20" not in missing_row["jbo_figure"]
    assert "d = 2, 40" in missing_row["jbo_figure"] and "d = 20, 400" in missing_row["jbo_figure"]


def test_behind_random_fails_the_bar_and_an_incomplete_baseline_skips_the_cell():
    import suite

    behind = {"sphere": _cell([1.0] * 3, [2.0] * 3, [1e-1] * 3, [2.0] * 3)}
    row = suite.claims_of({"5/50": behind})[0]
    assert row["reproduced"] == "no" and "behind random on sphere" in row["jbo_figure"]
    behind["sphere"]["random"] = _runs([1e-1] * 2)  # random search still running
    assert all("d = 5, 50 evaluations" not in r["claim"] for r in suite.claims_of({"5/50": behind}))
    behind["sphere"]["random"] = _runs([1e-1] * 3)
    behind["ackley"] = _cell([1.0] * 2, [2.0] * 2, [3.0] * 2, [2.0] * 2)  # the default still running on ackley
    assert all("d = 5, 50 evaluations" not in r["claim"] for r in suite.claims_of({"5/50": behind}))


def test_a_lead_over_random_within_the_seeds_noise_is_named():
    """Ahead of random search on the mean, but by less than the paired difference's standard error: the bar holds
    and the row names the function with the difference; a clear lead is not named."""
    import suite

    cell = {"sphere": _cell([1e-3] * 4, [1e-1] * 4, [1.0] * 4, [1e-1] * 4),
            "shubert": _cell([1.0, 0.9, 1.1, 1.0], [2.0] * 4, [1.0, 1.0, 1.0, 1.05], [2.0] * 4)}
    row = suite.claims_of({"2/20": cell})[0]
    mean, se = suite.paired_difference(cell["shubert"], "gp", "random")
    assert row["reproduced"] == "yes" and -mean < se
    assert f"ahead of random by less than one standard error on shubert ({mean:+.2f} ± {se:.2f})" in row["jbo_figure"]
    assert "sphere (" not in row["jbo_figure"]


def test_a_cell_in_progress_reports_the_functions_the_default_finished():
    import suite

    cell = {"sphere": _cell([1e-3] * 3, [1e-1] * 3, [1.0] * 3, [1e-2] * 3),
            "ackley": _cell([1.0] * 3, [1e-1] * 3, [1e-2] * 3, [1e-1] * 2),  # GPSampler: 2 of 3 seeds
            "levy": _cell([1e-2], [1e-1] * 3, [1.0] * 3)}  # the default: 1 of 3 seeds
    *_, missing_row = suite.claims_of({"20/200": cell})
    figure = missing_row["jbo_figure"]
    assert missing_row["reproduced"] == "not run"
    assert "d = 20, 200: in progress, the default on 2 of 3 functions (3 seeds)" in figure
    assert "GPSampler 1/1, TPE 1/2, random 1/2 where they ran the same seeds" in figure
    assert "d = 20, 400: not run with every method" in figure


def test_runs_are_stored_together_and_a_later_call_adds_only_the_missing_seeds(tmp_path, monkeypatch):
    import json

    import _common
    import suite

    for name in ("RESULTS", "BENCHMARKS", "FIGURES"):  # use_results_dir rebinds them: restored after the test
        monkeypatch.setattr(_common, name, getattr(_common, name))
    monkeypatch.setattr(_common, "regenerate", lambda: None)
    monkeypatch.setattr(_common, "record_provenance", lambda *a, **k: None)
    writes = []
    merge = _common.merge_results
    monkeypatch.setattr(_common, "merge_results", lambda path, items: writes.append(len(items)) or merge(path, items))
    argv = ["--dims", "2", "--budgets", "10", "--functions", "sphere", "branin", "--arms", "--peers", "random",
            "--results-dir", str(tmp_path)]
    suite.main([*argv, "--seeds", "3"])
    assert writes == [3, 3]  # random search takes far less than SAVE_EVERY: one write per function
    monkeypatch.setattr(suite, "SAVE_EVERY", 0.0)
    suite.main([*argv, "--seeds", "5"])
    assert writes == [3, 3, 1, 1, 1, 1]  # each run written as it ends; the stored seeds not run again
    stored = json.load(open(tmp_path / suite.RESULTS_FILE))["2/20"]
    assert {name: sorted(stored[name]["random"]) for name in stored} == {
        "sphere": ["0", "1", "2", "3", "4"], "branin": ["0", "1", "2", "3", "4"]}
    assert all(len(run["values"]) == 20 for runs in stored.values() for run in runs["random"].values())


def test_a_method_run_on_more_seeds_is_compared_on_the_seeds_both_ran(monkeypatch):
    import suite

    monkeypatch.setattr(suite, "MIN_SEEDS", 2)
    # the default: worse than TPE on the two seeds TPE ran, far better on the two more it ran alone
    cell = {"sphere": _cell([1.0, 1.0, 1e-6, 1e-6], [1e-1] * 2, [10.0] * 4, [1e-2] * 2)}
    row = suite.claims_of({"2/20": cell})[0]
    assert row["jbo_figure"].startswith("GPSampler 0/1, TPE 0/1, random 1/1 (2 seeds; random 4)")
    assert row["reproduced"] == "no"
    monkeypatch.setattr(suite, "MIN_SEEDS", 3)  # TPE's two seeds are then too few: the cell is in progress
    assert all("d = 2, 20 evaluations" not in r["claim"] for r in suite.claims_of({"2/20": cell}))
    table = suite.tables({"2/20": cell})[2, 20]
    assert "4 seeds (optuna-gp: 2, optuna-tpe: 2)" in suite.section({"2/20": cell})
    assert suite.compared(table["sphere"]["gp"], table["sphere"]["random"])[2] == 4


def test_an_exploration_row_compares_everything_on_the_seeds_of_the_arm_and_its_baseline():
    import suite

    cell = _cell([1.0, 1.0, 1e-6, 1e-6], [1e-1] * 4, [1e-2, 1e-2, 10.0, 10.0])
    cell["gp-map"] = _runs([1e-1] * 2)  # two seeds, against the default's four
    row = next(line for line in suite.exploration({"2/20": {"sphere": cell}}) if "| gp-map |" in line)
    # on seeds 0 and 1: gp-map ahead of gp, behind random search (which is ahead there, behind on seeds 2 and 3)
    assert row.startswith("| d = 2, 20 | gp-map | gp | 2 | gp 1/1, optuna-tpe 0/1, random 0/1 | -1.000 | +0.000 |")
    assert row.endswith("| sphere |")
