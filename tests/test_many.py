"""Whole runs as one compiled program (jbo.minimize_many), and the one step both drivers share.

A 2-d Branin problem with MAP inference and a small acquisition search keeps the compilations short.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo import many
from jbo.benchmarks import get_problem
from jbo.models import sampled

BRANIN = get_problem("branin")
SPACE = BRANIN.space()
SMALL = dict(inference="map", n_init=4, maximize=dict(num_anchors=64, num_local=8, top_k=2, num_steps=10))


def sometimes_nan(config):
    """Branin, but nan (a failed evaluation) where x1 > 2."""
    value = BRANIN.evaluate(config)
    return jnp.where(config["x1"] > 2.0, jnp.nan, value)


# search sizes no other test uses, so the program is traced by `compiled_run` whatever ran before
OPTIONS = dict(SMALL, maximize=dict(SMALL["maximize"], local_scale=0.0421))
BUDGET = 12


@pytest.fixture(scope="module")
def compiled_run():
    """One whole-run program (an objective that fails in places), 3 seeds, and the shapes ``maximize`` was
    traced with meanwhile: the tests below assert on it (one compilation for the module)."""
    traces = []
    original = sampled.maximize

    def counting_maximize(score_fn, anchors, *args, **kwargs):  # runs only while a step is traced
        traces.append(anchors.shape)
        return original(score_fn, anchors, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sampled, "maximize", counting_maximize)
        result = jbo.minimize_many(sometimes_nan, SPACE, budget=BUDGET, seeds=[0, 1, 2], **OPTIONS)
    return result, traces


def test_one_compilation_for_a_whole_run_and_results(compiled_run):
    result, traces = compiled_run
    # One compiled step for 3 seeds x 8 model-based suggestions (traced twice: abstractly first, for the shapes of
    # its diagnostics, which the run carries from segment to segment).
    assert len(traces) == 2
    assert result.values.shape == (3, 12) and result.x.shape == (3, 12, 2)
    np.testing.assert_allclose(result.best_values, np.nanmin(result.values, axis=1))
    np.testing.assert_allclose(result.best_so_far[:, -1], result.best_values)
    assert np.all(result.best_so_far[:, 1:] <= result.best_so_far[:, :-1])  # non-increasing (inf before a success)
    for config, best in zip(result.best_configs, result.best_values):
        assert SPACE.validate(config) == config
        assert BRANIN.evaluate(config) == pytest.approx(best, rel=1e-9)
    assert 0 < result.compile_seconds < result.seconds
    assert not np.array_equal(result.x[0], result.x[1])  # the seeds differ


def test_ask_tell_and_minimize_many_are_one_implementation(compiled_run):
    """The same seed, the same padded data and the same key give the same suggestions on both paths
    (failed evaluations included)."""
    result, _ = compiled_run
    opt = jbo.Optimizer(SPACE, seed=0, **OPTIONS)
    for i in range(BUDGET):
        config = opt.ask(size=many.capacity(BUDGET))  # the padded size the compiled run uses
        np.testing.assert_allclose(opt.state.pending[-1], result.x[0, i], rtol=0, atol=1e-12)
        opt.tell(config, sometimes_nan(config))
    assert any(h["status"] == "failed" for h in opt.history)
    # The points agree to 1e-12; Branin's gradient (up to ~10^2 per unit-cube unit) scales that in the values.
    np.testing.assert_allclose([np.nan if h["value"] is None else h["value"] for h in opt.history],
                               result.values[0], rtol=1e-10)


@pytest.mark.slow
def test_run_function_vmaps_over_the_ucb_weight():
    run = many.run_function(BRANIN.evaluate, SPACE, 8, acquisition="ucb", **SMALL)
    keys = jax.vmap(jax.random.key)(jnp.zeros(3, jnp.int32))
    traces = jax.jit(jax.vmap(run))(keys, jnp.array([0.0, 1.0, 100.0]))
    x = np.asarray(traces.x)
    np.testing.assert_array_equal(x[0, :4], x[2, :4])  # the same seed: the same initial design
    assert not np.allclose(x[0, 4:], x[2, 4:])  # greedy and very exploratory UCB part ways


@pytest.mark.parametrize("model, options", [
    ("random", {}),
    # DNGO is the one-network ensemble (the same config class and step): the ensemble case below covers it
    pytest.param("dngo", dict(inference="map", n_init=4, network={"hidden": [8, 8], "num_steps": 20}),
                 marks=pytest.mark.slow),
    ("ensemble", dict(inference="map", n_init=4, n_networks=2, network={"hidden": [8, 8], "num_steps": 20})),
])
def test_other_models_run_compiled(model, options):
    result = jbo.minimize_many(BRANIN.evaluate, SPACE, budget=7, seeds=[0, 1], model=model, **options)
    assert np.all(np.isfinite(result.values))
    assert np.all((result.x >= 0) & (result.x <= 1))


@pytest.mark.slow
def test_tree_model_runs_compiled_on_a_conditional_problem():
    problem = get_problem("jenatton_small_shared")
    space = problem.search_space
    result = jbo.minimize_many(problem.evaluate, space, budget=9, seeds=[0], model="tree", inference="map", n_init=5,
                               maximize=dict(num_anchors=32, num_local=4, top_k=2, num_steps=5))
    assert np.all(np.isfinite(result.values))
    for x, value in zip(result.x[0], result.values[0]):  # the objective saw each point's configuration
        assert problem.evaluate(space.decode(x)) == pytest.approx(value, rel=1e-9)


def test_a_nan_objective_is_a_failure_not_a_crash(compiled_run):
    result, _ = compiled_run
    for values, x, best in zip(result.values, result.x, result.best_values):
        assert np.any(np.isnan(values)) and np.any(np.isfinite(values))
        assert np.all(x[np.isnan(values), 0] > (2.0 + 5.0) / 15.0)  # x1 > 2 in the unit cube
        assert best == np.nanmin(values)


def test_bad_arguments_name_the_problem():
    with pytest.raises(ValueError, match="seeds"):
        jbo.minimize_many(BRANIN.evaluate, SPACE, budget=5, seeds=[])
    with pytest.raises(ValueError, match="budget"):
        jbo.minimize_many(BRANIN.evaluate, SPACE, budget=0, seeds=[0])
    with pytest.raises(ValueError, match="seed is not an option"):
        many.run_function(BRANIN.evaluate, SPACE, 5, seed=3)
    with pytest.raises(ValueError, match="unknown model"):
        jbo.minimize_many(BRANIN.evaluate, SPACE, budget=5, seeds=[0], model="gpp")


@pytest.mark.slow
def test_a_model_config_object_and_its_name_suggest_the_same_point():
    network = {"hidden": [8, 8], "num_steps": 20}
    by_name = jbo.Optimizer(SPACE, model="dngo", seed=2, network=network, inference="map", n_init=4)
    by_config = jbo.Optimizer(SPACE, model=jbo.models.DNGO(network=network, inference="map"), seed=2, n_init=4)
    assert by_name.settings == by_config.settings
    for _ in range(5):
        a, b = by_name.ask(), by_config.ask()
        assert a == b
        by_name.tell(a, BRANIN.evaluate(a))
        by_config.tell(b, BRANIN.evaluate(b))
    assert by_name.last_info["phase"] == "model"


@pytest.mark.slow
def test_seeds_side_by_side_or_one_after_the_other_agree():
    """``batch="vmap"`` (accelerators) and ``batch="map"`` (the CPU default) run the same runs."""
    mapped = jbo.minimize_many(BRANIN.evaluate, SPACE, budget=7, seeds=[3, 4], batch="map", **SMALL)
    batched = jbo.minimize_many(BRANIN.evaluate, SPACE, budget=7, seeds=[3, 4], batch="vmap", **SMALL)
    np.testing.assert_allclose(batched.x, mapped.x, rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="batch"):
        jbo.minimize_many(BRANIN.evaluate, SPACE, budget=7, seeds=[3], batch="pmap", **SMALL)
