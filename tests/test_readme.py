"""Every code block of README.md, docs/guide.md and DESIGN.md runs as written, each in a fresh working directory.

A test may shorten a block's budget by editing its text (and asserts that the text it edits is there);
nothing else is changed, so what a reader runs is what is tested. Where compiling a model would make a
default test long, the default test stops at the initial design (the names, the files, the journal, the
resume) and a ``slow`` test runs the block's model; the model's path is also in the default tests of its
own module. Blocks that write files run twice: a second run of the same block must work too.
``test_every_block_has_a_test`` keeps ``BLOCKS``, the list of which test runs which block, in step with
the documents.
"""

from __future__ import annotations

import glob
import json
import os
import re
import runpy
import shlex
import subprocess
import sys

import pytest


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
DESIGN = os.path.join(ROOT, "DESIGN.md")
GUIDE = os.path.join(ROOT, "docs", "guide.md")


def read(path) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def code_blocks(path: str = README) -> list[tuple[str, int, str, str]]:
    """``(heading, index in the section, language, code)`` of every fenced block of ``path``."""
    found, heading, counts = [], "", {}
    for part in re.split(r"(^## .*$)", read(path), flags=re.M):
        if part.startswith("## "):
            heading = part[3:].strip()
            continue
        for lang, code in re.findall(r"^```(\w*)\n(.*?)^```", part, re.S | re.M):
            found.append((heading, counts.get(heading, 0), lang, code))
            counts[heading] = counts.get(heading, 0) + 1
    return found


def python_blocks(heading: str, path: str = README) -> list[str]:
    """Every ```python block of the section ``heading``."""
    return [code for h, _, lang, code in code_blocks(path) if h == heading and lang == "python"]


def python_block(heading: str, path: str = README) -> str:
    """The first ```python block of the section ``heading``."""
    return python_blocks(heading, path)[0]


def block(heading: str, index: int = 0, path: str = README) -> str:
    """Block ``index`` (any language) of the section ``heading``."""
    return [code for h, i, _, code in code_blocks(path) if h == heading and i == index][0]


def shortened(code: str, *edits: tuple[str, str]) -> str:
    """``code`` with each ``(old, new)`` replaced; every ``old`` must be in it (the test follows the text)."""
    for old, new in edits:
        assert old in code, f"the block no longer has {old!r}: update the test with the text"
        code = code.replace(old, new)
    return code


