"""Output warping (jbo.warping): the transforms against SciPy, their invariances, and the settings that select them."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from jbo import loop, warping

N_PAD = 24
warp = jax.jit(warping.warp, static_argnames="name")


def padded(values):
    """``(y, mask)`` padded to :data:`N_PAD` rows with garbage that must be ignored."""
    y = np.full(N_PAD, 123.0)
    y[: len(values)] = values
    return jnp.asarray(y), jnp.arange(N_PAD) < len(values)


def standardised(values):
    values = np.asarray(values, float)
    return (values - values.mean()) / values.std()


@pytest.mark.parametrize("lam", [-1.5, 0.0, 0.5, 1.0, 2.0, 3.0])
def test_yeo_johnson_transform_and_likelihood_are_scipys(lam):
    y = np.random.default_rng(0).normal(size=15) * 2.0
    np.testing.assert_allclose(np.asarray(warping.yeo_johnson_transform(jnp.asarray(y), lam)),
                               stats.yeojohnson(y, lmbda=lam), rtol=1e-12, atol=1e-12)
    ys, mask = padded(y)
    np.testing.assert_allclose(float(warping.yeo_johnson_log_likelihood(ys, mask, lam)), stats.yeojohnson_llf(lam, y),
                               rtol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_yeo_johnson_lambda_is_the_maximum_likelihood_one(seed):
    """Skewed samples (log-normal, and its mirror image): the grid's λ is within one step of SciPy's optimum."""
    rng = np.random.default_rng(seed)
    values = standardised(np.exp(rng.normal(size=20) * (0.5 + seed / 2)) * (-1) ** seed)
    _, scipy_lambda = stats.yeojohnson(values)
    lam = float(warping.yeo_johnson_lambda(*padded(values)))
    step = float(warping.yeo_johnson_grid()[1] - warping.yeo_johnson_grid()[0])
    assert abs(lam - np.clip(scipy_lambda, -2, 4)) <= step
    expected = standardised(stats.yeojohnson(values, lmbda=lam))
    np.testing.assert_allclose(np.asarray(warp("yeo-johnson", *padded(values)))[:20], expected, rtol=1e-9, atol=1e-12)


def test_rank_warp_is_normal_scores_of_mid_ranks():
    values = np.array([3.0, -1.0, 7.0, 3.0, 0.5, 100.0, -1.0, 2.0])
    n = len(values)
    expected = standardised(stats.norm.ppf((stats.rankdata(values) - 0.5) / n))
    z = np.asarray(warp("rank", *padded(values)))
    np.testing.assert_allclose(z[:n], expected, rtol=1e-10, atol=1e-12)
    assert z[0] == z[3] and z[1] == z[6]  # ties share one score
    np.testing.assert_array_equal(z[n:], 0.0)  # padded rows


def test_shifted_log_is_the_log_of_the_gap_above_the_best_value():
    """Against NumPy: ``log(y - min + (q05 - min))``, standardised; where the best values tie, the shift is the
    floor (a millionth of the range), so the best value stays finite and the rest keep their order."""
    values = np.array([2.0e5, 33.0, 7.5e3, 30.3, 1.2e5, 45.0, 31.5, 9.9e4, 410.0, 2.2e3])
    shift = np.quantile(values, warping.LOG_QUANTILE) - values.min()
    assert shift > warping.LOG_FLOOR * np.ptp(values)
    expected = standardised(np.log(values - values.min() + shift))
    z = np.asarray(warp("shifted-log", *padded(standardised(values))))
    np.testing.assert_allclose(z[: len(values)], expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(z[len(values):], 0.0)
    # the best values' gaps are spread out, where Yeo-Johnson leaves them under 1e-3 of the warped scale
    def best_gaps(name):
        return np.diff(np.sort(np.asarray(warp(name, *padded(standardised(values))))[: len(values)])[:3])

    assert best_gaps("shifted-log").min() > 0.1 > 1e-3 > best_gaps("yeo-johnson").max()
    tied = np.array([1.0, 1.0, 1.0, 4.0, 9.0])
    z = np.asarray(warp("shifted-log", *padded(standardised(tied))))[:5]
    floor = warping.LOG_FLOOR * np.ptp(standardised(tied))
    np.testing.assert_allclose(z, standardised(np.log(standardised(tied) - standardised(tied).min() + floor)),
                               rtol=1e-9)
    assert np.all(np.isfinite(z)) and z[0] == z[1] == z[2] < z[3] < z[4]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(warping.NAMES), st.integers(3, N_PAD), st.integers(0, 2**31 - 1),
       st.floats(1e-3, 1e3), st.floats(-1e3, 1e3), st.floats(0.0, 4.0))
def test_warps_are_monotone_standardised_and_invariant_to_units(name, n, seed, a, b, tail):
    """Whatever the values (heavy right tails included): the warp keeps their order, is standardised over the
    real rows, zero on the padded ones, and the same for ``a·y + b`` (``a > 0``) as for ``y``."""
    rng = np.random.default_rng(seed)
    values = np.exp(tail * rng.normal(size=n)) + rng.normal(size=n)
    if np.ptp(values) < 1e-6:
        return
    z = np.asarray(warp(name, *padded(standardised(values))))
    moved = np.asarray(warp(name, *padded(standardised(a * values + b))))
    np.testing.assert_allclose(moved, z, atol=1e-6)
    real = z[:n]
    assert np.all(np.diff(real[np.argsort(values, kind="stable")]) >= -1e-12)
    np.testing.assert_allclose([real.mean(), real.std()], [0.0, 1.0], atol=1e-9)
    np.testing.assert_array_equal(z[n:], 0.0)


def test_settings_choose_and_check_the_warp():
    assert loop.Settings.create("gp").output_warping == "yeo-johnson"  # the GP's default, measured (suite)
    assert loop.Settings.create("gp", output_warping="none").output_warping == "none"  # the default before
    assert loop.Settings.create("matern").output_warping == "none"  # BOCK's paper baseline, as its tables ran
    assert loop.Settings.create("dngo").output_warping == "yeo-johnson"  # measured with its trust region
    assert loop.Settings.create("dngo", output_warping="none").output_warping == "none"  # Snoek et al.'s
    assert loop.Settings.create("gp", output_warping="rank").output_warping == "rank"
    with pytest.raises(ValueError, match="output_warping"):
        loop.Settings.create("gp", output_warping="log")
    with pytest.raises(ValueError, match="output_warping='rank' needs BOCK"):
        loop.Settings.create("bock", units="objective", output_warping="rank")
    old_journal = loop.Settings.create("gp").to_dict()
    del old_journal["output_warping"]  # journals from before output warping resume unwarped
    assert loop.Settings.from_dict(old_journal).output_warping == "none"


def test_standardize_warps_the_model_data_and_keeps_the_incumbent():
    history = loop.History(np.linspace(0, 1, 6)[:, None], np.array([1e6, 3.0, 1e4, 2.0, np.nan, 50.0]),
                           np.array([True] * 5 + [False]))
    data, best, num_ok, _ = loop._standardize(history, failures="ignore", output_warping="rank")
    mask = np.asarray(data.mask)
    np.testing.assert_array_equal(mask, [True, True, True, True, False, False])
    y = np.asarray(data.y)[mask]
    assert int(num_ok) == 4 and float(best) == y.min() == y[3]  # the incumbent is still the smallest value
    np.testing.assert_allclose(y, standardised(stats.norm.ppf((stats.rankdata([1e6, 3.0, 1e4, 2.0]) - 0.5) / 4)))


@pytest.mark.parametrize("model", ["gp", "bock"])
def test_default_models_suggest_the_same_points_in_any_units(model):
    """The default ``gp`` and ``bock`` (its model's defaults; a small acquisition search) suggest the same points,
    to 1e-6 in the unit cube, for ``f``, ``10⁻³·f`` and ``10³·f + 7``: three model suggestions on Rosenbrock-4,
    each run evaluating its own suggestions."""
    import jbo
    from jbo.benchmarks import get_problem

    problem = get_problem("rosenbrock", dim=4)
    space = problem.space()
    runs = []
    for a, b in ((1.0, 0.0), (1e-3, 0.0), (1e3, 7.0)):
        opt = jbo.Optimizer(space, seed=3, model=model, n_init=5,
                            maximize=dict(num_anchors=256, num_local=8, top_k=2, num_steps=20))
        points = []
        for _ in range(8):
            config = opt.ask()
            points.append(space.encode(config))
            opt.tell(config, a * problem.evaluate(config) + b)
        assert opt.last_info["phase"] == "model"
        runs.append(np.asarray(points))
    np.testing.assert_allclose(runs[1], runs[0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(runs[2], runs[0], rtol=0, atol=1e-6)
