"""jbo.study: grids of arms x seeds, one compiled program per group of arms that differ only in values.

A 2-d Branin problem with MAP inference and a small acquisition search keeps the compilations short. The
module compiles one grid (a staged program of three GP arms, and random search) and, for the arm that differs
from the first in every kind of value, the two ask/tell programs of its stages: the tests below assert on these.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jbo
from jbo import acquisition as acq
from jbo import many, studies
from jbo.benchmarks import get_problem
from jbo.data import run_sizes

BRANIN = get_problem("branin")
SPACE = BRANIN.space()
SMALL = dict(inference="map", n_init=4, maximize=dict(num_anchors=64, num_local=8, top_k=2, num_steps=10))
# "ucb": every kind of value an arm of a shared program can differ in (the acquisition of a Choice, UCB's weight,
# the failure policy, the design's size and kind).
ARMS = {
    "ei": dict(SMALL, acquisition="ei"),
    "ucb4-ignore-centre-6": dict(SMALL, acquisition="ucb", ucb_beta=4.0, failures="ignore", n_init=6, design="centre"),
    "pi": dict(SMALL, acquisition="pi"),
    "random": dict(model="random"),
}
UCB = "ucb4-ignore-centre-6"
STAGES = (8, 16)  # suggestions 0-8 padded to 8 rows, suggestion 9 to 16


@pytest.fixture(scope="module")
def grid():
    return jbo.study(BRANIN.evaluate, SPACE, budget=10, seeds=[0, 1], arms=ARMS, stages=STAGES)


@pytest.fixture(scope="module")
def alone():
    """The UCB arm's options alone, seeds 0 and 1, through the ask/tell loop padded as the stages pad:
    ``(x (2, 10, D), values (2, 10))``."""
    xs, values = [], []
    for seed in (0, 1):
        opt = jbo.Optimizer(SPACE, seed=seed, **ARMS[UCB])
        for i in range(10):
            config = opt.ask(size=STAGES[0] if i <= STAGES[0] else STAGES[1])
            opt.tell(config, BRANIN.evaluate(config))
        xs.append(np.asarray(opt.state.x))
        values.append(np.asarray(opt.state.y))
    return np.stack(xs), np.stack(values)


def test_arms_that_differ_in_values_share_one_program_and_run_as_alone(grid, alone):
    assert grid.arms == tuple(ARMS)
    assert [names for names, _ in grid.programs] == [("ei", UCB, "pi"), ("random",)]
    assert grid.values.shape == (4, 2, 10) and grid.x.shape == (4, 2, 10, 2)
    # The UCB arm's runs are the runs its options make alone (the ask/tell loop).
    ucb = grid.arms.index(UCB)
    np.testing.assert_allclose(grid.x[ucb], alone[0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(grid.values[ucb], alone[1], rtol=1e-9)
    centre = grid.x[ucb, :, 0]
    np.testing.assert_array_equal(centre, np.full_like(centre, 0.5))  # the design's own start
    assert not np.allclose(grid.x[0, :, 4:], grid.x[ucb, :, 4:])  # EI and UCB(4) part ways after the design
    np.testing.assert_array_equal(grid.x[0, :, :4], grid.x[2, :, :4])  # EI and PI: the same design...
    assert not np.allclose(grid.x[0, :, 4:], grid.x[2, :, 4:])  # ...then each arm its own acquisition
    np.testing.assert_allclose(grid.best_values, np.nanmin(grid.values, axis=-1))


def test_diagnostics_and_seconds_per_evaluation(grid):
    score = grid.info["score"]
    assert score.shape == (4, 2, 10)
    assert np.all(np.isnan(score[0, :, :4])) and np.all(np.isfinite(score[0, :, 4:]))  # design, then the model
    assert np.all(np.isnan(score[1, :, :6])) and np.all(np.isfinite(score[1, :, 6:]))  # a larger design
    assert np.all(np.isnan(score[3]))  # random search reports no acquisition
    lengthscales = grid.info["hyperparameters.kernel.lengthscale"]
    assert lengthscales.shape == (4, 2, 10, 2) and np.all(lengthscales[0, :, 4:] > 0)
    assert np.all(grid.step_seconds > 0)
    assert grid.step_seconds.sum() <= grid.seconds
    assert 0 < grid.compile_seconds < grid.seconds


def test_more_seeds_or_other_values_compile_nothing(grid):
    arms = dict(ARMS, **{"ucb2": dict(SMALL, acquisition="ucb", ucb_beta=2.0)})  # a new value, not a new program
    # One run after another (a CPU) any number of runs reuses the program; side by side (an accelerator) the runs
    # are padded to a power of two (many.runs_bucket), and 4 GP arms x 2 seeds fit the grid's 3 x 2 (8 runs).
    seeds = [0, 1, 2] if many.default_batch() == "map" else [0, 1]
    again = jbo.study(BRANIN.evaluate, SPACE, budget=10, seeds=seeds, arms=arms, stages=STAGES)
    assert again.compile_seconds == 0.0
    for a, arm in enumerate(grid.arms):
        np.testing.assert_array_equal(again.values[again.arms.index(arm), :2], grid.values[a])


def test_save_load_rows_table_and_plot(grid, tmp_path):
    loaded = jbo.StudyResult.load(grid.save(str(tmp_path / "grid.npz")))
    for field in ("values", "best_so_far", "x", "step_seconds", "seeds"):
        np.testing.assert_array_equal(getattr(loaded, field), getattr(grid, field))
    assert loaded.arms == grid.arms and loaded.programs == grid.programs
    assert loaded.configs[UCB]["failures"] == "ignore" and loaded.configs[UCB]["ucb_beta"] == 4.0
    assert loaded.best_configs == grid.best_configs
    np.testing.assert_array_equal(loaded.info["score"], grid.info["score"])
    rows = grid.rows()
    assert len(rows) == 4 * 2 * 10 and rows[0]["arm"] == "ei" and rows[-1]["evaluation"] == 10
    assert {"value", "best_so_far", "seconds", "score"} <= set(rows[5])
    table = grid.table()
    assert all(f"| {arm} |" in table for arm in ARMS)
    assert (tmp_path / "p.png").exists() is False and grid.plot(str(tmp_path / "p.png"))
    assert (tmp_path / "p.png").stat().st_size > 0
    one = grid.arm(UCB)
    np.testing.assert_array_equal(one.values, grid.values[1])


def test_the_plan_groups_by_what_is_not_a_value():
    groups = studies.plan(SPACE, 20, {
        "ei": dict(acquisition="ei"), "ucb": dict(ucb_beta=3.0), "thompson": dict(acquisition="thompson"),
        "se": dict(kernel="se"), "constraint": dict(failures="constraint"), "ignore": dict(failures="ignore"),
        "n3": dict(n_init=3), "random": dict(model="random"),
    })
    assert [g.names for g in groups] == [("ei", "ucb", "ignore", "n3"), ("thompson",), ("se",), ("constraint",),
                                         ("random",)]
    shared = groups[0]
    assert shared.settings.acquisition == acq.Choice(("ei", "ucb"))
    assert [int(v.choice) for v in shared.values] == [0, 1, 1, 1]  # the GP's default: UCB
    assert shared.n_init_range == (3, 5)
    assert [bool(v.impute) for v in shared.values] == [True, True, False, True]
    assert [float(v.ucb_beta) for v in shared.values] == [2.0, 3.0, 2.0, 2.0]


def test_default_stages_are_the_sizes_minimize_pads_to():
    for budget, start in [(10, 4), (60, 7), (100, 7), (300, 11)]:
        size = run_sizes(budget)
        expected = sorted({size(n) or jbo.data.bucket_size(n) for n in range(start, budget)})
        assert many.stage_sizes(budget, start) == tuple(expected)
    assert many.stage_sizes(100, 7) == (56, 104)


def test_staged_padding_makes_the_ask_tell_suggestions(grid, alone):
    """A run in stages pads suggestion i to the smallest stage >= i, as the ask/tell loop with that size:
    the grid's UCB arm (model suggestions 6-8 at 8 rows, 9 at 16) is the ask/tell run of the ``alone`` fixture."""
    assert STAGES[0] < 9 <= STAGES[1] and ARMS[UCB]["n_init"] <= STAGES[0]  # both stages make model suggestions
    np.testing.assert_allclose(grid.x[grid.arms.index(UCB)], alone[0], rtol=0, atol=1e-9)