def run_script(path, *args, cwd, timeout=600) -> list[str]:
    """``python path args`` in ``cwd`` with this checkout's jbo importable; its stdout's lines."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, str(path), *args], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip().splitlines()


BRING_YOUR_OWN = "Bring your own: kernels, acquisitions, surrogates and models"
PARALLEL = "Parallel and asynchronous evaluations"
OWN_PIECES = "A surrogate and a model of one's own"

# (document, heading, index in the section) -> the test that runs the block
BLOCKS = {
    ("README.md", "Quick start", 0): "test_quick_start_main_job_writes_what_the_text_says",
    ("README.md", "Python API", 0): "test_python_api_example_runs_twice",
    ("README.md", "Python API", 1): "test_conditional_space_example_runs",
    ("README.md", "Many runs as one compiled program", 0): "test_many_runs_example_runs",
    ("README.md", "Many runs as one compiled program", 1): "test_study_example_runs",
    ("README.md", "Many runs as one compiled program", 2): "test_stored_study_example_continues",
    ("guide.md", "Studies on a cluster", 0): "test_cluster_study_example_runs_twice",
    ("guide.md", "Write your own BO step", 0): "test_own_step_example_runs",
    ("guide.md", BRING_YOUR_OWN, 0): "test_bring_your_own_module_runs_twice",
    ("guide.md", BRING_YOUR_OWN, 1): "test_bring_your_own_runs_and_a_fresh_process_resumes_it",
    ("README.md", PARALLEL, 0): "tests/test_executors.py::test_readme_parallel_example_runs",
    ("guide.md", "Workers on one machine", 0): "test_default_process_pool_script_runs_twice",
    ("README.md", "Constraints", 0): "test_constraints_example_runs",
    ("README.md", "Inside Optuna", 0): "test_inside_optuna_example_runs_twice",
    ("guide.md", "Optuna workers", 0): "test_optuna_workers_share_the_study",
    ("README.md", "Command line", 0): "test_command_line_example_runs_twice",
    ("DESIGN.md", OWN_PIECES, 0): "test_design_pieces_run_twice_and_a_fresh_process_resumes_them",
}


def test_every_block_has_a_test():
    blocks = {(os.path.basename(path), heading, index)
              for path in (README, GUIDE, DESIGN) for heading, index, lang, _ in code_blocks(path)
              if not (path == DESIGN and lang == "")}  # DESIGN's diagrams are not code
    assert blocks == set(BLOCKS), (blocks - set(BLOCKS), set(BLOCKS) - blocks)
    for name in set(BLOCKS.values()):
        where, _, test = name.rpartition("::")
        source = read(os.path.join(ROOT, where) if where else __file__)
        assert f"def {test or name}(" in source, name


def test_quick_start_main_job_writes_what_the_text_says(tmp_path, monkeypatch, capsys):
    """``pip install -e . && jbo run``: the console script is jbo.cli:main; the run (budget shortened) writes
    the files the text names, refuses to overwrite them, and ``jbo run --resume --budget 40`` continues it.
    Budgets 3 and 4 stay in Branin's initial design (tests/test_cli.py runs the default model)."""
    from jbo import cli

    install, tests = block("Quick start").strip().splitlines()
    assert install == "pip install -e . && jbo run"
    assert tests.startswith('pip install -e ".[test]" && python -m pytest')
    pyproject = read(os.path.join(ROOT, "pyproject.toml"))
    assert 'jbo = "jbo.cli:main"' in pyproject and re.search(r"^test = \[", pyproject, re.M)
    text = read(README)
    files = re.search(r"`runs/branin-gp-slice-s0/\{(.*?)\}`", text).group(1).split(",")
    continued = re.search(r"`(jbo run --resume --budget 40)` continues it", text).group(1)
    monkeypatch.chdir(tmp_path)
    assert cli.main(shlex.split(install.split("&&")[1])[1:] + ["--budget", "3", "--quiet"]) == 0
    assert sorted(os.listdir("runs/branin-gp-slice-s0")) == sorted(files)
    with pytest.raises(SystemExit):  # run again: refused, nothing overwritten
        cli.main(["run", "--budget", "3", "--quiet"])
    assert "pass --resume" in capsys.readouterr().err
    assert cli.main(shlex.split(continued.replace("40", "4"))[1:] + ["--quiet"]) == 0
    assert json.loads(read("runs/branin-gp-slice-s0/results.json"))["n_evaluations"] == 4


def test_python_api_example_runs_twice(tmp_path, monkeypatch, capsys):
    """The second run finds run.jsonl and resumes it (it used to stop on the existing journal)."""
    monkeypatch.chdir(tmp_path)
    # budget 16: the padded size the ask/tell part already compiled (30 adds another, at 32 rows)
    code = shortened(python_block("Python API"), ("budget=30", "budget=16"))
    code = compile(code, "README.md: Python API", "exec")
    for _ in range(2):
        exec(code, {"__name__": "__readme__"})
        assert capsys.readouterr().out.strip()
    assert read("run.jsonl").count('"observation"') == 16


@pytest.mark.parametrize("budget", [pytest.param(5, id="design"), pytest.param(20, id="tree", marks=pytest.mark.slow)])
def test_conditional_space_example_runs(budget, tmp_path, monkeypatch, capsys):
    """Default: the initial design only (5 points; the tree model's programs take minutes to compile here,
    and tests/test_tree_model.py runs them); slow: as written."""
    monkeypatch.chdir(tmp_path)
    code = shortened(python_blocks("Python API")[1], ("budget=20", f"budget={budget}"))
    exec(compile(code, "README.md: Python API (conditional)", "exec"), {"__name__": "__readme__"})
    value, config = capsys.readouterr().out.split(" ", 1)
    assert float(value) < (0.05 if budget == 20 else 1.2) and ("momentum" in config) == ("'sgd'" in config)


