"""The README's Python examples run as written (each in a fresh working directory)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import jbo

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def python_block(heading: str) -> str:
    """The first ```python block after the section ``heading``."""
    return python_blocks(heading)[0]


def python_blocks(heading: str) -> list[str]:
    """Every ```python block of the section ``heading`` (up to the next section)."""
    text = open(README, encoding="utf-8").read()
    section = text[text.index(f"## {heading}\n"):]
    section = section[: section.find("\n## ", 3) if "\n## " in section[3:] else len(section)]
    return re.findall(r"```python\n(.*?)```", section, re.S)


@pytest.mark.parametrize("heading", ["Python API", "Many runs as one compiled program", "Write your own BO step"])
def test_readme_example_runs(heading, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(python_block(heading), f"README.md: {heading}", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip()  # every example prints its result


@pytest.mark.slow
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


BRING_YOUR_OWN = "Bring your own: kernels, acquisitions, surrogates and models"


@pytest.mark.slow
def test_bring_your_own_runs_and_a_fresh_process_resumes_its_journals(tmp_path):
    """(a) a kernel expression, (b) an acquisition, (c) a surrogate and (d) a model of one's own run through
    minimize_many and the Optimizer, and a new process resumes each journal by importing the pieces again."""
    module, resume = python_blocks(BRING_YOUR_OWN)
    (tmp_path / "byo.py").write_text(module)
    root = os.path.dirname(os.path.dirname(os.path.abspath(jbo.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]),
               JBO_CACHE_DIR=str(tmp_path / "cache"))  # the new process loads what the first compiled
    env.pop("JBO_NO_CACHE", None)

    def run(*args):
        out = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=900)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout.strip().splitlines()

    lines = run("byo.py")
    assert [line.split()[0] for line in lines] == ["matern-linear", "lcb", "fourier", "parzen"]
    journals = {name: (tmp_path / f"{name}.jsonl").read_text() for name in ("matern-linear", "lcb", "fourier", "parzen")}
    assert '"jbo.kernels:Sum"' in journals["matern-linear"] and '"byo:lower_confidence_bound"' in journals["lcb"]
    assert '"byo:FourierRegression"' in journals["fourier"] and '"byo:ParzenRatio"' in journals["parzen"]
    resumed = run("-c", resume)
    assert [line.split()[:2] for line in resumed] == [[name, "8"] for name in journals]


def test_inside_optuna_example_runs(tmp_path, monkeypatch, capsys):
    """The Optuna example as written but shorter and with MAP (the slice sampler's programs cost minutes here)."""
    monkeypatch.chdir(tmp_path)
    code = python_block("Inside Optuna")
    assert "JboSampler(seed=0)" in code and "n_trials=30" in code
    code = code.replace("JboSampler(seed=0)", "JboSampler(seed=0, inference='map')").replace("n_trials=30", "n_trials=9")
    exec(compile(code, "README.md: Inside Optuna", "exec"), {"__name__": "__readme__"})
    value, params = capsys.readouterr().out.split(" ", 1)
    assert float(value) < 5 and "optimizer" in params
