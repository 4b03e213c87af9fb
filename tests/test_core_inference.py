"""Hyperparameter inference against known posteriors.

The target is one numpyro model whose posterior is known in closed form: a correlated 2-d Gaussian
``x`` (prior only), the mean ``mu`` of Normal data with known variance (Normal prior, conjugate) and
the rate of Poisson counts (Gamma prior, conjugate, and positive: exercises the unconstraining
transform and its Jacobian). The three blocks are independent a posteriori.

Every sampler (jbo.slice.SliceSampler under numpyro.infer.MCMC, jbo.inference.slice_sample and
jbo.inference.nuts_sample) must recover means and covariances within 4 Monte Carlo standard errors,
the standard error being computed from numpyro's effective sample size of each statistic.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from jax.scipy.special import gammaln
from numpyro.diagnostics import effective_sample_size
from numpyro.infer import MCMC

from jbo import inference
from jbo.kernels import Matern52
from jbo.models.gp import gp_surrogate
from jbo import slice as jslice
from jbo.data import pad_data
from jbo.inference import Samples
from jbo.types import Surrogate

# ----------------------------------------------------------------------------- the known target

GAUSS_MEAN = np.array([1.0, -2.0])
GAUSS_COV = np.array([[1.0, 0.8 * 1.0 * 0.5], [0.8 * 1.0 * 0.5, 0.25]])  # correlation 0.8

_rng = np.random.default_rng(11)
NORMAL_SIGMA, PRIOR_MU_SD = 2.0, 3.0
Y_OBS = _rng.normal(1.5, NORMAL_SIGMA, 20)
K_OBS = _rng.poisson(3.0, 20).astype(np.float64)
GAMMA_A, GAMMA_B = 2.0, 1.0

_prec = 1.0 / PRIOR_MU_SD**2 + len(Y_OBS) / NORMAL_SIGMA**2
MU_POST_MEAN, MU_POST_VAR = (Y_OBS.sum() / NORMAL_SIGMA**2) / _prec, 1.0 / _prec
RATE_SHAPE, RATE_RATE = GAMMA_A + K_OBS.sum(), GAMMA_B + len(K_OBS)
RATE_POST_MEAN, RATE_POST_VAR = RATE_SHAPE / RATE_RATE, RATE_SHAPE / RATE_RATE**2


def numpyro_model(y, k):
    numpyro.sample("x", dist.MultivariateNormal(jnp.asarray(GAUSS_MEAN), jnp.asarray(GAUSS_COV)))
    mu = numpyro.sample("mu", dist.Normal(0.0, PRIOR_MU_SD))
    rate = numpyro.sample("rate", dist.Gamma(GAMMA_A, GAMMA_B))
    numpyro.sample("y", dist.Normal(mu, NORMAL_SIGMA), obs=y)
    numpyro.sample("k", dist.Poisson(rate), obs=k)


def _prior(data):
    return {
        "x": numpyro.sample("x", dist.MultivariateNormal(jnp.asarray(GAUSS_MEAN), jnp.asarray(GAUSS_COV))),
        "mu": numpyro.sample("mu", dist.Normal(0.0, PRIOR_MU_SD)),
        "rate": numpyro.sample("rate", dist.Gamma(GAMMA_A, GAMMA_B)),
    }


def _log_likelihood(params, data):
    """Normal likelihood of data.y (mean mu) plus Poisson likelihood of the counts in data.x[:, 0]."""
    y, k, m = data.y, data.x[:, 0], data.mask
    normal = -0.5 * ((y - params["mu"]) / NORMAL_SIGMA) ** 2 - jnp.log(NORMAL_SIGMA) - 0.5 * jnp.log(2 * jnp.pi)
    poisson = k * jnp.log(params["rate"]) - params["rate"] - gammaln(k + 1.0)
    return jnp.sum(jnp.where(m, normal + poisson, 0.0))


def _unused(*args, **kwargs):
    raise AssertionError("not used by inference")


CONJUGATE = Surrogate("conjugate", _prior, _log_likelihood, _unused, _unused, _unused, _unused)
# Counts live in x (a "unit cube" is irrelevant to this model); padding must not matter either.
CONJ_DATA = pad_data(K_OBS[:, None], Y_OBS, size=32)


def _check_moments(name, values, mean, var=None, cov=None, k=4.0, min_ess=150.0):
    """|estimate - truth| <= k standard errors, each from the ESS of its own statistic."""
    values = np.asarray(values, np.float64)
    values = values.reshape(values.shape[0], -1)
    truth_mean = np.atleast_1d(np.asarray(mean, np.float64))
    cov = np.atleast_2d(np.asarray(cov if cov is not None else var, np.float64))
    stats = {f"mean[{i}]": (values[:, i], truth_mean[i]) for i in range(values.shape[1])}
    centred = values - truth_mean
    for i in range(values.shape[1]):
        for j in range(i, values.shape[1]):
            stats[f"cov[{i},{j}]"] = (centred[:, i] * centred[:, j], cov[i, j])
    for stat, (series, truth) in stats.items():
        ess = float(effective_sample_size(series[None, :]))
        assert ess >= min_ess, f"{name} {stat}: effective sample size {ess:.0f} too small"
        se = np.std(series) / np.sqrt(ess)
        est = float(np.mean(series))
        assert abs(est - truth) <= k * se, f"{name} {stat}: {est:.5g} vs {truth:.5g} (se {se:.3g}, ess {ess:.0f})"


def _check_target(name, x, mu, rate):
    _check_moments(f"{name} gaussian", x, GAUSS_MEAN, cov=GAUSS_COV)
    _check_moments(f"{name} normal mean", mu, MU_POST_MEAN, var=MU_POST_VAR)
    _check_moments(f"{name} gamma rate", rate, RATE_POST_MEAN, var=RATE_POST_VAR)


# ----------------------------------------------------------------------------- samplers


@pytest.fixture(scope="module")
def slice_mcmc():
    mcmc = MCMC(jslice.SliceSampler(numpyro_model), num_warmup=300, num_samples=3000, progress_bar=False)
    mcmc.run(jax.random.key(0), jnp.asarray(Y_OBS), jnp.asarray(K_OBS))
    return mcmc


def test_slice_sampler_under_numpyro_mcmc(slice_mcmc):
    s = slice_mcmc.get_samples()
    assert s["x"].shape == (3000, 2) and s["mu"].shape == (3000,)
    assert bool(jnp.all(s["rate"] > 0))
    _check_target("SliceSampler/MCMC", s["x"], s["mu"], s["rate"])
    state = slice_mcmc.last_state
    assert int(state.num_stalled) == 0
    assert int(state.num_evals) > 0


def test_slice_sampler_constructor_requires_exactly_one_target():
    with pytest.raises(ValueError):
        jslice.SliceSampler()
    with pytest.raises(ValueError):
        jslice.SliceSampler(numpyro_model, potential_fn=lambda z: 0.0)


def _split(samples: Samples):
    return samples.params["x"], samples.params["mu"], samples.params["rate"]


def test_inference_slice_sample_recovers_posterior():
    """Through ``infer`` (dispatch), warm-started from a ``previous`` sample far out in the tails."""
    far = jnp.array([[4.0, -6.0, 5.0, 2.5]])  # x, mu, log(rate): unconstrained coordinates
    previous = Samples(None, far, jnp.zeros(1), {})
    samples = inference.infer(jax.random.key(2), CONJUGATE, CONJ_DATA, "slice", previous=previous,
                              num_samples=3000, num_warmup=200)
    assert samples.z.shape == (3000, 4) and samples.log_density.shape == (3000,)
    assert int(samples.info["num_stalled"]) == 0
    _check_target("infer(slice)", *_split(samples))


def test_inference_nuts_sample_recovers_posterior():
    samples = inference.nuts_sample(jax.random.key(3), CONJUGATE, CONJ_DATA, num_samples=2000, num_warmup=300)
    assert samples.z.shape == (2000, 4)
    assert int(samples.info["num_divergent"]) == 0
    assert 0.5 < float(samples.info["mean_accept_prob"]) <= 1.0
    _check_target("inference.nuts_sample", *_split(samples))


def test_infer_unknown_method_lists_choices():
    with pytest.raises(ValueError) as err:
        inference.infer(jax.random.key(0), CONJUGATE, CONJ_DATA, "hmc")
    message = str(err.value)
    assert "hmc" in message
    for method in ("slice", "nuts", "map"):
        assert method in message


# ----------------------------------------------------------------------------- the stall guard

Z0 = jnp.array([0.3, -1.2, 2.0])


def _spike(z, fill):
    """Log density ``fill`` (-inf or nan) everywhere except at Z0."""
    return jnp.where(jnp.all(z == Z0), 0.0, fill)


@jax.jit
def _spike_sweep(key, logp, fill):
    return jslice.sweep(key, Z0, logp, lambda z: _spike(z, fill), 1.0, max_steps_out=10, max_shrink=50)


@pytest.mark.parametrize("fill", [-np.inf, np.nan], ids=["-inf", "nan"])
def test_sweep_stalls_gracefully_on_a_spike(fill):
    z, logp, info = _spike_sweep(jax.random.key(0), 0.0, fill)
    np.testing.assert_array_equal(z, Z0)
    assert float(logp) == 0.0
    assert int(info.num_stalled) == 3  # every coordinate hit the shrink cap
    assert 3 <= int(info.num_evals) <= 3 * (10 + 50 + 2)
    # A density that is -inf (or nan) even at the current point: still returns, still stalls.
    z, logp, info = _spike_sweep(jax.random.key(1), fill, fill)
    np.testing.assert_array_equal(z, Z0)
    assert int(info.num_stalled) == 3


def test_sweep_keeps_the_dtype_of_z_when_the_density_is_wider():
    """A float32 chain whose density comes back in float64 (x64 enabled, a prior built from Python floats,
    as BOCK's float32 runs under ``jax_enable_x64``): the sweep runs and stays in float32."""
    assert jax.config.jax_enable_x64
    z0 = jnp.array([0.3, -0.2], jnp.float32)

    def logdensity(z):
        return -0.5 * jnp.sum(z.astype(jnp.float64) ** 2)

    z, logp, info = jax.jit(lambda key: jslice.sweep(key, z0, jnp.asarray(jnp.nan, jnp.float32), logdensity, 1.0))(
        jax.random.key(0))
    assert z.dtype == jnp.float32 and logp.dtype == jnp.float32
    np.testing.assert_allclose(float(logp), float(logdensity(z)), rtol=1e-6)
    assert int(info.num_stalled) == 0


def test_slice_sampler_kernel_reports_stalls_under_mcmc():
    """The ``potential_fn`` form under numpyro's MCMC, on a nan-everywhere-but-one-point density."""
    potential = lambda z: -_spike(z["z"], jnp.nan)
    mcmc = MCMC(jslice.SliceSampler(potential_fn=potential, max_shrink=20), num_warmup=0, num_samples=5,
                progress_bar=False)
    mcmc.run(jax.random.key(0), init_params={"z": Z0})
    samples = np.asarray(mcmc.get_samples()["z"])
    np.testing.assert_array_equal(samples, np.broadcast_to(np.asarray(Z0), samples.shape))
    assert int(mcmc.last_state.num_stalled) == 5 * 3


# ----------------------------------------------------------------------------- MAP on a GP

GP = gp_surrogate(Matern52())  # the GP model's (cached) surrogate


def _gp_data(n=12, d=2, seed=0):
    """Data drawn from a known GP (Matern-5/2, lengthscales 0.3 and 0.6, small noise), standardised."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, d))
    ls = np.array([0.3, 0.6])
    r = np.sqrt(5.0 * np.sum(((x[:, None] - x[None]) / ls) ** 2, -1))
    K = (1 + r + r**2 / 3) * np.exp(-r) + 1e-4 * np.eye(n)
    y = np.linalg.cholesky(K) @ rng.standard_normal(n)
    return pad_data(x, (y - y.mean()) / y.std())


@pytest.fixture(scope="module")
def gp_problem():
    data = _gp_data()
    flat = inference._flat_view(GP, data)
    logdensity = jax.jit(jax.vmap(flat.logdensity))
    draws = jax.jit(lambda k: inference.prior_draws(k, GP, data, 64))(jax.random.key(123))
    return data, flat, logdensity, draws


def _finite_tree(tree):
    return all(np.all(np.isfinite(np.asarray(leaf))) for leaf in jax.tree_util.tree_leaves(tree))


# The loop calls ``infer(..., "map", num_restarts=k)``; calling it the same way here shares the
# compiled programs with tests/test_core_loop.py (jit caches on the call signature).


@pytest.fixture(scope="module")
def cold_map(gp_problem):
    data, *_ = gp_problem
    return inference.infer(jax.random.key(7), GP, data, "map", num_restarts=4)


def test_map_estimate_cold_start(gp_problem, cold_map):
    data, flat, logdensity, draws = gp_problem
    samples = cold_map
    assert samples.z.shape == (1, flat.size) and samples.log_density.shape == (1,)
    assert _finite_tree(samples.params) and np.isfinite(float(samples.log_density[0]))
    p = samples.params
    assert p["kernel"]["lengthscale"].shape == (1, 2)
    assert bool(jnp.all(p["kernel"]["lengthscale"] > 0)) and float(p["kernel"]["amplitude"][0]) > 0
    assert float(p["noise"][0]) > 0
    # The reported log density is the model's at the returned point, and the best of the starts.
    np.testing.assert_allclose(float(logdensity(samples.z)[0]), float(samples.log_density[0]), rtol=1e-10)
    per_start = np.asarray(samples.info["log_density_per_start"])
    assert float(samples.log_density[0]) == pytest.approx(np.max(per_start[np.isfinite(per_start)]))
    # A posterior mode beats random prior draws.
    prior_logp = np.asarray(logdensity(draws))
    assert float(samples.log_density[0]) >= np.max(prior_logp[np.isfinite(prior_logp)])


def test_map_estimate_warm_start_never_worse_than_its_start(gp_problem):
    data, flat, logdensity, draws = gp_problem
    start_logp = np.asarray(logdensity(draws))[:3]  # (the shape the cold start's test compiled)
    for i in range(3):
        previous = Samples(None, draws[i][None], jnp.zeros(1), {})
        out = inference.infer(jax.random.key(i), GP, data, "map", previous=previous, num_restarts=0)
        assert _finite_tree(out.params)
        assert float(out.log_density[0]) >= start_logp[i] - 1e-9, (i, float(out.log_density[0]), start_logp[i])
        assert float(out.log_density[0]) > start_logp[i]  # it actually moved uphill from a prior draw


def test_map_warm_start_refines_previous_estimate(gp_problem, cold_map):
    data, *_ = gp_problem
    again = inference.infer(jax.random.key(9), GP, data, "map", previous=cold_map, num_restarts=0)
    assert float(again.log_density[0]) >= float(cold_map.log_density[0]) - 1e-9
    assert _finite_tree(again.params)


def test_warm_fits_discard_no_sweeps_by_default_with_the_gp_slice_sampler():
    """The GP's warm slice chain goes on from the last sample (Spearmint's scheme); the other models
    and NUTS discard 5 sweeps or steps; an explicit num_warmup wins."""
    from jbo.models import BOCK, DNGO, GP, Arc, Matern, Tree

    assert GP().inference_config.num_warmup == 0
    assert Matern().inference_config.num_warmup == 0
    for other in (BOCK(), Arc(), DNGO(), Tree()):  # measured worse (BOCK) or not measured: 5 sweeps
        assert other.inference_config.num_warmup == 5
    assert GP(inference="nuts").inference_config.num_warmup == 5
    assert GP(num_warmup=3).inference_config.num_warmup == 3
    assert GP(inference="nuts", num_warmup=0).inference_config.num_warmup == 0
    with pytest.raises(ValueError, match="num_warmup"):
        GP(num_warmup=-1)


# ----------------------------------------------------------------------------- several chains


def test_slice_chains_recover_the_posterior_side_by_side_and_one_after_another():
    """C independent chains from the same far start: the pooled samples have the posterior's moments,
    and running them in parallel (vmap) or in turn (lax.map) gives the same samples."""
    far = jnp.array([4.0, -6.0, 5.0, 2.5])
    kwargs = dict(num_samples=4 * 1000, num_warmup=200, num_chains=4)
    parallel = inference.slice_sample(jax.random.key(5), CONJUGATE, CONJ_DATA, far, parallel=True, **kwargs)
    in_turn = inference.slice_sample(jax.random.key(5), CONJUGATE, CONJ_DATA, far, parallel=False, **kwargs)
    assert parallel.z.shape == (4000, 4) and parallel.params["x"].shape == (4000, 2)
    np.testing.assert_allclose(np.asarray(parallel.z), np.asarray(in_turn.z), rtol=1e-10, atol=1e-12)
    assert int(parallel.info["num_evals"]) == int(in_turn.info["num_evals"]) > 0
    _check_target("slice, 4 chains", *_split(parallel))
    chains = np.asarray(parallel.z).reshape(4, 1000, 4)
    assert len({tuple(np.round(c[-1], 9)) for c in chains}) == 4  # the chains are independent
    np.testing.assert_array_equal(np.asarray(inference.next_start(parallel, inference.InferenceConfig(num_chains=4))),
                                  chains[:, -1])
    np.testing.assert_array_equal(np.asarray(inference.next_start(parallel, inference.InferenceConfig())),
                                  chains[-1, -1])


def test_one_chain_of_chains_is_the_single_chain():
    """num_chains=1 is the plain chain, whatever the parallel flag (one program, no reshaping)."""
    a = inference.slice_sample(jax.random.key(6), CONJUGATE, CONJ_DATA, num_samples=20, num_warmup=5)
    b = inference.slice_sample(jax.random.key(6), CONJUGATE, CONJ_DATA, num_samples=20, num_warmup=5,
                               num_chains=1, parallel=True)
    np.testing.assert_array_equal(np.asarray(a.z), np.asarray(b.z))


def test_num_chains_is_validated_and_carried_by_the_models():
    from jbo.models import DNGO, GP

    assert GP(num_chains=5).inference_config.num_chains == 5
    assert GP().inference_config.num_chains == 1
    with pytest.raises(ValueError, match="num_chains .3. must divide num_samples .10."):
        GP(num_chains=3)
    with pytest.raises(ValueError, match="num_chains > 1 applies to inference='slice'"):
        GP(inference="map", num_chains=2)
    with pytest.raises(ValueError, match="num_chains must be an integer >= 1"):
        DNGO(num_chains=0)
    with pytest.raises(ValueError, match="must divide"):
        inference.slice_sample(jax.random.key(0), CONJUGATE, CONJ_DATA, num_samples=10, num_chains=4)


def test_elliptical_sample_recovers_posterior():
    """Elliptical slice sampling against the Laplace approximation at the mode, from a start far in the tails."""
    far = jnp.array([[4.0, -6.0, 5.0, 2.5]])
    previous = Samples(None, far, jnp.zeros(1), {})
    samples = inference.infer(jax.random.key(7), CONJUGATE, CONJ_DATA, "elliptical", previous=previous,
                              num_samples=6000, num_warmup=300)
    assert samples.z.shape == (6000, 4) and int(samples.info["num_stalled"]) == 0
    assert float(samples.info["num_evals"]) / (6300) < 4  # a few evaluations per step for all coordinates
    _check_target("infer(elliptical)", *_split(samples))


def test_the_laplace_reference_of_a_gaussian_has_its_curvatures():
    """The diagonal Laplace reference of a Gaussian: the mode, and standard deviations 1 / sqrt of the precision's
    diagonal (second differences are exact for a quadratic), times the inflation."""
    mean = jnp.array([1.0, -2.0])
    precision = jnp.linalg.inv(jnp.asarray(GAUSS_COV))
    logdensity = lambda z: -0.5 * (z - mean) @ precision @ (z - mean)
    reference = inference.elliptical.laplace(logdensity, mean, inflation=1.0)
    np.testing.assert_allclose(reference.mean, mean)
    np.testing.assert_allclose(reference.scale, 1 / np.sqrt(np.diag(precision)), rtol=1e-6)
    z = jnp.array([0.3, 0.7])
    np.testing.assert_allclose(reference.log_density(z), -0.5 * np.sum(((z - mean) / reference.scale) ** 2))
    flat = inference.elliptical.laplace(lambda z: 0.0 * jnp.sum(z), mean)  # no curvature: capped widths
    np.testing.assert_allclose(flat.scale, 1.5 / np.sqrt(1e-2))


def test_elliptical_starts_carry_the_chain_and_the_mode():
    config = inference.InferenceConfig("elliptical", num_samples=6)
    start = inference.cold_start(jax.random.key(0), CONJUGATE, CONJ_DATA, config)
    assert start.z.shape == (3, 4) and start.restarts.shape == (config.map_restarts, 4)
    samples = inference.fit(jax.random.key(1), CONJUGATE, CONJ_DATA, config, start, jnp.asarray(True))
    following = inference.next_start(samples, config)
    np.testing.assert_array_equal(following, np.stack([samples.z[-1], samples.mode, samples.info["reference_scale"]]))
    # A warm fit searches in the previous reference's units and finds the same mode (on other data: new targets).
    shifted = CONJ_DATA._replace(y=CONJ_DATA.y + 0.3)
    warm = inference.fit(jax.random.key(2), CONJUGATE, shifted, config, start._replace(z=following), jnp.asarray(False))
    cold = inference.map_estimate(jax.random.key(3), CONJUGATE, shifted, samples.mode)
    np.testing.assert_allclose(warm.mode, cold.z[0], atol=1e-3)


def test_elliptical_samples_the_gp_posterior_of_a_long_slice_chain():
    """The GP's hyperparameter posterior (ARD Matérn, 3-d, 30 points): elliptical slice sampling continued over
    fits as the BO loop runs it (each fit's reference the previous fit's samples) against a long univariate slice
    chain: means and standard deviations of every unconstrained coordinate agree within 4 Monte Carlo standard
    errors of their difference."""
    surrogate, data = GP, _gp_data()
    reference = inference.slice_sample(jax.random.key(0), surrogate, data, num_samples=4000, num_warmup=300)
    config = inference.InferenceConfig("elliptical", num_samples=10, num_burnin=50, num_warmup=0)
    start = inference.cold_start(jax.random.key(1), surrogate, data, config)
    fit = jax.jit(lambda k, z, first: inference.fit(k, surrogate, data, config, start._replace(z=z), first))
    z, chain, evals = start.z, [], 0
    for t in range(400):
        samples = fit(jax.random.key(100 + t), z, t == 0)
        z = inference.next_start(samples, config)
        evals += int(samples.info["num_evals"])
        if t >= 20:
            chain.append(np.asarray(samples.z))
    chain = np.concatenate(chain)
    for i in range(chain.shape[1]):
        for name, series, truth in (("mean", chain[:, i], np.asarray(reference.z)[:, i]),
                                    ("sd", np.abs(chain[:, i] - chain[:, i].mean()),
                                     np.abs(np.asarray(reference.z)[:, i] - np.asarray(reference.z)[:, i].mean()))):
            se = np.hypot(np.std(series) / np.sqrt(float(effective_sample_size(series[None]))),
                          np.std(truth) / np.sqrt(float(effective_sample_size(truth[None]))))
            assert abs(series.mean() - truth.mean()) <= 4 * se, (name, i, series.mean(), truth.mean(), se)
    assert evals / (400 * 10) < 8  # a few density evaluations per step, for all coordinates at once