def test_conditional_example_study_measures_the_readme_example():
    """experiments/conditional_readme.py measures this block: the same space, and its JAX loss (what
    ``jbo.study`` runs) equal to the block's Python loss on configurations of both leaves."""
    import jax.numpy as jnp
    import numpy as np

    sys.path.insert(0, os.path.join(ROOT, "experiments"))
    import conditional_readme

    code = python_blocks("Python API")[1].split("res = jbo.minimize")[0]
    namespace = {"__name__": "__readme__"}
    exec(compile(code, "README.md: Python API (conditional)", "exec"), namespace)
    space = conditional_readme.space()
    assert space == namespace["space"]
    U = np.random.default_rng(0).random((64, space.dim))
    arrays = space.decode_arrays(jnp.asarray(U))
    ours = np.asarray(conditional_readme.loss_jax(arrays))
    readme = [namespace["loss"](c) for c in space.decode_many(U)]
    assert {c["optimizer"] for c in space.decode_many(U)} == {"sgd", "adam"}
    np.testing.assert_allclose(ours, readme, rtol=1e-6, atol=1e-9)

def test_many_runs_example_runs(tmp_path, monkeypatch, capsys):
    """Shortened to two seeds of 12 evaluations (the whole-run program's size grows with the budget's stages)."""
    monkeypatch.chdir(tmp_path)
    code = shortened(python_block("Many runs as one compiled program"), ("budget=60, seeds=range(10)",
                                                                           "budget=12, seeds=range(2)"))
    namespace = {"__name__": "__readme__"}
    exec(compile(code, "README.md: Many runs", "exec"), namespace)
    assert capsys.readouterr().out.strip()
    assert namespace["result"].values.shape == (2, 12)


def test_study_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    setup = "import jbo\nfrom jbo.benchmarks import get_problem\nproblem = get_problem('branin')\n"
    code = shortened(block("Many runs as one compiled program", 1),
                     ("budget=60, seeds=range(10)", "budget=8, seeds=range(2)"))
    namespace = {"__name__": "__readme__"}
    exec(compile(setup + code, "README.md: study", "exec"), namespace)
    study = namespace["study"]
    assert study.best_so_far.shape == (4, 2, 8)
    assert [names for names, _ in study.programs] == [("ei", "ucb", "ucb-4"), ("random",)]
    assert (tmp_path / "ablation.npz").exists() and (tmp_path / "ablation.png").exists()
    assert "| ucb-4 |" in capsys.readouterr().out


def test_stored_study_example_continues(tmp_path, monkeypatch):
    """The store's block after the study's (shortened alike): a second call reads the store and makes nothing."""
    monkeypatch.chdir(tmp_path)
    setup = "import jbo\nfrom jbo.benchmarks import get_problem\nproblem = get_problem('branin')\n"
    edits = [("budget=60, seeds=range(10)", "budget=8, seeds=range(2)")]
    study = shortened(block("Many runs as one compiled program", 1), *edits).split("study = ")[0]
    code = setup + study + shortened(block("Many runs as one compiled program", 2), *edits)
    namespace = {"__name__": "__readme__"}
    exec(compile(code, "README.md: stored study", "exec"), namespace)
    first = namespace["study"]
    assert namespace["partial"].finished.all() and first.values.shape == (4, 2, 8)
    exec(compile(code, "README.md: stored study", "exec"), namespace)
    assert namespace["study"].programs == () and (namespace["study"].values == first.values).all()


@pytest.mark.slow
def test_cluster_study_example_runs_twice(tmp_path):
    """Shortened to 2 seeds of 10 evaluations; the second run reads the store."""
    script = tmp_path / "cluster.py"
    script.write_text(shortened(block("Studies on a cluster", 0, GUIDE),
                                ("budget=60, seeds=range(10)", "budget=10, seeds=range(2)")))
    for _ in range(2):
        lines = run_script(script, cwd=tmp_path, timeout=900)
        assert any("| ei |" in line for line in lines)
    assert (tmp_path / "cluster-store" / "study.json").exists()


