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


def known_constraints(config):
    """Optuna-style constraint values: feasible when all <= 0, i.e. x1 <= 4 and x2 >= 1."""
    return [config["x1"] - 4.0, 1.0 - config["x2"]]


@pytest.fixture(scope="module")
def constrained(tmp_path_factory):
    """One journaled run told all the model learns feasibility from: known constraint values, evaluations
    told infeasible (with a value and without) and a crash (failures="constraint"); then one model suggestion,
    whose program models them all (the module's one ask/tell compilation)."""
    path = tmp_path_factory.mktemp("constrained") / "run.jsonl"
    opt = jbo.Optimizer(SPACE, seed=0, journal=path, failures="constraint", **SMALL)
    for config in opt.ask(n=5) + [{"x1": 1.0, "x2": 0.5}]:  # the design, then an infeasible x2 < 1
        opt.tell(config, BRANIN.evaluate(config), constraints=known_constraints(config))
    constrained_rows = len(opt.history)
    opt.tell({"x1": 9.42478, "x2": 2.475}, 0.3979, feasible=False)  # the optimum's value, but infeasible
    opt.tell({"x1": 8.0, "x2": 1.0}, None, feasible=False)  # no value: fine when infeasible
    opt.tell({"x1": 6.0, "x2": 8.0}, crashing({"x1": 6.0, "x2": 8.0}))  # a crash
    told = len(opt.history)
    config = opt.ask()  # the program now models feasibility and the constraint values
    info = dict(opt.last_info)
    opt.close()
    return dict(opt=opt, path=path, constrained_rows=constrained_rows, told=told, config=config, info=info)


def test_infeasible_evaluations_are_journaled_never_best_and_resume(constrained):
    opt, path = constrained["opt"], constrained["path"]
    history = opt.history[: constrained["told"]]
    infeasible = [h for h in history if h["status"] == "infeasible"]
    assert len(infeasible) >= 3 and all(h["feasible"] is False for h in infeasible)
    assert [h["status"] for h in history[-3:]] == ["infeasible", "infeasible", "failed"]
    assert opt.best[1] > 0.3979 + 1e-6  # the optimum's value was infeasible
    assert opt.best[0]["x1"] <= 4.0 and opt.best[0]["x2"] >= 1.0
    assert constrained["info"]["phase"] == "model" and SPACE.validate(constrained["config"]) == constrained["config"]
    records = [r for r in journal_io.read(path)[1]]
    assert sum(r.get("feasible") is False for r in records) == len(infeasible)
    again = jbo.Optimizer.resume(path)
    np.testing.assert_array_equal(again.state.feasible, opt.state.feasible)
    assert not again.state.feasible.all()
    assert again.best == opt.best


@pytest.mark.parametrize("bad", [0, 1, "no", np.float64(0.0)])
def test_feasible_must_be_a_bool(bad):
    opt = jbo.Optimizer(SPACE, seed=0, **SMALL)
    with pytest.raises(ValueError, match="feasible must be True or False"):
        opt.tell({"x1": 0.0, "x2": 0.0}, 1.0, feasible=bad)
    assert opt.n_observed == 0  # nothing was recorded


def test_failures_as_constraints_run_in_the_compiled_driver():
    """With failures="constraint" a classifier of where evaluations crash discounts EI inside a whole run (the
    ask/tell loop's: the ``constrained`` fixture)."""
    many = jbo.minimize_many(crashing, SPACE, budget=14, seeds=[1], failures="constraint", **SMALL)
    assert np.any(np.isnan(many.values[0])) and np.isfinite(many.best_values[0])
    assert np.all(many.x[0][np.isnan(many.values[0]), 0] > 9.0 / 15.0)  # crashes only where x1 > 4


@pytest.mark.slow
def test_failures_as_constraints_steer_away_from_crashes_in_both_drivers():
    """With failures="constraint" a classifier of where evaluations crash discounts EI; the same run
    through minimize_many and through minimize. Default tests cover it in parts: the classifier of crashes
    in the whole run (test_failures_as_constraints_run_in_the_compiled_driver) and in the ask/tell loop
    (the ``constrained`` fixture), and both drivers make the same run with failed evaluations
    (test_many.py::test_ask_tell_and_minimize_many_are_one_implementation)."""
    many = jbo.minimize_many(crashing, SPACE, budget=14, seeds=[1], failures="constraint", **SMALL)
    seq = jbo.minimize(crashing, SPACE, budget=14, seed=1, failures="constraint", **SMALL)
    np.testing.assert_allclose(np.nan_to_num(seq.values, nan=-1.0), np.nan_to_num(many.values[0], nan=-1.0),
                               rtol=1e-6)
    assert np.isfinite(seq.best_value)


def _history(y, feasible):
    y = jnp.asarray(y, jnp.float64)
    x = jnp.linspace(0.0, 1.0, len(y))[:, None]
    mask = jnp.asarray([True] * (len(y) - 1) + [False])  # the last row is padding
    return jbo.loop.History(x, y, mask, None if feasible is None else jnp.asarray(feasible))


