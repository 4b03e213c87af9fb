"""BENCHMARKS.md and the README's headline table are what ``experiments/report.py`` renders from the stored
results: no figure in them is written by hand, and a change to a script's report shows up here."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "experiments"))


def _written():
    """Modification times of everything a report could write."""
    paths = [os.path.join(ROOT, "BENCHMARKS.md"), os.path.join(ROOT, "README.md")]
    for folder in ("experiments/results", "experiments/results/details", "experiments/figures"):
        folder = os.path.join(ROOT, folder)
        paths += [os.path.join(folder, name) for name in sorted(os.listdir(folder))] if os.path.isdir(folder) else []
    return {path: os.stat(path).st_mtime_ns for path in paths if os.path.isfile(path)}


@pytest.fixture(scope="module")
def rendered():
    import report

    before = _written()
    sections, claims = report.collect(figures=False)
    assert _written() == before, "a script's report() or claims() wrote a file"
    for script, found in sections.items():
        assert isinstance(found, dict) and found, script
        assert all(isinstance(k, str) and isinstance(v, str) and v.startswith("## ") for k, v in found.items()), script
    text, details = report.render(sections, claims)
    return text, claims, details


def test_no_script_imports_the_report():
    """report.py imports every script; a script that imported it back would make a cycle."""
    import ast

    folder = os.path.join(ROOT, "experiments")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py") and name != "report.py":
            tree = ast.parse(open(os.path.join(folder, name)).read())
            imported = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                        for alias in node.names} | {node.module for node in ast.walk(tree)
                                                    if isinstance(node, ast.ImportFrom) and node.module}
            assert "report" not in imported, name


def test_benchmarks_md_is_generated_from_the_stored_results(rendered):
    text, _, details = rendered
    with open(os.path.join(ROOT, "BENCHMARKS.md")) as f:
        assert f.read() == text, "BENCHMARKS.md differs from the data: run `python experiments/report.py`"
    for path, detail in details.items():
        with open(path) as f:
            assert f.read() == detail, f"{path} differs from the data: run `python experiments/report.py`"


def test_benchmarks_md_is_short_and_links_every_section_in_full(rendered):
    text, _, details = rendered
    assert len(text.splitlines()) <= 700
    for path in details:
        link = os.path.relpath(path, ROOT)
        assert f"]({link})" in text, link


def test_readme_headline_rows_are_the_summary_s(rendered, tmp_path):
    import report

    _, claims, _ = rendered
    assert sum(c["headline"] for c in claims) == 5
    copy = tmp_path / "README.md"
    with open(os.path.join(ROOT, "README.md")) as f:
        original = f.read()
    copy.write_text(original)
    report.update_readme(claims, str(copy))
    assert copy.read_text() == original, "the README's headline table is stale: run `python experiments/report.py`"


def test_every_claim_is_decided_and_points_at_a_section(rendered):
    text, claims, _ = rendered
    import _common

    assert claims
    for c in claims:
        assert c["reproduced"] in _common.VERDICTS
        assert f'<a id="{c["section"]}"></a>' in text, c


def test_a_growing_section_lists_every_command_that_made_it(tmp_path, monkeypatch):
    import json

    import _common

    monkeypatch.setattr(_common, "RESULTS", str(tmp_path))
    commands = iter(["suite.py --arms gp", "suite.py --arms gp-ucb", "suite.py --arms gp", "bench.py"])
    monkeypatch.setattr(_common, "command", lambda: next(commands))
    _common.merge_result(_common.provenance_path(), ["grid"], {"command": "old", "note": "made before x"})
    for _ in range(3):
        _common.record_provenance("grid", accumulates=True)
    _common.record_provenance("bench")
    stored = json.load(open(_common.provenance_path()))
    assert stored["grid"]["command"] == "old; suite.py --arms gp; suite.py --arms gp-ucb"
    assert stored["grid"]["note"] == "made before x" and stored["bench"]["command"] == "bench.py"

    form = "suite.py --arms ARM"
    header = _common.header("grid", form)
    assert f"- command: `{form}`, 3 runs (each run's command: `{_common.provenance_path()}`, `grid`)" in header
    assert "--arms gp-ucb" not in header and "- note: made before x" in header
    assert "- command: `bench.py`\n" in _common.header("bench", form), "a single run shows its own command"
    assert "suite.py --arms gp-ucb" in _common.header("grid"), "without a form, every command"


def test_a_partial_timing_rerun_keeps_the_other_rows_and_says_which_run_each_is_from(tmp_path, monkeypatch):
    import json

    import _common
    import bench_suggest

    def row(method, n, seconds, run=None, told=False):
        r = {"method": method, "n": n, "seconds_per_suggestion": seconds, "compile_seconds": 1.0, "n_pad": n,
             **({"told": True} if told else {})}
        return {**r, "run": run} if run else r

    first = {"date": "2026-01-01", "commit": "aaaaaaa"}
    stored = [row(m, n, s, first) for m, s in (("jbo gp-map", 0.1), ("jbo gp-slice", 0.5), ("optuna-gp", 0.3))
              for n in (100, 200)]
    second = {"date": "2026-02-01", "commit": "bbbbbbb"}
    merged = bench_suggest.merge_rows(stored, [row("jbo gp-slice", 200, 0.2, second, told=True)])
    assert [(r["method"], r["n"]) for r in merged] == [(r["method"], r["n"]) for r in stored]
    assert [r["seconds_per_suggestion"] for r in merged if r["method"] == "jbo gp-slice"] == [0.5, 0.2]

    monkeypatch.setattr(_common, "RESULTS", str(tmp_path))
    monkeypatch.setattr(_common, "BENCHMARKS", str(tmp_path / "BENCHMARKS.md"))
    json.dump(merged, open(tmp_path / "bench_suggest.json", "w"))
    (claim,) = bench_suggest.claims()
    assert claim["reproduced"] == "not run" and "2026-02-01, bbbbbbb" in claim["jbo_figure"]
    text = bench_suggest.report()["bench_suggest"]
    assert "| jbo gp-slice | 0.500 s (b)* | 0.200 s (a) |" in text  # *: N kept fixed (suggestions not told)
    assert "(a) 2026-02-01, bbbbbbb; (b) 2026-01-01, aaaaaaa" in text

    json.dump(bench_suggest.merge_rows(merged, [row("jbo gp-slice", 200, 0.2, first)]),
              open(tmp_path / "bench_suggest.json", "w"))
    (claim,) = bench_suggest.claims()  # every row of N = 200 from one run again: a verdict
    assert claim["reproduced"] == "yes"


def test_devices_are_compared_on_the_same_study_and_each_lists_its_own_run(tmp_path, monkeypatch):
    import json

    import _common
    import bench_devices

    def row(runs_per_second, seeds=10, budget=60):
        return {"arms": ["ei"], "seeds": seeds, "budget": budget, "runs": seeds, "wall_seconds": 9.0,
                "compile_seconds": 4.0, "runs_per_second": runs_per_second, "best_mean": [-3.2]}

    monkeypatch.setattr(_common, "RESULTS", str(tmp_path))
    monkeypatch.setattr(_common, "BENCHMARKS", str(tmp_path / "BENCHMARKS.md"))
    results = {"2-core CPU": {"grid": row(2.0), "bock": row(0.5, seeds=5)}, "H200": {"grid": row(3.0)}}
    json.dump(results, open(tmp_path / bench_devices.RESULTS_FILE, "w"))
    for device, commit in (("2-core CPU", "aaaaaaa"), ("H200", "bbbbbbb")):
        _common.merge_result(_common.provenance_path(), [f"{bench_devices.SECTION}/{device}"],
                             {"date": "2026-01-01", "commit": commit, "machine": device, "command": "bench"})
    (claim,) = bench_devices.claims()
    assert claim["reproduced"] == "yes" and "grid" in claim["jbo_figure"] and "bock" not in claim["jbo_figure"]
    results["H200"]["bock"] = row(0.4, seeds=8)  # other seeds: not compared
    results["H200"]["grid"] = row(1.0)
    json.dump(results, open(tmp_path / bench_devices.RESULTS_FILE, "w"))
    (claim,) = bench_devices.claims()
    assert claim["reproduced"] == "no" and "(0.5×)" in claim["jbo_figure"] and "bock" not in claim["jbo_figure"]
    text = bench_devices.report()[bench_devices.SECTION]
    assert "- H200: date 2026-01-01; commit bbbbbbb" in text and "- 2-core CPU: date 2026-01-01; commit aaaaaaa" in text


def test_a_scale_free_variant_run_in_both_units_is_pooled_in_normalised_units():
    """bock_table1's units note: a variant's raw runs are scaled by the factor between the two Rosenbrocks and
    pooled with its normalised runs; nothing is said before both ran."""
    import bock_table1

    def cell(bests):
        return {"seeds": {str(s): {"values": [1e4, b]} for s, b in enumerate(bests)},
                "calls": {"0": {"seeds": list(range(len(bests))), "seconds": 10.0, "compile_seconds": 1.0}}}

    results = {"rosenbrock/20/bock-yj-floor/200/init2": cell([10.0, 30.0])}
    assert bock_table1.variant_units_note(results, 20, "bock-yj-floor", 0.5) == ""
    results["rosenbrock_raw/20/bock-yj-floor/200/init2"] = cell([100.0, 20.0])
    note = bock_table1.variant_units_note(results, 20, "bock-yj-floor", 0.5)
    # pooled: 50, 10 (raw × 0.5) and 10, 30 → mean 25, median 20, max 50
    assert "raw mean best 60.0 over 2 seeds (normalised 20.00 over 2)" in note
    assert "pooled, 25.0 ± 19.1 (normalised units; median 20.0, max 50.0)" in note  # std: sqrt(1100 / 3)


def test_a_running_table2_cell_counts_the_seeds_its_store_finished(tmp_path, monkeypatch):
    import bock_table1
    import bock_table2
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem

    p = get_problem("branin")
    store = str(tmp_path / "store")
    result = jbo.study(p.evaluate, p.space(), 6, [0, 1], {"bock-w": {"model": "random"}}, store=store,
                       store_points=False)
    monkeypatch.setattr(bock_table1, "store_of", lambda key: store)
    monkeypatch.setattr(bock_table1, "load", lambda: {})
    expected = [float(np.min(row)) for row in np.asarray(result.values[0])]
    assert bock_table2.stored_bests(50, "bock-w") == expected
    (row,) = [c for c in bock_table2.claims() if "50 dimensions, 400 evaluations: `bock`, `bock-w`" in c["claim"]]
    assert "bock-w: " + ", ".join(f"{b:.2f}" for b in expected) + " (2 of 5 seeds stored, running)" in row["jbo_figure"]
    assert row["reproduced"] == "not run"  # two seeds: counted, not decided


def test_the_driver_continues_a_killed_experiment_from_its_store_and_removes_it_once_merged(tmp_path, monkeypatch):
    """A run that a killed experiment finished only in its study's store and the seed it never reached both land in
    the results file with the values of an uninterrupted study; the store is then removed, and a rerun runs
    nothing."""
    import _common
    import driver
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem

    monkeypatch.setattr(_common, "RESULTS", str(tmp_path))
    p = get_problem("branin")
    arms = {"random": {"model": "random"}}
    experiment = driver.Experiment(name="tiny", title="tiny", problems={"branin": driver.Problem("branin", budget=6)},
                                   arms=arms)
    store = tmp_path / "stores" / "tiny_branin"
    killed = jbo.study(p.evaluate, p.space(), 6, [0], arms, store=str(store), store_points=False)
    results = driver.run(experiment, ["branin"], ["random"], range(2))
    whole = jbo.study(p.evaluate, p.space(), 6, [0, 1], arms)
    for seed in range(2):
        np.testing.assert_array_equal(results["branin"]["random"][str(seed)]["values"],
                                      np.asarray(whole.values[0][seed]))
    np.testing.assert_array_equal(results["branin"]["random"]["0"]["values"], np.asarray(killed.values[0][0]))
    assert not store.exists()
    assert driver.run(experiment, ["branin"], ["random"], range(2)) == results  # nothing missing: nothing runs


def test_a_bock_cell_run_with_its_store_keeps_the_runs_in_the_results_and_removes_the_store(tmp_path, monkeypatch):
    import _common
    import bock_table1

    monkeypatch.setattr(_common, "RESULTS", str(tmp_path))
    bock_table1.run_cell("rosenbrock", 20, "random", [0, 1], store=True)
    key = bock_table1.key_of("rosenbrock", 20, "random", bock_table1.PAPER_BUDGET[20], bock_table1.N_INIT)
    assert sorted(bock_table1.load()[key]["seeds"]) == ["0", "1"]
    assert not os.path.exists(bock_table1.store_of(key))
