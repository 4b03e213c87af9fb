"""JboSampler: jbo's models inside Optuna studies (in-memory and journal-file storages, workers, failed,
pruned and constrained trials, the parameter maps, determinism)."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
import optuna
from hypothesis import strategies as st
from optuna.distributions import (
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import TrialState, create_trial

import jbo
from jbo.integrations.optuna import JboSampler, _parameter, space_of

optuna.logging.set_verbosity(optuna.logging.WARNING)

# Every study here stays in the first padded size. Two slice samples compile faster than a MAP fit (L-BFGS);
# no test here is about the inference.
FAST = dict(inference="slice", num_samples=2, num_burnin=4, n_startup_trials=4)
CHOICES = ["sgd", "adam", None, True, 3]


def objective(trial):
    """A user's objective: log float, int, log int, stepped int and float, categorical of mixed types."""
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    width = trial.suggest_int("width", 1, 64, log=True)
    depth = trial.suggest_int("depth", 1, 6)
    batch = trial.suggest_int("batch", 16, 128, step=16)
    dropout = trial.suggest_float("dropout", 0.0, 0.5, step=0.1)
    optimizer = trial.suggest_categorical("optimizer", CHOICES)
    return ((math.log10(lr) + 3) ** 2 + (math.log2(width) - 3) ** 2 + (depth - 2) ** 2 / 4
            + (batch - 64) ** 2 / 4096 + dropout + (0.0 if optimizer == "adam" else 1.0))


def in_distribution(trial) -> bool:
    return all(dist._contains(dist.to_internal_repr(trial.params[name])) for name, dist in trial.distributions.items())


# -- the parameter maps --------------------------------------------------------------------------------
DISTRIBUTIONS = [FloatDistribution(1e-5, 1e-1, log=True), FloatDistribution(-2.0, 3.0),
                 FloatDistribution(0.0, 0.5, step=0.1), FloatDistribution(-1.0, 1.0, step=0.25),
                 IntDistribution(1, 64, log=True), IntDistribution(-3, 7), IntDistribution(16, 128, step=16),
                 IntDistribution(0, 9, step=3), CategoricalDistribution(CHOICES), CategoricalDistribution([1.5, 2.5])]


@settings(max_examples=60, deadline=None)
@given(index=st.integers(0, len(DISTRIBUTIONS) - 1), u=st.floats(0.0, 1.0))
def test_every_point_of_the_cube_decodes_into_the_distribution_and_back(index, u):
    """Any point jbo suggests is a value of the Optuna distribution, and that value maps back to the same
    jbo value (log, step and int grids and categoricals of mixed types)."""
    dist = DISTRIBUTIONS[index]
    parameter = _parameter("p", dist)
    space = jbo.Space({"p": parameter.param})
    x = np.full(space.dim, u)
    jbo_value = space.decode(x)["p"]
    value = parameter.to_optuna(jbo_value)
    assert dist._contains(dist.to_internal_repr(value)), (dist, value)
    assert parameter.to_jbo(value) == jbo_value
    assert space.validate({"p": parameter.to_jbo(value)}) == {"p": jbo_value}


def test_step_grids_are_ordered_indices_and_single_values_are_left_out():
    space = space_of({"q": FloatDistribution(0.0, 0.5, step=0.1), "b": IntDistribution(16, 128, step=16),
                      "fixed": IntDistribution(3, 3), "c": CategoricalDistribution(["a", "b", "c"])})
    assert space.names == ("q", "b", "c")
    assert (space.params["q"].low, space.params["q"].high) == (0, 5)
    assert (space.params["b"].low, space.params["b"].high) == (0, 7)
    assert _parameter("q", FloatDistribution(0.0, 0.5, step=0.1)).to_optuna(5) == 0.5  # on the grid's end, not past


