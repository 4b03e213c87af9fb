"""The trust region (jbo.trust): TuRBO-1's side-length rule against a plain replay, and runs that keep to it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jbo
from jbo import loop, studies, trust
from jbo.benchmarks import get_problem
from jbo.optimize import maximize


def reference_side(values, ok, real, num_initial, dim, config=trust.TrustRegion()):
    """The rule written out in Python, one observation at a time."""
    good = [v for v, o in zip(values, ok) if o]
    margin = config.threshold * (np.std(good) if len(good) and np.std(good) > 0 else 1.0)
    length, best, successes, failures = config.length_init, np.inf, 0, 0
    for index, (value, o, r) in enumerate(zip(values, ok, real)):
        if r and index >= num_initial:
            if o and value < best - margin:
                successes, failures = successes + 1, 0
            else:
                successes, failures = 0, failures + 1
            if successes == config.success_tolerance:
                length, successes = min(2 * length, config.length_max), 0
            if failures == max(4, dim):
                length, failures = length / 2, 0
            if length < config.length_min:
                length, successes, failures = config.length_init, 0, 0
        if o:
            best = min(best, value)
    return length


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(-10, 10), st.booleans()), min_size=1, max_size=60),
       st.integers(0, 12), st.sampled_from([2, 6]), st.integers(0, 8))
def test_the_side_follows_turbos_rule(rows, num_initial, dim, padding):
    values = np.array([v for v, _ in rows] + [0.0] * padding)
    real = np.array([True] * len(rows) + [False] * padding)
    ok = real & np.array([o for _, o in rows] + [False] * padding)
    side = float(trust.side_length(values, ok, real, num_initial, dim))
    assert side == pytest.approx(reference_side(values, ok, real, num_initial, dim))


def test_the_side_is_the_same_for_f_and_an_affine_map_of_it():
    rng = np.random.default_rng(0)
    for _ in range(20):
        values = np.minimum.accumulate(rng.standard_normal(60)) + 0.1 * rng.standard_normal(60)
        ok = rng.random(60) > 0.1
        sides = [float(trust.side_length(a * values + b, ok, np.ones(60, bool), 5, 2))
                 for a, b in ((1.0, 0.0), (1e-3, 0.0), (1e3, 7.0))]
        assert sides[0] == sides[1] == sides[2]


def test_the_side_halves_after_failures_doubles_after_successes_and_restarts():
    design, dim = [5.0, 4.0, 3.0], 2
    stalled = design + [9.0] * 4  # one halving
    assert float(trust.side_length(np.array(stalled), np.ones(7, bool), np.ones(7, bool), 3, dim)) == 0.4
    improving = design + [2.0, 1.0, 0.0]  # three improvements: doubled
    assert float(trust.side_length(np.array(improving), np.ones(6, bool), np.ones(6, bool), 3, dim)) == 1.6
    long_stall = design + [9.0] * 4 * 7  # 0.8 / 2^7 < 2^-7: back to 0.8
    n = len(long_stall)
    assert float(trust.side_length(np.array(long_stall), np.ones(n, bool), np.ones(n, bool), 3, dim)) == 0.8


def test_maximize_keeps_to_its_bounds():
    lower, upper = np.array([0.2, 0.5]), np.array([0.4, 0.9])
    anchors = lower + (upper - lower) * np.random.default_rng(0).random((64, 2))
    x, _ = maximize(lambda x: -((x - 0.0) ** 2).sum(-1), anchors, top_k=4, num_steps=50, learning_rate=0.05,
                    bounds=(lower, upper))
    np.testing.assert_allclose(np.asarray(x), lower, atol=1e-9)  # the corner nearest the unconstrained maximum


def test_a_run_suggests_inside_its_region_and_resumes(tmp_path):
    problem = get_problem("hartmann6")
    space = problem.space()
    path = str(tmp_path / "journal.jsonl")
    opt = jbo.Optimizer(space, seed=0, inference="map", trust_region=True, n_init=7, journal=path,
                        maximize=dict(num_anchors=128, num_local=32, top_k=2, num_steps=10))
    sides = []
    for _ in range(16):
        history = opt.history
        config = opt.ask()
        if opt.last_info.get("phase") == "model":
            values = np.array([h["value"] for h in history])
            side = reference_side(values, np.isfinite(values), np.ones(len(values), bool), 7, space.dim)
            assert float(opt.last_info["trust_region"]) == pytest.approx(side)
            centre = space.encode(history[int(np.argmin(values))]["config"])
            inside = np.abs(space.encode(config) - centre) <= side / 2 + 1e-9
            assert inside.all(), (config, side)
            sides.append(side)
        # After the design, every evaluation fails to improve (a value above all others): the region must halve
        # after max(4, D) = 6 failures in a row, whatever the model suggests.
        model_phase = opt.last_info.get("phase") == "model"
        opt.tell(config, max(h["value"] for h in history) + 1 if model_phase else problem.evaluate(config))
    assert sides[:6] == [0.8] * 6 and sides[6] == pytest.approx(0.4)  # halved after six failures at D = 6
    resumed = jbo.Optimizer.resume(path)
    assert resumed.settings.trust_region is True
    resumed.ask(), opt.ask()  # the region is a function of the journal's observations: the same after a resume
    assert float(resumed.last_info["trust_region"]) == float(opt.last_info["trust_region"])


def test_a_bad_trust_region_names_the_field():
    with pytest.raises(ValueError, match="trust_region"):
        loop.Settings(trust_region="yes")


def test_a_trust_region_arm_compiles_apart_and_runs_in_a_study():
    problem = get_problem("branin")
    small = dict(inference="map", n_init=3, maximize=dict(num_anchors=32, num_local=8, top_k=2, num_steps=5))
    groups = studies.plan(problem.space(), 8, {"global": dict(small, trust_region=False), "trust": small})
    assert [g.names for g in groups] == [("global",), ("trust",)]  # the region is part of the program
    result = jbo.study(problem.evaluate, problem.space(), 8, [0], {"trust": small})  # the GP's default
    sides = result.info["trust_region"][0, 0]
    assert np.all(np.isnan(sides[:3])) and np.all((sides[3:] > 0) & (sides[3:] <= 1.6))


def test_the_gp_searches_the_whole_box_when_it_escapes_basins():
    assert loop.Settings.create("gp").trust_region is True
    assert loop.Settings.create("gp", escape=True).trust_region is False  # leaving the basin is the point
    assert loop.Settings.create("gp", escape=True, trust_region=True).trust_region is True
    assert loop.Settings.create("tree").trust_region is False
    assert loop.Settings.create("dngo").trust_region is True  # measured (dngo_vs_tpe, suite)
    assert loop.Settings.create("ensemble").trust_region is True
    assert loop.Settings.create("dngo", trust_region=False).trust_region is False  # the paper's whole box


def test_rank_improvement_counts_what_the_spread_of_heavy_tailed_values_hides():
    # Values whose worst are orders of magnitude above their best: on the values' scale the steady
    # improvements near the best are below 1e-3 standard deviations, so the region halves as if the run
    # had stalled; on ranks every strict improvement counts, and a tie (a plateau) does not.
    design = [1e8, 1e7, 1e6, 1e3]
    improving = design + [900.0, 800.0, 700.0]
    real = np.ones(len(improving), bool)
    by_value = float(trust.side_length(np.array(improving), real, real, 4, 2))
    by_rank = float(trust.side_length(np.array(improving), real, real, 4, 2, trust.TrustRegion(improvement="rank")))
    assert by_value == 0.8 and by_rank == 1.6
    tied = design + [1e3] * 4
    real = np.ones(len(tied), bool)
    assert float(trust.side_length(np.array(tied), real, real, 4, 2, trust.TrustRegion(improvement="rank"))) == 0.4


@given(st.floats(1e-3, 1e3), st.floats(-1e3, 1e3))
@settings(max_examples=20, deadline=None)
def test_rank_improvement_is_invariant_to_monotone_transforms(a, b):
    values = np.random.default_rng(0).lognormal(0.0, 3.0, 40)
    real = np.ones(40, bool)
    config = trust.TrustRegion(improvement="rank")
    sides = [float(trust.side_length(v, real, real, 5, 2, config)) for v in (values, a * values + b, np.log(values))]
    assert sides[0] == sides[1] == sides[2]


def test_trust_region_setting_accepts_a_config_and_round_trips_through_journals():
    chosen = loop.Settings.create("gp", trust_region={"improvement": "rank", "failure_tolerance": 6})
    assert chosen.trust_region == trust.TrustRegion(improvement="rank", failure_tolerance=6)
    assert loop.Settings.from_dict(json.loads(json.dumps(chosen.to_dict()))).trust_region == chosen.trust_region
    for bad, field in (({"improvement": "median"}, "improvement"), ({"length_init": -1.0}, "length_init"),
                       ({"failure_tolerance": 0}, "failure_tolerance"), ({"size": 2}, "size"), ("yes", "trust_region")):
        with pytest.raises(ValueError, match=field):
            loop.Settings.create("gp", trust_region=bad)


def test_a_cosine_schedule_decays_the_step_to_zero_and_still_finds_the_maximum():
    from jbo.optimize import step_sizes

    sizes = step_sizes(0.05, 100, "cosine")
    assert float(sizes(0)) == pytest.approx(0.05) and float(sizes(50)) == pytest.approx(0.025)
    assert float(sizes(100)) == pytest.approx(0.0, abs=1e-12)
    assert step_sizes(0.05, 100) == 0.05
    optimum = np.array([0.3123, 0.71])
    anchors = np.random.default_rng(0).random((32, 2))
    x, _ = maximize(lambda x: -((x - optimum) ** 2).sum(-1), anchors, top_k=4, num_steps=100, learning_rate=0.05,
                    schedule="cosine")
    np.testing.assert_allclose(np.asarray(x), optimum, atol=1e-3)
    with pytest.raises(ValueError, match="maximize.schedule"):
        jbo.Optimizer(jbo.Space({"x": jbo.Real(0, 1)}), maximize={"schedule": "linear"})


def test_adams_epsilon_reaches_the_search_and_is_validated():
    """Adam's step is about the learning rate while the gradient dwarfs epsilon, and the gradient times
    learning rate / epsilon below: with a huge epsilon the search barely leaves its best anchor."""
    optimum = np.array([0.3123, 0.71])
    anchors = np.random.default_rng(0).random((32, 2))
    score = lambda x: -((x - optimum) ** 2).sum(-1)
    best_anchor = anchors[np.argmax(np.asarray(score(anchors)))]
    assert np.abs(best_anchor - optimum).max() > 0.05
    x, _ = maximize(score, anchors, top_k=1, num_steps=100, learning_rate=0.05)
    np.testing.assert_allclose(np.asarray(x), optimum, atol=0.05)
    x, _ = maximize(score, anchors, top_k=1, num_steps=100, learning_rate=0.05, eps=1e3)
    np.testing.assert_allclose(np.asarray(x), best_anchor, atol=0.01)
    with pytest.raises(ValueError, match="maximize.eps"):
        jbo.Optimizer(jbo.Space({"x": jbo.Real(0, 1)}), maximize={"eps": 0.0})
