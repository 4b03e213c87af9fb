"""Tests of the arc kernel (Swersky et al. 2013): desiderata (1) and (2), eq. (4), PSD Gram
matrices, the priors on ω and ρ, and jit / vmap / grad / composition."""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jbo import inference, priors
from jbo.data import pad_data
from jbo.kernels import (
    Arc,
    Matern52,
    RationalQuadratic,
    SquaredExponential,
    all_relevant,
    arc_distances,
    arc_embedding,
    make_arc_kernel,
)
from jbo.surrogates import exact_gp

BASES = {"matern52": Matern52(), "se": SquaredExponential(), "rq": RationalQuadratic()}


# --------------------------------------------------------------------------------------------
# conditional structures used as relevance functions
# --------------------------------------------------------------------------------------------
def depth_relevance(thresholds):
    """A network-depth space: coordinate 0 picks the depth, coordinate j >= 1 is relevant iff
    x_0 >= thresholds[j - 1] (deeper layers need larger x_0; thresholds sorted, first 0)."""
    t = np.asarray(thresholds, dtype=np.float64)

    def relevance(x):
        return jnp.concatenate([jnp.ones_like(x[..., :1], dtype=bool), x[..., :1] >= jnp.asarray(t, x.dtype)], -1)

    return relevance


def _params(dim, rng, base="matern52"):
    p = {
        "omega": jnp.asarray(np.exp(rng.normal(0.0, 1.0, dim))),
        "rho": jnp.asarray(rng.uniform(0.0, 1.0, dim)),
        "amplitude": jnp.asarray(np.exp(rng.normal())),
    }
    if base == "rq":
        p["alpha"] = jnp.asarray(np.exp(rng.normal()))
    return p


def _thresholds(dim):
    # coordinate 1 always relevant, deeper ones from evenly spaced depths on
    return tuple(np.linspace(0.0, 1.0, dim)[:-1].round(6))


@functools.lru_cache(maxsize=None)
def _kernel(thresholds, base):
    return Arc(BASES[base], depth_relevance(thresholds))


@functools.lru_cache(maxsize=None)
def _compiled(thresholds, base):
    """Jitted ``(call, gram, distances, relevance)`` of one kernel: one compile per structure."""
    k = _kernel(thresholds, base)
    return jax.jit(k.__call__), jax.jit(k.gram), jax.jit(k.distances), jax.jit(k.relevance_fn)


@st.composite
def configurations(draw):
    """A random conditional configuration: dimension and depth structure, base kernel, arc
    params, and a pair of points (their depths, hence relevance patterns, are random)."""
    dim = draw(st.integers(2, 6))
    base = draw(st.sampled_from(sorted(BASES)))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    unit = st.floats(0.0, 1.0, allow_nan=False)
    x1 = np.array(draw(st.lists(unit, min_size=dim, max_size=dim)))
    x2 = np.array(draw(st.lists(unit, min_size=dim, max_size=dim)))
    return dim, _thresholds(dim), base, _params(dim, rng, base), x1, x2, rng


# --------------------------------------------------------------------------------------------
# desiderata (1) and (2), exactly
# --------------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configurations())
def test_desideratum_1_irrelevant_values_do_not_matter(config):
    """Eq. (1): for two points, changing any value irrelevant to its own point (here: every
    coordinate j >= 1 irrelevant at the fixed x_0) leaves the kernel value bit-for-bit equal."""
    dim, thresholds, base, params, x1, x2, rng = config
    call, gram, _, relevance = _compiled(thresholds, base)
    r1 = np.asarray(relevance(x1))
    r2 = np.asarray(relevance(x2))
    y1, y2 = x1.copy(), x2.copy()
    y1[~r1] = rng.random((~r1).sum())
    y2[~r2] = rng.random((~r2).sum())
    # x_0 stays put, so relevance is unchanged
    assert np.array_equal(np.asarray(relevance(y1)), r1)
    assert float(call(params, x1, x2)) == float(call(params, y1, y2))
    g_before = np.asarray(gram(params, np.stack([x1, x2]), np.stack([x2, x1])))
    g_after = np.asarray(gram(params, np.stack([y1, y2]), np.stack([y2, y1])))
    np.testing.assert_array_equal(g_before, g_after)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configurations())
