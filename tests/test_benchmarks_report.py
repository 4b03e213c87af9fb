"""BENCHMARKS.md and the README's headline table are what ``experiments/report.py`` renders from the stored
results: no figure in them is written by hand, and a change to a script's report shows up here."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "experiments"))


@pytest.fixture(scope="module")
def rendered():
    import _common
    import report

    sections, claims = report.collect(figures=False)
    assert _common.PLOTS, "collect() restores the figure switch"
    return report.render(sections, claims), claims


def test_benchmarks_md_is_generated_from_the_stored_results(rendered):
    text, _ = rendered
    with open(os.path.join(ROOT, "BENCHMARKS.md")) as f:
        assert f.read() == text, "BENCHMARKS.md differs from the data: run `python experiments/report.py`"


def test_readme_headline_rows_are_the_summary_s(rendered, tmp_path):
    import report

    _, claims = rendered
    assert sum(c["headline"] for c in claims) == 5
    copy = tmp_path / "README.md"
    with open(os.path.join(ROOT, "README.md")) as f:
        original = f.read()
    copy.write_text(original)
    report.update_readme(claims, str(copy))
    assert copy.read_text() == original, "the README's headline table is stale: run `python experiments/report.py`"


def test_every_claim_is_decided_and_points_at_a_section(rendered):
    text, claims = rendered
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
