"""The output warp chosen by the model's evidence (``StepConfig.evidence_warp``, jbo.models.sampled): the warp's
log-Jacobian against SciPy, the evidence against a closed form, the choice on data that need the warp and on data
that do not, scale invariance, validation and journals."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import jbo
from jbo import inference, loop, warping
from jbo.kernels import Matern52
from jbo.models import sampled
from jbo.surrogates import exact_gp
from jbo.types import Data, Inputs, Pending, Start

N_PAD = 32


def padded(values):
    y = np.full(N_PAD, -55.0)  # garbage the mask must make inert
    y[: len(values)] = values
    return jnp.asarray(y), jnp.arange(N_PAD) < len(values)


@pytest.mark.parametrize("seed", range(3))
def test_log_jacobian_is_the_derivative_of_scipys_transform(seed):
    """``log |∂z/∂y|`` with the standardising constants and λ held (the warped GP's convention): the sum of the
    logs of the elementwise derivatives of ``y → (ψ((y - ȳ)/s_y, λ) - t̄)/s_t``, ψ SciPy's, by central differences."""
    rng = np.random.default_rng(seed)
    values = 3.0 + 40.0 * np.exp(rng.normal(size=17) * (0.8 + seed / 2)) * (-1) ** seed
    z, log_jacobian, lam = warping.yeo_johnson_with_log_jacobian(*padded(values))
    lam = float(lam)
    mean_y, std_y = values.mean(), values.std()
    t = stats.yeojohnson((values - mean_y) / std_y, lmbda=lam)
    mean_t, std_t = t.mean(), t.std()

    def forward(v):
        return (stats.yeojohnson((v - mean_y) / std_y, lmbda=lam) - mean_t) / std_t

    np.testing.assert_allclose(np.asarray(z)[:17], forward(values), rtol=1e-9, atol=1e-10)
    h = 1e-6 * std_y
    derivative = (forward(values + h) - forward(values - h)) / (2 * h)
    np.testing.assert_allclose(float(log_jacobian), np.sum(np.log(derivative)), rtol=1e-6)


def test_evidence_of_a_linearly_warped_gp_is_the_unwarped_one():
    """A warp ``z = a·y`` with the signal and noise variances scaled by ``a²`` is the same model of ``y``: the
    evidence, with the Jacobian ``n log a``, is unchanged, and without a warp it is SciPy's Gaussian log density
    (averaged over the samples), less BIC's ``k/2 log n`` for ``k`` fitted warp parameters."""
    rng = np.random.default_rng(4)
    n, dim, a = 11, 2, 7.5
    x = rng.random((n, dim))
    y = np.sin(4 * x[:, 0]) + x[:, 1]
    surrogate = exact_gp(Matern52(), noise_floor=0.0, jitter=1e-12)

    def params(scale):  # two samples
        return {"kernel": {"lengthscale": jnp.asarray([[0.4, 0.9], [0.7, 0.3]]),
                           "amplitude": jnp.asarray([1.3, 0.6]) * scale ** 2},
                "noise": jnp.asarray([0.05, 0.2]) * scale ** 2, "mean": jnp.asarray([0.1, -0.2]) * scale}

    def data(values):
        pad = np.zeros((N_PAD - n, dim))
        return Data(jnp.asarray(np.vstack([x, pad + 0.5])), padded(values)[0], padded(values)[1])

    plain = float(sampled.warp_evidence(surrogate, params(1.0), data(y)))
    scaled = float(sampled.warp_evidence(surrogate, params(a), data(a * y), n * np.log(a)))
    assert scaled == pytest.approx(plain, rel=1e-10)
    expected = []
    for s in range(2):
        lengthscale = np.array([[0.4, 0.9], [0.7, 0.3]])[s]
        r = np.sqrt(5 * np.sum(((x[:, None] - x[None]) / lengthscale) ** 2, -1))
        gram = [1.3, 0.6][s] * (1 + r + r ** 2 / 3) * np.exp(-r) + ([0.05, 0.2][s] + 1e-12) * np.eye(n)
        expected.append(stats.multivariate_normal(np.full(n, [0.1, -0.2][s]), gram).logpdf(y))
    assert plain == pytest.approx(np.mean(expected), rel=1e-10)
    penalised = float(sampled.warp_evidence(surrogate, params(1.0), data(y), num_fitted=1))
    assert penalised == pytest.approx(plain - 0.5 * np.log(n), rel=1e-12)


def choose(values, x):
    """``fit_choosing_warp`` (MAP) on standardised ``values`` at ``x``: ``(warped, evidence gain, chosen y)``."""
    config = jbo.models.GP(inference="map", evidence_warp=True)
    n, dim = x.shape
    space = _space(dim)
    surrogate = config.surrogate_for(space)
    y, mask = padded((values - values.mean()) / values.std())
    data = Data(jnp.asarray(np.vstack([x, np.full((N_PAD - n, dim), 0.5)])), jnp.where(mask, y, 0.0), mask)
    state = config.init(space, jnp.float64, jax.random.PRNGKey(0))
    inputs = Inputs(data, Pending.empty(dim), None, jnp.min(jnp.where(mask, data.y, jnp.inf)), jnp.asarray(True),
                    jnp.asarray(2.0))
    samples, chosen, z, info = jax.jit(sampled.fit_choosing_warp, static_argnums=(1, 2))(
        jax.random.PRNGKey(1), surrogate, config, state, inputs)
    assert z.shape[0] == 2 and np.all(np.isfinite(np.asarray(z)))
    return int(info["warped"]), float(info["warp_evidence"]), chosen


def _space(dim):
    return jbo.Space({f"x{i}": jbo.Real(0.0, 1.0) for i in range(dim)})


def test_the_evidence_keeps_the_warp_where_values_span_decades_and_drops_it_on_a_smooth_function():
    rng = np.random.default_rng(0)
    x = rng.random((24, 2))
    warped, gain, chosen = choose(np.exp(6 * x[:, 0] + 4 * x[:, 1]), x)  # values spanning four decades
    assert warped == 1 and gain > 0
    expected = warping.yeo_johnson(*padded(np.exp(6 * x[:, 0] + 4 * x[:, 1])))
    np.testing.assert_allclose(np.asarray(chosen.data.y)[:24], np.asarray(expected)[:24], rtol=1e-9)
    assert float(chosen.best) == pytest.approx(np.min(np.asarray(expected)[:24]))
    smooth = np.sin(3 * x[:, 0]) + np.cos(2 * x[:, 1])  # a smooth, symmetric landscape: nothing to warp
    warped, gain, chosen = choose(smooth, x)
    assert warped == 0 and gain < 0
    np.testing.assert_allclose(np.asarray(chosen.data.y)[:24], (smooth - smooth.mean()) / smooth.std(), rtol=1e-9)


@pytest.mark.parametrize("model", ["gp", "bock"])
def test_evidence_warp_suggests_the_same_points_in_any_units(model):
    """As the default models (tests/test_warping.py): ``f``, ``10⁻³·f`` and ``10³·f + 7`` give the same points to
    1e-6, with the warp chosen at every model suggestion and recorded in the suggestion's info."""
    from jbo.benchmarks import get_problem

    problem = get_problem("rosenbrock", dim=4)
    space = problem.space()
    runs, choices = [], []
    for a, b in ((1.0, 0.0), (1e-3, 0.0), (1e3, 7.0)):
        opt = jbo.Optimizer(space, seed=5, model=model, n_init=5, evidence_warp=True, inference="map",
                            maximize=dict(num_anchors=256, num_local=8, top_k=2, num_steps=20))
        points, warped = [], []
        for _ in range(8):
            config = opt.ask()
            points.append(space.encode(config))
            if opt.last_info["phase"] == "model":
                warped.append(int(opt.last_info["warped"]))
            opt.tell(config, a * problem.evaluate(config) + b)
        runs.append(np.asarray(points))
        choices.append(warped)
    assert len(choices[0]) == 3 and choices[1] == choices[0] == choices[2]
    np.testing.assert_allclose(runs[1], runs[0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(runs[2], runs[0], rtol=0, atol=1e-6)


def test_evidence_warp_is_validated_and_recorded():
    settings = loop.Settings.create("gp", evidence_warp=True)
    assert settings.output_warping == "none" and settings.model.evidence_warp
    assert loop.Settings.create("bock", evidence_warp=True).output_warping == "none"
    with pytest.raises(ValueError, match="output_warping='yeo-johnson' with evidence_warp=True"):
        loop.Settings.create("gp", evidence_warp=True, output_warping="yeo-johnson")
    with pytest.raises(ValueError, match="evidence_warp=True needs BOCK"):
        jbo.models.create("bock", units="objective", evidence_warp=True)
    with pytest.raises(ValueError, match="evidence_warp"):
        jbo.models.create("gp", evidence_warp="yes")
    assert loop.Settings.from_dict(settings.to_dict()) == settings
    old = loop.Settings.create("bock").to_dict()
    del old["model"]["evidence_warp"]  # journals from before the option resume as they ran
    assert not loop.Settings.from_dict(old).model.evidence_warp


def test_a_fit_of_each_targets_continues_its_own_chain():
    """Slice sampling: both fits start where their own last one ended (the state's leading axis of 2)."""
    config = jbo.models.GP(evidence_warp=True, num_samples=3, num_burnin=4)
    space = _space(2)
    state = config.init(space, jnp.float64, jax.random.PRNGKey(0))
    assert state.z.shape[0] == 2 and np.array_equal(state.z[0], state.z[1])
    rng = np.random.default_rng(2)
    x = rng.random((10, 2))
    values = np.exp(5 * x[:, 0])
    y, mask = padded((values - values.mean()) / values.std())
    data = Data(jnp.asarray(np.vstack([x, np.full((N_PAD - 10, 2), 0.5)])), jnp.where(mask, y, 0.0), mask)
    inputs = Inputs(data, Pending.empty(2), None, jnp.min(jnp.where(mask, data.y, jnp.inf)), jnp.asarray(True),
                    jnp.asarray(2.0))
    surrogate = config.surrogate_for(space)
    _, _, z, _ = sampled.fit_choosing_warp(jax.random.PRNGKey(3), surrogate, config, state, inputs)
    for i, targets in enumerate((data, data._replace(y=warping.yeo_johnson(data.y, data.mask)))):
        own = inference.fit(jax.random.fold_in(jax.random.PRNGKey(3), i), surrogate, targets,
                            config.inference_config, Start(state.z[i], state.restarts), jnp.asarray(True))
        following = inference.next_start(own, inference.InferenceConfig())
        np.testing.assert_allclose(np.asarray(z[i]), np.asarray(following), rtol=1e-12)