def test_desideratum_2_relevant_vs_irrelevant(config):
    """Eq. (2): where a dimension is relevant to one point only, the kernel does not depend on the
    value in either point (the distance there is ω_i whatever the relevant value), bit for bit."""
    dim, thresholds, base, params, x1, x2, rng = config
    # make x1 shallow and x2 deep: the deepest dimensions are relevant to x2 only
    x1[0] = 0.0
    x2[0] = 1.0
    call, gram, distances, relevance = _compiled(thresholds, base)
    r1 = np.asarray(relevance(x1))
    r2 = np.asarray(relevance(x2))
    only_one = r1 != r2
    assert only_one.any() == (dim > 2)  # coordinate 1 is relevant to both, deeper ones to x2 only
    y1, y2 = x1.copy(), x2.copy()
    y1[only_one] = rng.random(only_one.sum())
    y2[only_one] = rng.random(only_one.sum())  # the relevant values move
    assert float(call(params, x1, x2)) == float(call(params, y1, y2))
    np.testing.assert_array_equal(np.asarray(gram(params, x1[None], x2[None])),
                                  np.asarray(gram(params, y1[None], y2[None])))
    # and the distance in each such dimension is omega exactly
    d = np.asarray(distances(params, y1, y2))
    np.testing.assert_array_equal(d[only_one], np.asarray(params["omega"])[only_one])


def test_shared_relevant_values_do_matter():
    """The kernel is not trivially constant: moving a value relevant to both points changes it."""
    k = _kernel((0.0, 0.5), "matern52")
    params = _params(3, np.random.default_rng(0))
    x1, x2 = jnp.array([0.9, 0.2, 0.3]), jnp.array([0.8, 0.6, 0.7])
    assert float(k(params, x1, x2)) != float(k(params, x1, x2.at[2].set(0.1)))
    assert float(k(params, x1, x2)) != float(k(params, x1, x2.at[0].set(0.3)))  # x_0 always relevant


# --------------------------------------------------------------------------------------------
# eq. (3) and eq. (4)
# --------------------------------------------------------------------------------------------
def _eq4(x1, x2, r1, r2, omega, rho):
    """Eq. (4) as printed, case by case."""
    out = np.empty(len(x1))
    for i in range(len(x1)):
        if not r1[i] and not r2[i]:
            out[i] = 0.0
        elif r1[i] != r2[i]:
            out[i] = omega[i]
        else:
            out[i] = omega[i] * math.sqrt(2.0) * math.sqrt(1.0 - math.cos(math.pi * rho[i] * (x1[i] - x2[i])))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configurations())
