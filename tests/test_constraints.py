"""Unknown constraints in the loop: tell(feasible=False), failures="constraint", constrained EI."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo import journal as journal_io
from jbo.benchmarks import get_problem

BRANIN = get_problem("branin")
SPACE = BRANIN.space()
SMALL = dict(inference="map", n_init=5, maximize=dict(num_anchors=128, num_local=16, top_k=2, num_steps=10))


def crashing(config):
    """Branin whose evaluations crash for x1 > 4 (two fifths of the box)."""
    value = BRANIN.evaluate(config)
    if isinstance(value, float):
        return float("nan") if config["x1"] > 4.0 else value
    return jnp.where(config["x1"] > 4.0, jnp.nan, value)


def test_infeasible_evaluations_are_journaled_never_best_and_resume(tmp_path):
    path = tmp_path / "run.jsonl"
    opt = jbo.Optimizer(SPACE, seed=0, journal=path, **SMALL)
    for config in opt.ask(n=5):
        opt.tell(config, BRANIN.evaluate(config), feasible=config["x1"] <= 4.0)
    infeasible = [h for h in opt.history if h["status"] == "infeasible"]
    assert infeasible and all(h["feasible"] is False for h in infeasible)
    opt.tell({"x1": 9.42478, "x2": 2.475}, 0.3979, feasible=False)  # the optimum's value, but infeasible
    opt.tell({"x1": 8.0, "x2": 1.0}, None, feasible=False)  # no value: fine when infeasible
    assert opt.best[1] > 0.3979 + 1e-6
    config = opt.ask()  # the program now models feasibility
    assert opt.last_info["phase"] == "model" and SPACE.validate(config) == config
    opt.close()
    records = [r for r in journal_io.read(path)[1]]
    assert sum(r.get("feasible") is False for r in records) == len(infeasible) + 2
    again = jbo.Optimizer.resume(path)
    np.testing.assert_array_equal(again.state.feasible, opt.state.feasible)
    assert again.best == opt.best


@pytest.mark.parametrize("bad", [0, 1, "no", np.float64(0.0)])
def test_feasible_must_be_a_bool(bad):
    opt = jbo.Optimizer(SPACE, seed=0, **SMALL)
    with pytest.raises(ValueError, match="feasible must be True or False"):
        opt.tell({"x1": 0.0, "x2": 0.0}, 1.0, feasible=bad)
    assert opt.n_observed == 0  # nothing was recorded


def test_failures_as_constraints_steer_away_from_crashes_in_both_drivers():
    """With failures="constraint" a classifier of where evaluations crash discounts EI; the same run
    through minimize_many and through minimize."""
    many = jbo.minimize_many(crashing, SPACE, budget=14, seeds=[1], failures="constraint", **SMALL)
    seq = jbo.minimize(crashing, SPACE, budget=14, seed=1, failures="constraint", **SMALL)
    np.testing.assert_allclose(np.nan_to_num(seq.values, nan=-1.0), np.nan_to_num(many.values[0], nan=-1.0),
                               rtol=1e-6)
    assert np.isfinite(seq.best_value)


def test_constraints_need_a_probability_acquisition():
    opt = jbo.Optimizer(SPACE, seed=0, failures="constraint", acquisition="ucb", **SMALL)
    for x1, x2 in [(-3.0, 10.0), (0.0, 5.0), (2.0, 2.0), (6.0, 1.0), (9.0, 9.0), (-1.0, 12.0)]:
        config = {"x1": x1, "x2": x2}
        opt.tell(config, crashing(config))
    with pytest.raises(ValueError, match="needs a positive acquisition given as a log"):
        opt.ask()


def test_known_constraint_values_are_modelled_and_validated(tmp_path):
    """Optuna-style constraint values: feasible when all <= 0, journaled and resumed, modelled by the
    objective's surrogate; a changing number of values is refused and nothing is recorded."""
    path = tmp_path / "run.jsonl"
    opt = jbo.Optimizer(SPACE, seed=0, journal=path, **SMALL)
    for config in opt.ask(n=6):
        c = [config["x1"] - 4.0, 1.0 - config["x2"]]  # feasible: x1 <= 4 and x2 >= 1
        opt.tell(config, BRANIN.evaluate(config), constraints=c)
    assert [h["status"] == "ok" for h in opt.history] == [
        h["config"]["x1"] <= 4.0 and h["config"]["x2"] >= 1.0 for h in opt.history]
    with pytest.raises(ValueError, match="same number of constraint values"):
        opt.tell({"x1": 0.0, "x2": 5.0}, 1.0, constraints=[0.5])
    with pytest.raises(ValueError, match="contradicts"):
        opt.tell({"x1": 0.0, "x2": 5.0}, 1.0, feasible=True, constraints=[0.5, -1.0])
    with pytest.raises(ValueError, match="sequence of numbers"):
        opt.tell({"x1": 0.0, "x2": 5.0}, 1.0, constraints=["a", 1])
    assert opt.n_observed == 6
    config = opt.ask()
    assert opt.last_info["phase"] == "model" and SPACE.validate(config) == config
    opt.close()
    again = jbo.Optimizer.resume(path)
    np.testing.assert_array_equal(again.state.constraints, opt.state.constraints)


@pytest.mark.slow
def test_an_objective_can_report_constraint_values():
    def objective(config):
        return BRANIN.evaluate(config), [config["x1"] - 4.0]

    result = jbo.minimize(objective, SPACE, budget=8, seed=0, **SMALL)
    statuses = [h["status"] for h in result.history]
    assert statuses == ["ok" if h["config"]["x1"] <= 4.0 else "infeasible" for h in result.history]
    assert all(len(h["constraints"]) == 1 for h in result.history)
    assert result.best_config["x1"] <= 4.0


@pytest.mark.slow
def test_both_classifiers_run_a_crashing_minimisation():
    """GP-type models take classifier="least_squares" (default) or "laplace"; both run a crashing run."""
    for kind in ("least_squares", "laplace"):
        result = jbo.minimize(crashing, SPACE, budget=8, seed=0, failures="constraint", classifier=kind, **SMALL)
        assert len(result.history) == 8


def test_bad_classifier_names_are_refused():
    """An unknown classifier is refused naming the field, and DNGO (its own classifier) has no such option."""
    with pytest.raises(ValueError, match="classifier"):
        jbo.Optimizer(SPACE, classifier="probit", **SMALL)
    with pytest.raises(ValueError, match="classifier"):
        jbo.Optimizer(SPACE, model="dngo", classifier="laplace")