@pytest.mark.parametrize("policy", ["median", "ignore", "worst"])
def test_infeasible_rows_enter_the_objective_model_by_the_policy(policy):
    """Infeasible rows (told, or crashes under failures="constraint") sit at the median / worst of the feasible
    values, or are left out; a failed feasible row still follows the failure policy ("worst")."""
    values = np.array([3.0, 1.0, np.nan, 10.0, 2.0, np.nan, np.nan])
    told = np.array([True, True, True, True, False, False, True])  # rows 4-5 told infeasible; row 2 failed
    data, best, num_ok, _ = jbo.loop.standardize(_history(values, told), "worst", infeasible=policy)
    feasible_values = np.array([3.0, 1.0, 10.0])
    fill = {"median": np.median(feasible_values), "worst": 10.0, "ignore": None}[policy]
    expected = np.array([3.0, 1.0, 10.0, 10.0] + ([] if fill is None else [fill, fill]))
    rows = [0, 1, 2, 3] + ([] if fill is None else [4, 5])
    assert np.asarray(data.mask).tolist() == [i in rows for i in range(7)]
    standardised = (expected - expected.mean()) / expected.std()
    np.testing.assert_allclose(np.asarray(data.y)[rows], standardised, rtol=1e-12)
    assert int(num_ok) == 3 and float(best) == pytest.approx(standardised.min())
    # failures="constraint" counts the crash (row 2) as infeasible too
    data, _, _, _ = jbo.loop.standardize(_history(values, None), "constraint", infeasible=policy)
    crashed = [2, 5]
    assert all(bool(data.mask[i]) == (fill is not None) for i in crashed)
    if fill is not None:
        ok = np.array([3.0, 1.0, 10.0, 2.0])
        fill = np.median(ok) if policy == "median" else ok.max()
        full = np.array([3.0, 1.0, fill, 10.0, 2.0, fill])
        np.testing.assert_allclose(np.asarray(data.y)[:6], (full - full.mean()) / full.std(), rtol=1e-12)


def test_bad_infeasible_policy_is_refused():
    with pytest.raises(ValueError, match="infeasible"):
        jbo.Optimizer(SPACE, seed=0, infeasible="zero")


def test_telling_infeasible_is_failures_as_constraints():
    """``tell(c, None, feasible=False)`` under the default failure policy and ``tell(c, None)`` under
    ``failures="constraint"`` model the same: the same suggestions."""
    told = jbo.Optimizer(SPACE, seed=3, **SMALL)
    crashes = jbo.Optimizer(SPACE, seed=3, failures="constraint", **SMALL)
    for _ in range(8):
        config = told.ask()
        assert crashes.ask() == pytest.approx(config, rel=1e-9)
        value = crashing(config)
        told.tell(config, None if np.isnan(value) else value, feasible=not np.isnan(value))
        crashes.tell(config, None if np.isnan(value) else value)
    assert not told.state.feasible.all()


def test_constraints_need_a_probability_acquisition():
    opt = jbo.Optimizer(SPACE, seed=0, failures="constraint", acquisition="ucb", **SMALL)
    for x1, x2 in [(-3.0, 10.0), (0.0, 5.0), (2.0, 2.0), (6.0, 1.0), (9.0, 9.0), (-1.0, 12.0)]:
        config = {"x1": x1, "x2": x2}
        opt.tell(config, crashing(config))
    with pytest.raises(ValueError, match="needs a positive acquisition given as a log"):
        opt.ask()


def test_known_constraint_values_are_modelled_and_validated(constrained):
    """Optuna-style constraint values: feasible when all <= 0, journaled and resumed, modelled by the
    objective's surrogate (the fixture's suggestion); a changing number of values is refused and nothing is
    recorded."""
    opt = constrained["opt"]
    rows = opt.history[: constrained["constrained_rows"]]
    assert [h["status"] == "ok" for h in rows] == [h["config"]["x1"] <= 4.0 and h["config"]["x2"] >= 1.0 for h in rows]
    assert {h["status"] for h in rows} == {"ok", "infeasible"}
    assert constrained["info"]["phase"] == "model" and SPACE.validate(constrained["config"]) == constrained["config"]
    np.testing.assert_array_equal(opt.state.constraints[: len(rows)], [known_constraints(h["config"]) for h in rows])
    assert np.isnan(opt.state.constraints[len(rows):]).all()  # told without constraint values: unknown
    again = jbo.Optimizer.resume(constrained["path"])
    np.testing.assert_array_equal(again.state.constraints, opt.state.constraints)

    fresh = jbo.Optimizer(SPACE, seed=0, **SMALL)  # the checks come before anything is recorded (no model asked)
    fresh.tell({"x1": 0.0, "x2": 5.0}, 1.0, constraints=[-4.0, -4.0])
    with pytest.raises(ValueError, match="same number of constraint values"):
        fresh.tell({"x1": 0.0, "x2": 5.0}, 1.0, constraints=[0.5])
    with pytest.raises(ValueError, match="contradicts"):
        fresh.tell({"x1": 0.0, "x2": 5.0}, 1.0, feasible=True, constraints=[0.5, -1.0])
    with pytest.raises(ValueError, match="sequence of numbers"):
        fresh.tell({"x1": 0.0, "x2": 5.0}, 1.0, constraints=["a", 1])
    assert fresh.n_observed == 1


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