def test_distances_equal_eq4_and_the_embedding(config):
    dim, thresholds, base, params, x1, x2, rng = config
    call, _, distances, relevance = _compiled(thresholds, base)
    r1 = np.asarray(relevance(x1))
    r2 = np.asarray(relevance(x2))
    omega, rho = np.asarray(params["omega"]), np.asarray(params["rho"])
    d = np.asarray(distances(params, x1, x2))
    np.testing.assert_allclose(d, _eq4(x1, x2, r1, r2, omega, rho), rtol=1e-9, atol=1e-12)
    # eq. (3) by hand, and the Euclidean distance of the embedded blocks
    g = lambda x, r: np.array([[om * np.sin(np.pi * rh * xi), om * np.cos(np.pi * rh * xi)] if ri else [0.0, 0.0]
                               for xi, ri, om, rh in zip(x, r, omega, rho)])  # noqa: E731
    g1 = np.asarray(jax.jit(arc_embedding)(x1, r1, params["omega"], params["rho"]))
    np.testing.assert_allclose(g1, g(x1, r1), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(d, np.linalg.norm(g(x1, r1) - g(x2, r2), axis=-1), rtol=1e-7, atol=1e-7)
    # the kernel is the base profile of the summed squared distance, e.g. SE: a exp(-Δ²/2)
    delta2 = float(np.sum(d**2))
    a = float(params["amplitude"])
    expected = {
        "se": a * math.exp(-0.5 * delta2),
        "matern52": a * (1 + math.sqrt(5 * delta2) + 5 * delta2 / 3) * math.exp(-math.sqrt(5 * delta2)),
        "rq": a * (1 + delta2 / (2 * float(params.get("alpha", 1.0)))) ** (-float(params.get("alpha", 1.0))),
    }[base]
    assert float(call(params, x1, x2)) == pytest.approx(expected, rel=1e-10, abs=1e-14)


def test_distances_limits():
    """ρ = 1 spreads relevant values over a half circle: the distance of 0 and 1 is 2ω (the
    diameter), larger than ω, the distance to "irrelevant"; ρ → 0 collapses relevant values."""
    omega, rho = jnp.array([1.5]), jnp.array([1.0])
    d = arc_distances(jnp.array([0.0]), jnp.array([1.0]), jnp.array([True]), jnp.array([True]), omega, rho)
    assert float(d[0]) == pytest.approx(3.0, rel=1e-12)
    d = arc_distances(jnp.array([0.0]), jnp.array([1.0]), jnp.array([True]), jnp.array([True]), omega, jnp.array([0.0]))
    assert float(d[0]) == 0.0
    d = arc_distances(jnp.array([0.3]), jnp.array([0.9]), jnp.array([True]), jnp.array([False]), omega, rho)
    assert float(d[0]) == 1.5


# --------------------------------------------------------------------------------------------
# Gram matrices
# --------------------------------------------------------------------------------------------
def _conditional_data(n, dim, seed):
    rng = np.random.default_rng(seed)
    x = rng.random((n, dim))
    # several points share a depth and relevant values, differing only in irrelevant ones
    x[n // 2: n // 2 + 5] = x[n // 2]
    x[n // 2 + 1: n // 2 + 5, 1:] = rng.random((4, dim - 1))
    return x


@pytest.mark.parametrize("base", sorted(BASES))
def test_gram_psd_and_equal_to_pairwise(base):
    dim = 5
    k = _kernel(_thresholds(dim), base)
    _, gram, _, _ = _compiled(_thresholds(dim), base)
    pairwise_gram = jax.jit(lambda params, x: jax.vmap(lambda a: jax.vmap(lambda b: k(params, a, b))(x))(x))
    rng = np.random.default_rng(3)
    for trial in range(4):
        params = _params(dim, rng, base)
        if trial == 3:  # extremes: near-degenerate angles and large scales
            params["rho"] = jnp.array([1e-6, 1.0, 0.999, 0.5, 1e-3])
            params["omega"] = jnp.array([50.0, 1e-3, 10.0, 1.0, 0.1])
        x = jnp.asarray(_conditional_data(80, dim, seed=trial))
        G = np.asarray(gram(params, x, x))
        np.testing.assert_allclose(G, G.T, rtol=0, atol=1e-13)
        assert np.linalg.eigvalsh(G).min() >= -1e-10 * max(1.0, float(params["amplitude"]))
        pairwise = np.asarray(pairwise_gram(params, x))
        np.testing.assert_allclose(G, pairwise, rtol=1e-9, atol=1e-9 * float(params["amplitude"]))
        np.testing.assert_allclose(np.asarray(k.diag(params, x)), np.diag(pairwise), rtol=1e-14)


def test_default_relevance_is_a_stationary_kernel_on_the_cylinder():
    """With every dimension relevant the arc kernel is the 'separate ArcGP' of Table 1: a
    stationary kernel of x - x' whose per-dimension distance is the chord 2ω sin(πρ|Δ|/2)."""
    k = make_arc_kernel("se")
    assert k.relevance_fn is all_relevant
    params = _params(3, np.random.default_rng(4))
    x = jnp.asarray(np.random.default_rng(5).random((7, 3)))
    chord = 2 * params["omega"] * jnp.abs(jnp.sin(jnp.pi * params["rho"] * (x[:, None] - x[None]) / 2))
    expected = params["amplitude"] * jnp.exp(-0.5 * jnp.sum(chord**2, -1))
    np.testing.assert_allclose(np.asarray(k.gram(params, x, x)), np.asarray(expected), rtol=1e-9, atol=1e-12)


def test_composition():
    k = _kernel((0.0, 0.5), "se")
    rng = np.random.default_rng(6)
    p = _params(3, rng)
    x = jnp.asarray(_conditional_data(12, 3, seed=7))
    ps = (p, {"lengthscale": jnp.full(3, 0.4), "amplitude": jnp.asarray(0.5)})

    @jax.jit
    def grams(p, ps, x):
        return ((k + Matern52()).gram(ps, x, x), k.gram(p, x, x), Matern52().gram(ps[1], x, x),
                (k * 2.5).gram(p, x, x), (k * k)((p, p), x[0], x[1]), k(p, x[0], x[1]))

    total, arc, matern, scaled, product, single = grams(p, ps, x)
    np.testing.assert_allclose(np.asarray(total), np.asarray(arc + matern), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(scaled), 2.5 * np.asarray(arc), rtol=1e-9)
    assert float(product) == pytest.approx(float(single) ** 2, rel=1e-12)


# --------------------------------------------------------------------------------------------
# jit, vmap, grad
# --------------------------------------------------------------------------------------------
def test_jit_vmap_grad():
    k = _kernel(_thresholds(4), "matern52")
    rng = np.random.default_rng(8)
    p = _params(4, rng)
    x = jnp.asarray(_conditional_data(10, 4, seed=9))

    @jax.jit
    def loss(params, x):
        return jnp.sum(k.gram(params, x, x) @ jnp.ones(x.shape[0]))

    value, grads = jax.jit(jax.value_and_grad(loss))(p, x)
    assert float(value) == pytest.approx(float(loss(p, x)))
    for leaf in jax.tree_util.tree_leaves(grads):
        assert np.all(np.isfinite(np.asarray(leaf)))
    # the gradient in omega agrees with central differences
    h = 1e-6
    for i in range(4):
        e = jnp.zeros(4).at[i].set(h)
        fd = (loss({**p, "omega": p["omega"] + e}, x) - loss({**p, "omega": p["omega"] - e}, x)) / (2 * h)
        assert float(grads["omega"][i]) == pytest.approx(float(fd), rel=1e-5, abs=1e-7)
    # gradients in the inputs exist at coincident points (safe square root)
    gx = jax.jit(jax.grad(lambda a: k(p, a, x[0])))(x[0])
    assert np.all(np.isfinite(np.asarray(gx)))
    # vmap over a batch of parameter samples
    stacked = jax.tree_util.tree_map(lambda leaf: jnp.stack([leaf, 2 * leaf]), p)
    stacked["rho"] = jnp.clip(stacked["rho"], 0, 1)
    grams = jax.jit(jax.vmap(lambda q: k.gram(q, x, x)))(stacked)
    assert grams.shape == (2, 10, 10)
    np.testing.assert_allclose(np.asarray(grams[0]), np.asarray(k.gram(p, x, x)), rtol=1e-12)
    # float32 in, float32 out
    p32 = jax.tree_util.tree_map(lambda leaf: leaf.astype(jnp.float32), p)
    G32 = jax.jit(k.gram)(p32, x.astype(jnp.float32), x.astype(jnp.float32))
    assert G32.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(G32), np.asarray(k.gram(p, x, x)), atol=1e-4)


# --------------------------------------------------------------------------------------------
# priors, sample_params, inference
# --------------------------------------------------------------------------------------------
def test_sample_params_sites_and_supports():
    for base in sorted(BASES):
        k = Arc(BASES[base])
        with numpyro.handlers.trace() as tr, numpyro.handlers.seed(rng_seed=0):
            params = k.sample_params(5, prefix="k/")
        sites = {name for name, site in tr.items() if site["type"] == "sample"}
        expected = {"k/omega", "k/rho", "k/amplitude"} | ({"k/alpha"} if base == "rq" else set())
        assert sites == expected  # no unused lengthscale
        assert params["omega"].shape == (5,) and params["rho"].shape == (5,)
        assert np.all(np.asarray(params["omega"]) > 0)
        assert np.all((np.asarray(params["rho"]) > 0) & (np.asarray(params["rho"]) < 1))


def test_priors():
    rho = priors.arc_rho_prior()
    assert float(jnp.exp(rho.log_prob(0.3))) == pytest.approx(1.0)  # uniform on [0, 1]
    assert float(jnp.exp(rho.log_prob(0.9))) == pytest.approx(1.0)
    assert float(priors.arc_rho_prior(2.0, 5.0).mean) == pytest.approx(2.0 / 7.0)
    omega = priors.arc_omega_prior(4)
    median = float(jnp.exp(omega.loc))
    # matches the lengthscale prior: ω π ρ at ρ's median 1/2 is 1 / (0.5 sqrt(D))
    assert median * math.pi * 0.5 == pytest.approx(1.0 / (0.5 * math.sqrt(4)))
    assert float(priors.arc_omega_prior(9, scale=0.5).scale) == 0.5


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"base": Arc()}, "base"),
        ({"relevance_fn": 3}, "relevance_fn"),
        ({"omega_scale": 0.0}, "omega_scale"),
        ({"rho_concentration": (1.0, -1.0)}, "rho_concentration"),
    ],
)
def test_constructor_validation(kwargs, field):
    with pytest.raises(ValueError, match=field):
        Arc(**kwargs)
    with pytest.raises(ValueError, match="kernel"):
        make_arc_kernel("linear")


