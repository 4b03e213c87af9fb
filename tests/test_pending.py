"""Pending evaluations: value-conditioned fantasies (blocked Cholesky / rank-p updates) and Monte Carlo
fantasies (Snoek et al. 2015, eqs. 11–12), checked against refitting on the extended data."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbo
from jbo import acquisition, kernels, loop
from jbo.data import pad_data
from jbo.surrogates import blr
from jbo.surrogates import gp

KERNEL = kernels.Matern52()
# The maths as the loop runs it, compiled: one program per function instead of one per primitive.
gp_condition, gp_fantasize, gp_predict = (jax.jit(f, static_argnums=0) for f in (gp.condition, gp.fantasize, gp.predict))
blr_stats, blr_inputs, blr_condition, blr_fantasize, blr_predict = (
    jax.jit(f) for f in (blr.basis_stats, blr.basis_inputs, blr.condition, blr.fantasize, blr.predict))
pending_posteriors = jax.jit(acquisition.pending_posteriors, static_argnums=(1, 5, 6))
PARAMS = {"kernel": {"lengthscale": jnp.array([0.3, 0.5]), "amplitude": jnp.array(1.3)},
          "noise": jnp.array(0.01), "mean": jnp.array(0.2)}


def gp_problem(seed=0):
    rng = np.random.default_rng(seed)
    x, y = rng.random((10, 2)), rng.normal(size=10)
    return x, y, gp_condition(KERNEL, PARAMS, pad_data(x, y, size=16)), rng


def test_gp_fantasy_is_the_posterior_of_the_extended_data():
    """The blocked Cholesky update (no refactorisation) equals conditioning on data + fantasies;
    padded pending rows change nothing."""
    x, y, post, rng = gp_problem()
    xp, yp = rng.random((3, 2)), rng.normal(size=3)
    mask = jnp.array([True, True, False])
    fantasy = gp_fantasize(KERNEL, post, jnp.asarray(xp), mask, jnp.asarray(yp))
    refit = gp_condition(KERNEL, PARAMS, pad_data(np.vstack([x, xp[:2]]), np.append(y, yp[:2]), size=16))
    query = jnp.asarray(rng.random((7, 2)))
    for a, b in zip(gp_predict(KERNEL, fantasy, query), gp_predict(KERNEL, refit, query)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)
    believer = gp_fantasize(KERNEL, post, jnp.asarray(xp), mask)
    np.testing.assert_allclose(gp_predict(KERNEL, believer, query)[0], gp_predict(KERNEL, post, query)[0], atol=1e-10)


def test_blr_fantasy_is_the_posterior_of_the_extended_data_in_one_or_two_rounds():
    rng = np.random.default_rng(1)
    n, m, d = 20, 5, 2
    x, phi, y = rng.random((n + 3, d)), np.tanh(rng.normal(size=(n + 3, m))), rng.normal(size=n + 3)
    params = {"alpha": jnp.array(0.7), "noise": jnp.array(0.05), "offset": jnp.array(0.1),
              "center": jnp.array([0.4, 0.6]), "curvature": jnp.array([0.3, 0.2])}
    stats = blr_stats(*(jnp.asarray(a) for a in (phi[:n], x[:n], y[:n], np.ones(n))))
    post = blr_condition(params, stats)
    inputs = lambda s, rows: blr_inputs(s, jnp.asarray(x[rows]), jnp.asarray(phi[rows]))
    once = blr_fantasize(post, inputs(stats, slice(n, n + 3)), None, jnp.asarray(y[n:]))
    twice = blr_fantasize(post, inputs(stats, slice(n, n + 2)), None, jnp.asarray(y[n:n + 2]))
    twice = blr_fantasize(twice, inputs(stats, slice(n + 2, n + 3)), None, jnp.asarray(y[n + 2:]))
    full = blr_stats(*(jnp.asarray(a) for a in (phi, x, y, np.ones(n + 3))))
    refit = blr_condition(params, full)
    xq, phq = jnp.asarray(rng.random((4, d))), jnp.asarray(np.tanh(rng.normal(size=(4, m))))
    expected = blr_predict(refit, blr_inputs(full, xq, phq))
    for fantasy in (once, twice):
        for a, b in zip(blr_predict(fantasy, blr_inputs(stats, xq, phq)), expected):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)


def test_monte_carlo_fantasies_average_to_the_believer_mean():
    """E over the fantasised outcomes of the conditioned mean is the current mean (the tower rule); the
    stacked posteriors have S * F members."""
    x, y, post, rng = gp_problem(2)
    surrogate = gp.exact_gp(KERNEL)
    stacked = jax.tree_util.tree_map(lambda a: jnp.stack([a, a]), post)  # S = 2 samples
    xp, mask = jnp.asarray(rng.random((2, 2))), jnp.array([True, True])
    many = pending_posteriors(jax.random.key(0), surrogate, stacked, xp, mask, "fantasies", 2000)
    assert jax.tree_util.tree_leaves(many)[0].shape[0] == 2 * 2000
    query = jnp.asarray(rng.random((5, 2)))
    means = jax.jit(jax.vmap(surrogate.predict, in_axes=(0, None)))(many, query)[0]
    np.testing.assert_allclose(means.mean(axis=0), gp_predict(KERNEL, post, query)[0], atol=0.05)
    assert float(means.std(axis=0).max()) > 0.01  # the fantasies do move the mean
    believer = jax.eval_shape(lambda: acquisition.pending_posteriors(jax.random.key(0), surrogate, stacked, xp, mask,
                                                                     "believer"))
    assert jax.tree_util.tree_leaves(believer)[0].shape[0] == 2


def test_pending_setting_is_validated_and_models_without_values_refuse_fantasies():
    assert loop.Settings().pending == "believer"
    with pytest.raises(ValueError, match="pending"):
        loop.Settings(pending="kriging")
    with pytest.raises(ValueError, match="num_fantasies"):
        loop.Settings(num_fantasies=0)
    space = jbo.Space({"k": jbo.Categorical(["a", "b"]), "u": jbo.Real(0.0, 1.0, when={"k": ["a"]}),
                       "v": jbo.Real(0.0, 1.0, when={"k": ["b"]})})
    opt = jbo.Optimizer(space, model="tree", inference="map", n_init=4, pending="fantasies",
                        maximize=dict(num_anchors=16, num_local=4, top_k=2, num_steps=2))
    for config in opt.ask(n=4):
        opt.tell(config, 1.0 if config["k"] == "a" else config["v"])
    with pytest.raises(ValueError, match="pending='believer'"):
        opt.ask()


def test_a_batch_with_fantasies_runs_for_the_gp():
    from jbo.benchmarks import get_problem

    problem = get_problem("branin")
    opt = jbo.Optimizer(problem.space(), inference="map", n_init=4, pending="fantasies", num_fantasies=8,
                        maximize=dict(num_anchors=64, num_local=8, top_k=2, num_steps=5))
    design = opt.ask(n=4)
    for config in design[:3]:  # the last design point still running: every suggestion below has pending points
        opt.tell(config, problem.evaluate(config))  # (one compiled program for the batch)
    batch = opt.ask(n=3)
    assert len({tuple(c.values()) for c in batch}) == 3 and opt.last_info["phase"] == "model"
