"""The README's Python examples run as written (each in a fresh working directory)."""

from __future__ import annotations

import os
import re

import pytest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def python_block(heading: str) -> str:
    """The first ```python block after the section ``heading``."""
    text = open(README, encoding="utf-8").read()
    section = text[text.index(f"## {heading}\n"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.parametrize("heading", ["Python API", "Many runs as one compiled program", "Write your own BO step"])
def test_readme_example_runs(heading, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(python_block(heading), f"README.md: {heading}", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip()  # every example prints its result


def test_own_step_example_runs_at_steady_speed(monkeypatch, tmp_path):
    """The hand-written loop compiles in its first two iterations (no previous samples, then some),
    then never again: a tracing counter on the acquisition's score sees no trace after them."""
    from jbo import acquisition

    traces = []
    original = acquisition.IntegratedScore.__call__

    def counting(self, posteriors, best, x):
        traces.append(x.shape)
        return original(self, posteriors, best, x)

    monkeypatch.setattr(acquisition.IntegratedScore, "__call__", counting)
    monkeypatch.chdir(tmp_path)
    code = python_block("Write your own BO step").replace("range(20)", "range(6)")
    code = code.replace("    data = pad_data(", "    traced_before = len(traces)\n    data = pad_data(")
    code = code.replace("    x = np.vstack(", "    counts.append(len(traces) - traced_before)\n    x = np.vstack(")
    namespace = {"counts": [], "traces": traces}
    exec(compile(code, "README.md: Write your own BO step", "exec"), namespace)
    assert len(namespace["counts"]) == 6 and sum(namespace["counts"][2:]) == 0, namespace["counts"]