def test_bad_arms_name_the_problem():
    with pytest.raises(ValueError, match="arms"):
        jbo.study(BRANIN.evaluate, SPACE, 5, [0], {})
    with pytest.raises(ValueError, match="arm 'a': options must be a dict"):
        jbo.study(BRANIN.evaluate, SPACE, 5, [0], {"a": "ei"})
    with pytest.raises(ValueError, match="arm 'b'.*acquisition"):
        jbo.study(BRANIN.evaluate, SPACE, 5, [0], {"a": {}, "b": dict(acquisition="eii")})
    with pytest.raises(ValueError, match="arm 'a': seed"):
        jbo.study(BRANIN.evaluate, SPACE, 5, [0], {"a": dict(seed=1)})
    with pytest.raises(ValueError, match="seeds"):
        jbo.study(BRANIN.evaluate, SPACE, 5, [], {"a": {}})
    with pytest.raises(ValueError, match="stages"):
        jbo.study(BRANIN.evaluate, SPACE, 20, [0], {"a": dict(model="random")}, stages=(8,))


def test_a_choice_is_validated_and_switches_between_scores():
    with pytest.raises(ValueError, match="thompson"):
        acq.Choice(("ei", "thompson"))
    choice = acq.Choice(("ei", "ucb", "pi"))
    assert choice.index("ucb") == 1 and choice.name == "ei|ucb|pi"
    rng = np.random.default_rng(0)
    posteriors, x = rng.normal(size=(4, 3)), rng.normal(size=(5, 3))  # 4 samples of a linear model's weights

    def predict(weights, x):
        return x @ weights, 0.3 + (x @ weights) ** 2

    def score_of(fn, log_domain):
        return acq.integrate(predict, posteriors, fn, log_domain, -0.5)

    for index, name in enumerate(choice.options):  # log scores (EI, PI) and a linear one (UCB) in one switch
        fn, log_domain = acq.resolve(name, 2.0)
        chosen = jax.jit(lambda i: acq.integrated(choice, score_of, 2.0, i)(x))(np.int32(index))
        np.testing.assert_allclose(chosen, score_of(fn, log_domain)(x), rtol=1e-12)
    with pytest.raises(ValueError, match="Choice"):
        acq.resolve(choice)


@pytest.mark.slow
def test_runs_side_by_side_pad_to_a_power_of_two_and_agree():
    arms = {"ei": dict(SMALL, acquisition="ei"), "ucb": dict(SMALL)}
    mapped = jbo.study(BRANIN.evaluate, SPACE, budget=8, seeds=[0, 1, 2], arms=arms, batch="map")
    batched = jbo.study(BRANIN.evaluate, SPACE, budget=8, seeds=[0, 1, 2], arms=arms, batch="vmap")
    np.testing.assert_allclose(batched.x, mapped.x, rtol=0, atol=1e-6)
    five = jbo.study(BRANIN.evaluate, SPACE, budget=8, seeds=[0, 1, 2, 3], arms=arms, batch="vmap")  # 8 runs: 8
    assert five.compile_seconds == 0.0