def test_slice_sampler_integrates_omega_and_rho():
    """The exact GP with the arc kernel: slice sampling draws ω and ρ within their supports and
    the log-likelihood is finite at every sample, on conditional data."""
    relevance = depth_relevance((0.0, 0.5))
    x = _conditional_data(20, 3, seed=10)
    r = np.asarray(relevance(jnp.asarray(x)))
    y = np.sin(6 * x[:, 0]) + np.where(r[:, 2], x[:, 2] ** 2, 0.5) + x[:, 1]
    data = pad_data(x, (y - y.mean()) / y.std())
    surrogate = exact_gp(Arc(Matern52(), relevance))
    samples = inference.infer(jax.random.key(0), surrogate, data, "slice", num_samples=6, num_warmup=10)
    kp = samples.params["kernel"]
    assert kp["omega"].shape == (6, 3) and kp["rho"].shape == (6, 3)
    assert np.all(np.asarray(kp["omega"]) > 0)
    assert np.all((np.asarray(kp["rho"]) >= 0) & (np.asarray(kp["rho"]) <= 1))
    assert np.unique(np.asarray(kp["rho"])[:, 0]).size > 1  # the chain moves
    ll = jax.vmap(surrogate.log_likelihood, in_axes=(0, None))(samples.params, data)
    assert np.all(np.isfinite(np.asarray(ll)))