def test_own_step_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(python_block("Write your own BO step", GUIDE), "README.md: Write your own BO step", "exec"),
         {"__name__": "__readme__"})
    assert float(capsys.readouterr().out) < 0.0  # the best of 28 evaluations of Hartmann6 (values <= 0)


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
    code = shortened(python_block("Write your own BO step", GUIDE), ("range(20)", "range(6)"),
                     ("    data = pad_data(", "    traced_before = len(traces)\n    data = pad_data("),
                     ("    x = np.vstack(", "    counts.append(len(traces) - traced_before)\n    x = np.vstack("))
    namespace = {"counts": [], "traces": traces}
    exec(compile(code, "README.md: Write your own BO step", "exec"), namespace)
    assert len(namespace["counts"]) == 6 and sum(namespace["counts"][2:]) == 0, namespace["counts"]


def test_bring_your_own_module_runs_twice(tmp_path, monkeypatch, capsys):
    """``python byo.py`` (as ``__main__``, in this process; budget 5: Branin's initial design) twice: the
    journal names the pieces by the script's module name, and the second run resumes it although the
    pieces it passes are ``__main__``'s, not the imported ``byo``'s."""
    (tmp_path / "byo.py").write_text(shortened(python_block(BRING_YOUR_OWN, GUIDE), ("budget=12", "budget=5")))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        for _ in range(2):
            runpy.run_path("byo.py", run_name="__main__")
            assert float(capsys.readouterr().out) > 0
    finally:
        sys.modules.pop("byo", None)  # the second run imported it from tmp_path to compare the pieces
    journal = read("byo.jsonl")
    assert '"jbo.kernels:Sum"' in journal and '"byo:lower_confidence_bound"' in journal
    assert journal.count('"observation"') == 5


@pytest.mark.slow  # fresh processes compiling a model of user pieces; tests/test_bring_your_own.py has them by default
def test_bring_your_own_runs_and_a_fresh_process_resumes_it(tmp_path):
    """As written: ``python byo.py`` twice, then the resume block in a new process, which imports ``byo``."""
    module, resume = python_blocks(BRING_YOUR_OWN, GUIDE)
    (tmp_path / "byo.py").write_text(module)
    (tmp_path / "resume.py").write_text(resume)
    first = run_script("byo.py", cwd=tmp_path)
    assert run_script("byo.py", cwd=tmp_path) == first  # the finished run, resumed
    n, config = run_script("resume.py", cwd=tmp_path)[0].split(" ", 1)
    assert n == "12" and "x1" in config


def test_default_process_pool_script_runs_twice(tmp_path):
    """``python workers.py``: the default pool's spawned workers import the script (the guard keeps them
    from starting the run again); run again, it resumes its journal."""
    script = shortened(python_block("Workers on one machine", GUIDE), ("budget=24", "budget=5"))  # the initial design: no model to compile
    assert 'if __name__ == "__main__":' in script and "executor" not in script
    (tmp_path / "workers.py").write_text(script)
    first = run_script("workers.py", cwd=tmp_path)
    assert run_script("workers.py", cwd=tmp_path) == first  # the finished run, resumed
    assert read(tmp_path / "workers.jsonl").count('"observation"') == 5


@pytest.mark.parametrize("budget", [pytest.param(5, id="design"), pytest.param(20, id="cei", marks=pytest.mark.slow)])
def test_constraints_example_runs(budget, tmp_path, monkeypatch, capsys):
    """Default: the initial design (the classifier's programs are tests/test_constraints.py's); slow: as
    written, ending near the feasible optimum 0.5 (x + y = 1 at (0.5, 0.5))."""
    monkeypatch.chdir(tmp_path)
    code = shortened(python_block("Constraints"), ("budget=20", f"budget={budget}"))
    exec(compile(code, "README.md: Constraints", "exec"), {"__name__": "__readme__"})
    value, config = capsys.readouterr().out.split(" ", 1)
    config = eval(config)  # the printed dict
    assert config["x"] + config["y"] <= 1.0 and 0.5 - 1e-9 <= float(value) < (0.6 if budget == 20 else 2.0)


OPTUNA_MAP = ("JboSampler(seed=0)", "JboSampler(seed=0, inference='map')")  # slice programs cost minutes here