# -- a user's objective, unchanged --------------------------------------------------------------------
def test_an_optuna_objective_runs_unchanged_and_is_reproducible():
    """Log floats, ints and categoricals round-trip; after the start-up trials jbo's model suggests; the same
    seed gives the same trials."""
    studies = []
    for _ in range(2):
        study = optuna.create_study(sampler=JboSampler(seed=3, **FAST))
        study.optimize(objective, n_trials=9)
        studies.append(study)
    first, second = studies
    assert [t.params for t in first.trials] == [t.params for t in second.trials]
    assert all(t.state == TrialState.COMPLETE and in_distribution(t) for t in first.trials)
    phases = [t.system_attrs.get("jbo", {}).get("phase") for t in first.trials]
    assert phases[0] is None  # the first trial has no search space yet: the independent sampler's
    assert phases[1:4] == ["initial"] * 3 and phases[4:] == ["model"] * 5
    assert len({tuple(t.params.items()) for t in first.trials}) == 9
    other = optuna.create_study(sampler=JboSampler(seed=4, **FAST))
    other.optimize(objective, n_trials=6)
    assert [t.params for t in other.trials[1:6]] != [t.params for t in first.trials[1:6]]


@pytest.mark.parametrize("startup", [8, pytest.param(4, marks=pytest.mark.slow)])
def test_maximize_failed_pruned_constrained_and_added_trials_reach_the_model(tmp_path, startup):
    """Told trials from ``add_trial`` are warm-start observations: values negated for ``maximize``, a failed
    trial through the failure policy, a pruned one at its last intermediate value (or as a failure), the
    constraints of ``trial.constraints`` as jbo's constraint values. A trial running in another worker of the
    same journal-file storage is a pending point.

    By default the asked trial is still in jbo's design (8 start-up trials): what the model would see is checked
    on jbo's state, and no program is compiled. The slow case (4 start-up trials) also runs the model on it, a
    program of its own (constraint values, infeasible and failed rows, a pending point) that
    test_constraints.py's ``constrained`` fixture and test_bring_your_own.py's constrained run with pending points
    compile by default."""
    fast = dict(FAST, n_startup_trials=startup)
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    space = {"x": FloatDistribution(0.0, 1.0), "n": IntDistribution(1, 9)}
    storage = JournalStorage(JournalFileBackend(str(tmp_path / "journal.log")))

    def add(study, x, n, **fields):
        study.add_trial(create_trial(params={"x": x, "n": n}, distributions=space, **fields))

    for pruned, expected in (("last_value", -0.7), ("failure", np.nan)):
        sampler = JboSampler(seed=0, pruned=pruned, **fast)
        study = optuna.create_study(study_name=pruned, storage=storage, direction="maximize", sampler=sampler)
        add(study, 0.1, 2, value=1.5, system_attrs={"constraints": (-1.0, 0.5)})
        add(study, 0.2, 3, value=2.5, system_attrs={"constraints": (-1.0, -0.5)})
        add(study, 0.3, 4, state=TrialState.FAIL)
        add(study, 0.4, 5, state=TrialState.PRUNED, intermediate_values={0: 0.2, 3: 0.7})
        add(study, 0.5, 6, value=3.0)
        other_worker = optuna.load_study(study_name=pruned, sampler=JboSampler(seed=0, **fast),
                                         storage=JournalStorage(JournalFileBackend(str(tmp_path / "journal.log"))))
        other_worker.enqueue_trial({"x": 0.6, "n": 7})
        running = other_worker.ask()  # given values: that worker's jbo is not asked
        running.suggest_float("x", 0.0, 1.0)
        running.suggest_int("n", 1, 9)
        trial = study.ask()
        x = trial.suggest_float("x", 0.0, 1.0)  # jbo asks here, and sees the other worker's trial running
        n = trial.suggest_int("n", 1, 9)
        assert 0.0 <= x <= 1.0 and 1 <= n <= 9
        opt = sampler._optimizer
        np.testing.assert_allclose(opt.state.y, [-1.5, -2.5, np.nan, expected, -3.0])
        assert list(opt.state.feasible) == [False, True, True, True, True]
        np.testing.assert_array_equal(opt.state.constraints[:2], [[-1.0, 0.5], [-1.0, -0.5]])
        assert np.isnan(opt.state.constraints[2:]).all()
        assert [h["config"] for h in opt.history][:2] == [{"x": 0.1, "n": 2}, {"x": 0.2, "n": 3}]
        assert study._storage.get_trial_system_attrs(trial._trial_id)["jbo"] == {
            "phase": "model" if startup <= 6 else "initial", "pending": 1, "observed": 5}
        np.testing.assert_array_equal(opt.state.pending[:1], [opt.space.encode({"x": 0.6, "n": 7})])  # running elsewhere
        other_worker.tell(running, 4.0)
        study.tell(trial, 1.0)
        assert [t.number for t in study.trials] == list(range(7))