# --------------------------------------------------------------------------------------------
# model="arc" in the ask/tell loop
# --------------------------------------------------------------------------------------------
def _mlp_like_space():
    from jbo.spaces import Categorical, Real, Space

    return Space({
        "depth": Categorical(["one", "two"]),
        "lr": Real(1e-3, 1.0, log=True),
        "units1": Real(0.0, 1.0),
        "units2": Real(0.0, 1.0, when={"depth": ["two"]}),
    })


def _objective(config):
    value = (math.log10(config["lr"]) + 1.5) ** 2 + (config["units1"] - 0.3) ** 2
    if config["depth"] == "two":
        value += (config["units2"] - 0.7) ** 2 - 0.2
    return value


def test_arc_model_ask_tell():
    """A few ask/tell steps with model="arc" on a conditional space: configurations hold exactly
    their active parameters, the model phase runs with ω and ρ per encoded column, and the GP's
    kernel reads the space's relevance mask."""
    from jbo import Optimizer
    from jbo.models import arc

    space = _mlp_like_space()
    opt = Optimizer(space, model="arc", seed=1, n_init=4, num_samples=2, num_burnin=4, num_warmup=2,
                    maximize={"num_anchors": 64, "num_local": 8, "top_k": 2, "num_steps": 10})
    phases = []
    for _ in range(6):
        config = opt.ask()
        active = {"depth", "lr", "units1"} | ({"units2"} if config["depth"] == "two" else set())
        assert set(config) == active
        opt.tell(config, _objective(config))
        phases.append(opt.last_info["phase"])
    assert phases.count("model") >= 2
    samples = opt.state.model_state
    kp = samples.params["kernel"]
    assert kp["omega"].shape == (2, space.dim) and kp["rho"].shape == (2, space.dim)
    assert all(np.all(np.isfinite(np.asarray(leaf))) for leaf in jax.tree_util.tree_leaves(samples.params))
    surrogate = arc.arc_surrogate("matern52", space)
    assert surrogate is arc.arc_surrogate("matern52", _mlp_like_space())  # cached per equal space
    with pytest.raises(ValueError, match="warp"):  # the arc kernel has no input warping
        Optimizer(space, model="arc", warp=True)


def test_arc_kernel_on_space_relevance_meets_desiderata():
    """With Space.relevance as δ: a one-layer and a two-layer configuration have the same
    covariance whatever the (irrelevant) units2 column of the first and the (relevant) units2 of
    the second hold."""
    space = _mlp_like_space()
    k = make_arc_kernel("se", space.relevance)
    params = _params(space.dim, np.random.default_rng(11))
    one = space.encode({"depth": "one", "lr": 0.05, "units1": 0.4})
    two = space.encode({"depth": "two", "lr": 0.01, "units1": 0.6, "units2": 0.2})
    col = space.columns["units2"]
    rel_one, rel_two = np.asarray(space.relevance(one)), np.asarray(space.relevance(two))
    assert rel_one[col].sum() == 0 and rel_two[col].sum() == 1
    call = jax.jit(k.__call__)
    base = float(call(params, one, two))
    rng = np.random.default_rng(12)
    for _ in range(5):
        a, b = one.copy(), two.copy()
        a[col], b[col] = rng.random(), rng.random()
        assert float(call(params, a, b)) == base