@pytest.mark.parametrize("n_trials", [pytest.param(2, id="design"), pytest.param(7, id="map", marks=pytest.mark.slow)])
def test_inside_optuna_example_runs_twice(n_trials, tmp_path, monkeypatch, capsys):
    """tune.py as written but shorter and with MAP; run again, it adds its trials to the same study.
    Default: 2 trials a run, all in jbo's initial design (5 trials; the sampler's model is
    tests/test_optuna_sampler.py's); slow: 7, the later ones from the model."""
    import optuna

    monkeypatch.chdir(tmp_path)
    code = shortened(python_block("Inside Optuna"), OPTUNA_MAP, ("n_trials=30", f"n_trials={n_trials}"))
    for _ in range(2):
        exec(compile(code, "README.md: Inside Optuna", "exec"), {"__name__": "__readme__"})
        value, params = capsys.readouterr().out.split(" ", 1)
        assert float(value) < 5 and "optimizer" in params
    storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend("tune.log"))
    assert len(optuna.load_study(study_name="tune", storage=storage).trials) == 2 * n_trials


@pytest.mark.slow  # four processes; the default check: test_optuna_sampler.py::test_two_workers_share_one_journal_storage
def test_optuna_workers_share_the_study(tmp_path):
    import optuna

    script = shortened(python_block("Inside Optuna"), OPTUNA_MAP, ("n_trials=30", "n_trials=4"))
    (tmp_path / "tune.py").write_text(script)
    command = block("Optuna workers", 0, GUIDE).split("#")[0].strip().replace("python ", f"{shlex.quote(sys.executable)} ")
    assert command.startswith("for i in 1 2 3 4; do")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run(["bash", "-c", f"set -e; {command}"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(str(tmp_path / "tune.log")))
    trials = optuna.load_study(study_name="tune", storage=storage).trials
    assert len(trials) == 16 and len({t.number for t in trials}) == 16


def test_command_line_example_runs_twice(tmp_path, monkeypatch, capsys):
    """Each line through jbo.cli.main (globs expanded as a shell would), budgets shortened to Hartmann6's
    initial design (7: no model to compile); run again, the --resume runs stand as they are."""
    from jbo import cli

    monkeypatch.chdir(tmp_path)
    lines = [line.split("#")[0].strip() for line in block("Command line").strip().splitlines()]
    lines = [line.replace("--budget 40", "--budget 5").replace("--budget 60", "--budget 7") for line in lines]
    assert sum("--budget 5" in line for line in lines) == 2 and sum("--budget 7" in line for line in lines) == 1
    for _ in range(2):
        for line in lines:
            words = [match for word in shlex.split(line)
                     for match in (sorted(glob.glob(word)) if "*" in word else [word])]
            assert words[0] == "jbo" and cli.main(words[1:] + (["--quiet"] if words[1] == "run" else [])) == 0, line
    assert len(glob.glob("runs/hartmann6-*-s0")) == 2 and os.path.exists("hartmann6.png")
    results = json.loads(read("runs/hartmann6-gp-map-s0/results.json"))
    assert results["n_evaluations"] == 7


@pytest.mark.slow  # two fresh processes per piece; tests/test_bring_your_own.py runs such pieces by default
def test_design_pieces_run_twice_and_a_fresh_process_resumes_them(tmp_path):
    """DESIGN.md's surrogate and model of one's own: ``python pieces.py`` twice (the second run resumes its
    journals), then a new process resumes each journal by importing ``pieces`` again."""
    (tmp_path / "pieces.py").write_text(python_block(OWN_PIECES, DESIGN))
    first = run_script("pieces.py", cwd=tmp_path)
    assert [line.split()[0] for line in first] == ["fourier", "parzen"]
    assert run_script("pieces.py", cwd=tmp_path) == first
    journals = {name: (tmp_path / f"{name}.jsonl").read_text() for name in ("fourier", "parzen")}
    assert '"pieces:FourierRegression"' in journals["fourier"] and '"pieces:ParzenRatio"' in journals["parzen"]
    (tmp_path / "resume.py").write_text(
        "import jbo\nfor name in ('fourier', 'parzen'):\n"
        "    opt = jbo.Optimizer.resume(f'{name}.jsonl')\n    print(name, opt.n_observed, opt.ask())\n")
    assert [line.split()[:2] for line in run_script("resume.py", cwd=tmp_path)] == [["fourier", "8"], ["parzen", "8"]]