def test_enqueued_trials_keep_their_values_and_constraints_func_is_stored():
    calls = []

    def constraints(trial):
        calls.append(trial.number)
        return [trial.params["x"] - 0.5]

    sampler = JboSampler(seed=1, constraints_func=constraints, inference="map", n_startup_trials=8)
    study = optuna.create_study(sampler=sampler)
    study.enqueue_trial({"x": 0.9})
    study.optimize(lambda t: (t.suggest_float("x", 0.0, 1.0) - 0.25) ** 2, n_trials=4)
    assert study.trials[0].params == {"x": 0.9}
    assert calls == list(range(4))
    assert study.trials[0].system_attrs["constraints"] == pytest.approx((0.4,))
    assert list(sampler._optimizer.state.feasible[:1]) == [False]


def test_an_explicit_conditional_space_drives_a_tree_model():
    """``space=`` (a conditional jbo space) lets an Optuna objective's define-by-run branches reach the tree
    model: every suggested value is the one jbo asked for its trial."""
    space = jbo.Space({"optimizer": jbo.Categorical(["sgd", "adam"]),
                       "lr": jbo.Real(1e-4, 1.0, log=True, when={"optimizer": ["sgd"]}),
                       "beta": jbo.Real(0.5, 0.999, when={"optimizer": ["adam"]})})

    def branching(trial):
        if trial.suggest_categorical("optimizer", ["sgd", "adam"]) == "sgd":
            return (math.log10(trial.suggest_float("lr", 1e-4, 1.0, log=True)) + 2) ** 2
        return 0.5 + (trial.suggest_float("beta", 0.5, 0.999) - 0.9) ** 2

    sampler = JboSampler("tree", seed=0, space=space, **FAST)
    study = optuna.create_study(sampler=sampler)
    study.optimize(branching, n_trials=6)
    assert sampler._optimizer.n_observed == 5  # every finished trial but the last (told at the next ask)
    for trial, told in zip(study.trials, sampler._optimizer.history):
        assert told["config"] == trial.params
    assert [t.system_attrs["jbo"]["phase"] for t in study.trials] == ["initial"] * 4 + ["model"] * 2


def test_bad_options_are_refused_at_construction():
    with pytest.raises(ValueError, match="pruned"):
        JboSampler(pruned="ignore")
    with pytest.raises(ValueError, match="n_networks"):
        JboSampler("gp", n_networks=3)
    with pytest.raises(ValueError, match="journal"):
        JboSampler(journal="run.jsonl")
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=JboSampler())
    with pytest.raises(ValueError, match="multi-objective"):
        study.optimize(lambda t: (t.suggest_float("x", 0, 1), 1.0), n_trials=2)


WORKER = """
import sys, time
import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from jbo.integrations.optuna import JboSampler

optuna.logging.set_verbosity(optuna.logging.WARNING)
storage = JournalStorage(JournalFileBackend(sys.argv[1]))
study = optuna.load_study(study_name="shared", storage=storage,
                          sampler=JboSampler(seed=0, n_startup_trials=12))

def objective(trial):
    x = trial.suggest_float("x", -2.0, 2.0)
    k = trial.suggest_int("k", 0, 4)
    time.sleep(0.2)  # long enough for the other worker's trials to be seen running
    return (x - 0.5) ** 2 + k

study.optimize(objective, n_trials=5)
"""


def test_two_workers_share_one_journal_storage(tmp_path):
    """Two processes on one journal file (jbo's initial design: no model to compile) complete their trials,
    each recorded once, with distinct points: a design point is the trial's number, a first trial's random
    values are seeded by it."""
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    path = str(tmp_path / "journal.log")
    storage = JournalStorage(JournalFileBackend(path))
    optuna.create_study(study_name="shared", storage=storage)
    root = os.path.dirname(os.path.dirname(os.path.abspath(jbo.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, path], env=env, stderr=subprocess.PIPE)
               for _ in range(2)]
    for worker in workers:
        assert worker.wait(timeout=600) == 0, worker.stderr.read().decode()[-3000:]
    trials = optuna.load_study(study_name="shared", storage=JournalStorage(JournalFileBackend(path))).trials
    assert len(trials) == 10 and sorted(t.number for t in trials) == list(range(10))
    assert all(t.state == TrialState.COMPLETE for t in trials)
    assert len({(t.params["x"], t.params["k"]) for t in trials}) == 10
