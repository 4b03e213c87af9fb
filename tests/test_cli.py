"""The ``jbo`` command line, called in-process through ``jbo.cli.main``.

Fast tests use ``--model random`` (no model to compile) to exercise the command plumbing; the GP
runs compile the model's programs (tens of seconds on a busy 2-core machine) and are marked slow.
"""

import dataclasses
import json
import os

import jax
import jax.numpy as jnp
import pytest

import jbo
from jbo import cli, models

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JBO_NO_CACHE", "1")  # never write the user's ~/.cache from the tests


def read_journal(out):
    with open(os.path.join(out, "journal.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_results(out):
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)


def run(*argv):
    return cli.main(["run", "--quiet", *argv])


def test_problems_lists_branin(capsys):
    assert cli.main(["problems"]) == 0
    out = capsys.readouterr().out
    assert "branin" in out and "hartmann6" in out
    assert "0.3978873577" in out and "[-5, 10] x [0, 15]" in out


@pytest.mark.parametrize("option, bad, valid", [
    ("--problem", "braninn", ["branin", "hartmann6", "rosenbrock"]),
    ("--model", "gpp", ["gp", "random"]),
    ("--inference", "hmc", ["slice", "nuts", "map"]),
    ("--acquisition", "eii", ["ei", "logei", "pi", "ucb", "thompson"]),
])
def test_invalid_names_exit_2_listing_choices(capsys, option, bad, valid):
    with pytest.raises(SystemExit) as err:
        cli.main(["run", option, bad])
    assert err.value.code == 2
    message = capsys.readouterr().err
    assert "invalid choice" in message and bad in message
    for name in valid:
        assert repr(name) in message


def test_invalid_dim_exits_2(capsys):
    with pytest.raises(SystemExit) as err:
        cli.main(["run", "--problem", "branin", "--dim", "3"])
    assert err.value.code == 2
    assert "fixed-dimension" in capsys.readouterr().err


def test_run_writes_outputs(capsys):
    out = "runs/a"
    assert run("--model", "random", "--budget", "5", "--seed", "3", "--out", out) == 0
    printed = capsys.readouterr().out
    for name in ("journal.jsonl", "results.json", "convergence.png"):
        assert os.path.isfile(os.path.join(out, name)), name
        assert os.path.join(out, name) in printed
    with open(os.path.join(out, "convergence.png"), "rb") as f:
        assert f.read(8) == PNG_MAGIC
    for column in ("problem", "model", "inference", "budget", "best value", "optimum", "simple regret",
                   "time [s]", "failures"):
        assert column in printed
    records = read_journal(out)
    assert records[0]["type"] == "settings" and records[0]["settings"]["model"]["name"] == "random"
    observations = [r for r in records[1:] if r["type"] == "observation"]
    assert len(observations) == 5 == len(records) - 1
    results = read_results(out)
    assert results["status"] == "complete"
    assert (results["problem"], results["model"], results["seed"], results["n_evaluations"]) == ("branin", "random", 3, 5)
    assert results["failures"] == 0
    values = [r["value"] for r in observations]
    assert results["best_value"] == pytest.approx(min(values))
    assert results["simple_regret"] == pytest.approx(min(values) - 0.39788735772973816)
    assert results["simple_regret"] >= 0 and results["seconds"] > 0
    assert set(results["best_config"]) == {"x1", "x2"}
    assert len(results["suggestions"]) == 5


def test_default_out_directory_names_the_run():
    assert run("--model", "random", "--problem", "rosenbrock", "--dim", "3", "--budget", "2") == 0
    out = os.path.join("runs", "rosenbrock-d3-random-slice-s0")
    results = read_results(out)
    assert results["dim"] == 3 and results["problem"] == "rosenbrock"
    assert len(read_journal(out)[1]["config"]) == 3


def test_existing_run_needs_resume_then_resume_appends_only_missing(capsys):
    out = "runs/r"
    assert run("--model", "random", "--budget", "4", "--out", out) == 0
    first = read_journal(out)
    with pytest.raises(SystemExit) as err:
        run("--model", "random", "--budget", "4", "--out", out)
    assert err.value.code == 2
    message = capsys.readouterr().err
    assert "--resume" in message and "--out" in message
    assert read_journal(out) == first  # untouched

    assert run("--resume", "--budget", "7", "--out", out) == 0
    after = read_journal(out)
    assert after[: len(first)] == first
    assert len(after) == 1 + 7 and sum(r["type"] == "settings" for r in after) == 1
    results = read_results(out)
    assert results["n_evaluations"] == 7 and results["model"] == "random"
    assert len(results["suggestions"]) == 7  # 4 from the first invocation, 3 from the resumed one

    # Resuming a finished run evaluates nothing more.
    assert run("--resume", "--budget", "7", "--out", out) == 0
    assert read_journal(out) == after


def test_resume_rejects_conflicting_settings(capsys):
    out = "runs/c"
    assert run("--model", "random", "--budget", "2", "--out", out) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as err:
        run("--resume", "--model", "gp", "--budget", "3", "--out", out)
    assert err.value.code == 2
    assert "--model 'gp'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run("--resume", "--problem", "hartmann3", "--budget", "3", "--out", out)
    assert len(read_journal(out)) == 1 + 2


def test_plot_writes_png(capsys):
    for seed in (0, 1):
        assert run("--model", "random", "--budget", "4", "--seed", str(seed), "--out", f"runs/s{seed}") == 0
    assert run("--model", "random", "--problem", "hartmann3", "--budget", "3", "--out", "runs/h") == 0
    capsys.readouterr()
    assert cli.main(["plot", "runs/s0", "runs/s1", "--out", "figs/cmp.png"]) == 0
    printed = capsys.readouterr().out
    assert "figs/cmp.png" in printed and "random  " in printed  # random search: no inference in the label
    with open("figs/cmp.png", "rb") as f:
        assert f.read(8) == PNG_MAGIC
    # Runs of different problems share a regret axis; the default output name is used.
    assert cli.main(["plot", "runs/s0", "runs/h"]) == 0
    assert os.path.isfile("jbo-convergence.png")


def test_plot_without_journal_exits_2(capsys):
    os.makedirs("empty")
    with pytest.raises(SystemExit) as err:
        cli.main(["plot", "empty"])
    assert err.value.code == 2
    assert "journal.jsonl" in capsys.readouterr().err


def test_limit_blas_threads():
    assert cli.limit_blas_threads(user_set=True) == []  # the user's OPENBLAS_NUM_THREADS wins
    if not os.path.exists("/proc/self/maps"):
        pytest.skip("run-time thread limiting is Linux-only")
    changed = cli.limit_blas_threads(user_set=False)  # numpy/scipy/jax have loaded OpenBLAS by now
    assert changed and all("openblas" in name.lower() for name in changed)


@pytest.mark.slow
def test_run_gp_map_and_resume():
    out = "runs/gp"
    assert run("--inference", "map", "--budget", "6", "--n-init", "5", "--out", out) == 0
    results = read_results(out)
    assert results["status"] == "complete" and results["n_evaluations"] == 6
    assert results["settings"]["model"]["inference"] == "map" and results["settings"]["n_init"] == 5
    assert results["suggestions"][-1]["phase"] == "model"
    assert results["suggestions"][-1]["fit_seconds"] > 0
    assert len(read_journal(out)) == 1 + 6
    assert run("--resume", "--budget", "7", "--out", out) == 0
    assert len(read_journal(out)) == 1 + 7
    assert read_results(out)["best_value"] <= results["best_value"]


@pytest.mark.slow
def test_default_run_without_arguments(capsys):
    assert cli.main(["run", "--quiet"]) == 0
    out = os.path.join("runs", "branin-gp-slice-s0")
    results = read_results(out)
    assert (results["problem"], results["model"], results["inference"], results["budget"]) == ("branin", "gp", "slice", 30)
    assert results["n_evaluations"] == 30
    assert results["simple_regret"] < 0.5  # 30 evaluations of GP-EI get close to Branin's optimum


def test_cpu_devices_after_jax_started_names_the_conflict(capsys):
    import jax

    jax.devices()  # the backend runs in this process, with one CPU device
    with pytest.raises(SystemExit, match="--cpu-devices 3"):
        run("--problem", "branin", "--model", "random", "--budget", "2", "--cpu-devices", "3", "--out", "runs/cpu3")
    assert run("--problem", "branin", "--model", "random", "--budget", "2", "--cpu-devices", "1",
               "--out", "runs/cpu1") == 0


@pytest.mark.slow
def test_ensemble_run_in_a_fresh_process_splits_the_cpu():
    """``jbo run --model ensemble`` asks JAX for one CPU device per core (at most one per network) before
    JAX starts, and the split run completes with every evaluation journalled."""
    import subprocess
    import sys

    script = ("import sys, jax; from jbo import cli; code = cli.main(sys.argv[1:]); "
              "print('devices', len(jax.devices())); sys.exit(code)")
    argv = ["run", "--quiet", "--model", "ensemble", "--n-networks", "3", "--hidden", "8", "--network-steps", "50",
            "--budget", "7", "--out", "runs/ens"]
    # CPU devices are what the option splits, also where an accelerator would be JAX's default
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    cores = os.cpu_count() or 1
    assert f"devices {max(1, min(cores, 3))}" in out.stdout
    observations = [r for r in read_journal("runs/ens") if r["type"] == "observation"]
    assert len(observations) == 7 and all(r["status"] == "ok" for r in observations)


def test_escape_flag_reaches_the_journal_and_needs_a_gp(capsys):
    with pytest.raises(SystemExit) as err:
        run("--model", "random", "--escape", "--budget", "2", "--out", "runs/r")
    assert err.value.code == 2 and "escape" in capsys.readouterr().err
    assert run("--budget", "3", "--n-init", "3", "--escape", "--out", "runs/e") == 0  # initial design only
    assert read_journal("runs/e")[0]["settings"]["model"]["escape"]["radius"] == 2.0
    assert run("--budget", "2", "--n-init", "2", "--out", "runs/d") == 0
    assert read_journal("runs/d")[0]["settings"]["model"]["escape"] is False


def test_units_flag_reaches_the_journal_and_needs_bock(capsys):
    with pytest.raises(SystemExit) as err:
        run("--model", "gp", "--units", "objective", "--budget", "2", "--out", "runs/gu")
    assert err.value.code == 2 and "--units" in capsys.readouterr().err
    assert run("--model", "bock-b", "--units", "objective", "--budget", "2", "--n-init", "2", "--out", "runs/bu") == 0
    model = read_journal("runs/bu")[0]["settings"]["model"]
    assert model["units"] == "objective" and model["boundary"] is True


def test_centre_design_flag_evaluates_the_centre_first_and_is_checked_on_resume(capsys):
    assert run("--budget", "2", "--n-init", "2", "--design", "centre", "--out", "runs/centre") == 0
    header, first = read_journal("runs/centre")[:2]
    assert header["settings"]["design"] == "centre"
    assert first["config"] == {"x1": 2.5, "x2": 7.5}  # Branin's box [-5, 10] x [0, 15]
    capsys.readouterr()
    with pytest.raises(SystemExit) as err:
        run("--resume", "--design", "sobol", "--budget", "3", "--out", "runs/centre")
    assert err.value.code == 2 and "--design 'sobol'" in capsys.readouterr().err


def test_output_warping_flag_is_recorded_and_checked_on_resume(capsys):
    assert run("--budget", "2", "--n-init", "2", "--output-warping", "rank", "--out", "runs/rank") == 0
    assert read_journal("runs/rank")[0]["settings"]["output_warping"] == "rank"
    capsys.readouterr()
    with pytest.raises(SystemExit) as err:
        run("--resume", "--output-warping", "none", "--budget", "3", "--out", "runs/rank")
    assert err.value.code == 2 and "--output-warping 'none'" in capsys.readouterr().err


def test_trust_region_flag_is_recorded_and_checked_on_resume(capsys):
    assert run("--budget", "4", "--n-init", "2", "--inference", "map", "--out", "runs/trust") == 0
    assert read_journal("runs/trust")[0]["settings"]["trust_region"] is True  # the GP's default
    assert run("--budget", "2", "--n-init", "2", "--no-trust-region", "--out", "runs/global") == 0
    assert read_journal("runs/global")[0]["settings"]["trust_region"] is False
    capsys.readouterr()
    with pytest.raises(SystemExit) as err:
        run("--resume", "--trust-region", "--budget", "3", "--out", "runs/global")
    assert err.value.code == 2 and "--trust-region True" in capsys.readouterr().err


@dataclasses.dataclass(frozen=True)
class Nearby(jbo.models.ModelConfig):
    """The best observation, jittered (a model of one's own).

    Attributes:
      spread: standard deviation of the jitter, in unit-cube widths.
    """

    spread: float = 0.1

    def step(self, space, acquisition, state, inputs, key):
        data = inputs.data
        best = data.x[jnp.argmin(jnp.where(data.mask, data.y, jnp.inf))]
        return jnp.clip(best + self.spread * jax.random.normal(key, best.shape, best.dtype), 0.0, 1.0), state, {}


def test_model_options_come_from_the_configs_fields(capsys):
    """Every model's options are flags made from its fields, with their docstrings; a registered model of
    one's own gets its own, and a flag of another model is an error naming the model's options."""
    models.register("nearby", Nearby)
    try:
        run_help = cli.build_parser()._subparsers._group_actions[0].choices["run"].format_help()
        assert "--spread" in run_help and "standard deviation of the jitter" in run_help
        assert "--num-samples" in run_help and "--quadratic-prior" in run_help and "--units" in run_help
        assert run("--model", "nearby", "--spread", "0.2", "--budget", "5", "--n-init", "3", "--out", "runs/nb") == 0
        model = read_journal("runs/nb")[0]["settings"]["model"]
        assert model["spread"] == 0.2 and model["$type"] == "test_cli:Nearby"
        with pytest.raises(SystemExit) as err:
            run("--model", "nearby", "--kernel", "se", "--budget", "2", "--out", "runs/nb2")
        assert err.value.code == 2 and "--kernel (kernel): not option(s) of --model nearby (its options: spread)" \
            in capsys.readouterr().err
    finally:
        models.SHORTCUTS.pop("nearby")


STUDY_SCRIPT = '''
import jbo
from jbo.benchmarks import get_problem

problem = get_problem("branin")
ABLATION = dict(fn=problem.evaluate, space=problem.space(), budget=8, seeds=[0, 1],
                arms={"map": dict(inference="map", n_init=4), "random": dict(model="random")})
'''


def test_study_command_runs_and_continues_a_declared_study(tmp_path, capsys):
    (tmp_path / "studies.py").write_text(STUDY_SCRIPT)
    store = tmp_path / "store"
    assert cli.main(["study", f"{tmp_path / 'studies.py'}:ABLATION", "--store", str(store)]) == 0
    first = capsys.readouterr().out
    assert "| map |" in first and "| random |" in first and (store / "study.json").exists()
    assert cli.main(["study", f"{tmp_path / 'studies.py'}:ABLATION", "--store", str(store)]) == 0
    assert capsys.readouterr().out.splitlines()[2].split("|")[2] == first.splitlines()[2].split("|")[2]
    with pytest.raises(SystemExit, match="defines no 'NOPE'"):
        cli.main(["study", f"{tmp_path / 'studies.py'}:NOPE", "--store", str(store)])
    with pytest.raises(SystemExit, match="SCRIPT_OR_MODULE:NAME"):
        cli.main(["study", "studies.py", "--store", str(store)])
