"""Numerical core of jbo against independent references.

* the exact GP (jbo.surrogates.gp) against NumPy/SciPy linear algebra, with and without padding;
* gradients through the jitter-escalating Cholesky (jbo.linalg) against finite differences;
* kernel Gram matrices: symmetric PSD (hypothesis), k(x, x) = amplitude, the Kumaraswamy warp;
* acquisitions against scipy.stats.norm and mpmath;
* data buckets and the Standardizer.

Runs in float64 (tests/conftest.py enables x64); the float32 path of log-EI is tested explicitly.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
import scipy.linalg
import scipy.stats
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jbo import acquisition as acq
from jbo import linalg
from jbo.data import Data, Standardizer, bucket_size, pad_data
from jbo.kernels import (
    KumaraswamyWarp,
    Matern52,
    RationalQuadratic,
    SquaredExponential,
    kumaraswamy_cdf,
)
from jbo.surrogates import gp

HYP = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
finite = dict(allow_nan=False, allow_infinity=False)

# ============================================================================ exact GP vs NumPy/SciPy

N, D, M = 9, 3, 6  # real observations, input dimension, test points
_rng = np.random.default_rng(20240601)
X = _rng.random((N, D))
Y = np.sin(3.0 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2] + 0.05 * _rng.standard_normal(N)
Y = (Y - Y.mean()) / Y.std()
XS = _rng.random((M, D))
PAD_X = _rng.random((64, D))  # garbage for padded rows: the mask must make it inert
PAD_Y = 10.0 * _rng.standard_normal(64)

GP_KERNELS = {
    "matern52": (Matern52(), {"lengthscale": np.array([0.35, 0.8, 1.6]), "amplitude": 1.7}),
    "se": (SquaredExponential(), {"lengthscale": np.array([0.5, 0.25, 2.0]), "amplitude": 0.6}),
    "rq": (RationalQuadratic(), {"lengthscale": np.array([0.3, 1.1, 0.7]), "amplitude": 2.3, "alpha": 0.7}),
}
NOISE, MEAN = 0.03, 0.2
SURROGATE_FLOOR = 1e-6


def np_gram(name, kp, A, B):
    """Independent NumPy implementation of the three stationary ARD kernels."""
    r2 = np.sum(((A[:, None, :] - B[None, :, :]) / np.asarray(kp["lengthscale"])) ** 2, axis=-1)
    amp = float(kp["amplitude"])
    if name == "matern52":
        r = np.sqrt(5.0 * r2)
        return amp * (1.0 + r + r**2 / 3.0) * np.exp(-r)
    if name == "se":
        return amp * np.exp(-0.5 * r2)
    if name == "rq":
        alpha = float(kp["alpha"])
        return amp * (1.0 + r2 / (2.0 * alpha)) ** (-alpha)
    raise AssertionError(name)


def np_gp_reference(name, kp, noise, mean):
    """(log marginal likelihood, posterior mean, posterior variance, posterior covariance) with SciPy."""
    K = np_gram(name, kp, X, X) + noise * np.eye(N)
    lml = scipy.stats.multivariate_normal.logpdf(Y, mean=np.full(N, mean), cov=K)
    cf = scipy.linalg.cho_factor(K, lower=True)
    Ks = np_gram(name, kp, X, XS)
    mu = mean + Ks.T @ scipy.linalg.cho_solve(cf, Y - mean)
    cov = np_gram(name, kp, XS, XS) - Ks.T @ scipy.linalg.cho_solve(cf, Ks)
    return lml, mu, np.diag(cov).copy(), cov


def gp_params(name, noise=NOISE, mean=MEAN, scale=1.0):
    kp = {k: jnp.asarray(v, jnp.float64) for k, v in GP_KERNELS[name][1].items()}
    kp["lengthscale"] = kp["lengthscale"] * scale
    return {"kernel": kp, "noise": jnp.asarray(noise, jnp.float64), "mean": jnp.asarray(mean, jnp.float64)}


def padded(kind: str) -> Data:
    """The data unpadded, padded by pad_data to its bucket, or padded to 40 rows of garbage."""
    if kind == "none":
        return pad_data(X, Y, size=N)
    if kind == "bucket":
        data = pad_data(X, Y)
        assert data.x.shape[0] == bucket_size(N) > N
        return data
    if kind == "garbage":
        size = 40
        x = np.concatenate([X, PAD_X[: size - N]])
        y = np.concatenate([Y, PAD_Y[: size - N]])
        mask = np.arange(size) < N
        return Data(jnp.asarray(x), jnp.asarray(y), jnp.asarray(mask))
    raise AssertionError(kind)


@functools.lru_cache(maxsize=None)
def gp_program(name):
    """One jitted program per kernel: module-level functions (no noise floor) and the surrogate."""
    kernel = GP_KERNELS[name][0]
    surrogate = gp.exact_gp(kernel, noise_floor=SURROGATE_FLOOR, jitter=0.0)

    @jax.jit
    def run(params, data, xs):
        lml = gp.log_marginal_likelihood(kernel, params, data, jitter=0.0, noise_floor=0.0)
        post = gp.condition(kernel, params, data, jitter=0.0, noise_floor=0.0)
        mean, var = gp.predict(kernel, post, xs)
        jmean, jcov = gp.predict_joint(kernel, post, xs)
        s_lml = surrogate.log_likelihood(params, data)
        s_mean, s_var = surrogate.predict(surrogate.condition(params, data), xs)
        return dict(lml=lml, mean=mean, var=var, jmean=jmean, jcov=jcov, s_lml=s_lml, s_mean=s_mean, s_var=s_var)

    return run


def assert_rel(actual, expected, rtol, what=""):
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    err = np.max(np.abs(actual - expected) / np.maximum(np.abs(expected), 1e-300))
    assert err <= rtol, f"{what}: relative error {err:.3g} > {rtol:g}\nactual={actual}\nexpected={expected}"


@pytest.mark.parametrize(
    "name, pad",
    [(k, "bucket") for k in sorted(GP_KERNELS)] + [("matern52", "none"), ("matern52", "garbage"), ("rq", "garbage")],
)
def test_gp_matches_scipy(name, pad):
    data = padded(pad)
    out = gp_program(name)(gp_params(name), data, jnp.asarray(XS))
    lml, mu, var, cov = np_gp_reference(name, GP_KERNELS[name][1], NOISE, MEAN)
    assert_rel(out["lml"], lml, 1e-8, "log marginal likelihood")
    assert_rel(out["mean"], mu, 1e-8, "posterior mean")
    assert_rel(out["var"], var, 1e-8, "posterior variance")
    assert_rel(out["jmean"], mu, 1e-8, "joint posterior mean")
    assert_rel(out["jcov"], cov, 1e-8, "joint posterior covariance")
    # The surrogate adds its noise floor to the noise variance.
    s_lml, s_mu, s_var, _ = np_gp_reference(name, GP_KERNELS[name][1], NOISE + SURROGATE_FLOOR, MEAN)
    assert_rel(out["s_lml"], s_lml, 1e-8, "surrogate log likelihood")
    assert_rel(out["s_mean"], s_mu, 1e-8, "surrogate mean")
    assert_rel(out["s_var"], s_var, 1e-8, "surrogate variance")


def test_gp_noise_free_interpolates():
    """With (almost) no noise the posterior mean interpolates the data and the variance vanishes there."""
    data = padded("bucket")
    out = gp_program("matern52")(gp_params("matern52", noise=1e-10), data, jnp.asarray(X[:M]))
    np.testing.assert_allclose(out["mean"], Y[:M], atol=1e-6)
    assert np.all(np.asarray(out["var"]) < 1e-6)


# ---------------------------------------------------------------------------- gradients / jitter


@functools.lru_cache(maxsize=None)
def lml_value_and_grad(name):
    """Surrogate log likelihood with the default (escalating) jitter, and its gradient (one program)."""
    return jax.jit(jax.value_and_grad(gp.exact_gp(GP_KERNELS[name][0]).log_likelihood))


def _flat_params(params):
    leaves, treedef = jax.tree_util.tree_flatten(params)
    shapes = [np.shape(leaf) for leaf in leaves]
    flat = np.concatenate([np.ravel(np.asarray(leaf)) for leaf in leaves])

    def unflat(v):
        out, i = [], 0
        for s in shapes:
            size = int(np.prod(s, dtype=int))
            out.append(jnp.asarray(v[i : i + size].reshape(s)))
            i += size
        return jax.tree_util.tree_unflatten(treedef, out)

    return flat, unflat


@pytest.mark.parametrize("name", sorted(GP_KERNELS))
def test_lml_gradient_matches_finite_differences(name):
    vg = lml_value_and_grad(name)
    f = lambda p, d: vg(p, d)[0]
    data = padded("bucket")
    params = gp_params(name)
    flat, unflat = _flat_params(params)
    analytic, _ = _flat_params(vg(params, data)[1])
    numeric = np.empty_like(flat)
    for i in range(flat.size):
        h = 1e-6 * max(1.0, abs(flat[i]))
        up, down = flat.copy(), flat.copy()
        up[i] += h
        down[i] -= h
        numeric[i] = (float(f(unflat(up), data)) - float(f(unflat(down), data))) / (2 * h)
    assert np.all(np.isfinite(analytic))
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-6 * np.max(np.abs(numeric)))


def test_cholesky_jvp_matches_finite_differences_and_vmaps():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((5, 5))
    S = A @ A.T + 5 * np.eye(5)
    dS = rng.standard_normal((5, 5))
    dS = dS + dS.T
    _, tangent = jax.jit(lambda a, b: jax.jvp(linalg.cholesky, (a,), (b,)))(jnp.asarray(S), jnp.asarray(dS))
    h = 1e-6
    fd = (np.linalg.cholesky(S + h * dS + 1e-8 * np.eye(5)) - np.linalg.cholesky(S - h * dS + 1e-8 * np.eye(5))) / (2 * h)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8)
    # Under vmap (the loop vmaps condition over samples) and with the plain path (max_tries=0).
    batch = jnp.stack([jnp.asarray(S), jnp.asarray(S) * 2.0])
    factors = jax.jit(jax.vmap(linalg.cholesky))(batch)
    np.testing.assert_allclose(factors[1], np.linalg.cholesky(2 * S + 1e-8 * np.eye(5)), rtol=1e-12)
    np.testing.assert_allclose(linalg.cholesky(jnp.asarray(S), 1e-8, 0), np.linalg.cholesky(S + 1e-8 * np.eye(5)),
                               rtol=1e-12)


def test_cholesky_escalates_on_indefinite_matrix():
    """A (numerically) singular matrix pushed slightly indefinite: the first attempt must fail."""
    n = 6
    matrix = jnp.ones((n, n)) - 1e-9 * jnp.eye(n)  # rank one (duplicate rows), min eigenvalue -1e-9
    first = jnp.linalg.cholesky(matrix + 1e-12 * jnp.eye(n))
    assert bool(jnp.any(jnp.isnan(first))), "test premise: the first attempt must fail"
    factor = np.asarray(linalg.cholesky(matrix, 1e-12))
    assert np.all(np.isfinite(factor))
    assert np.allclose(factor, np.tril(factor))
    added = np.diag(factor @ factor.T - np.asarray(matrix))
    # The jitter that succeeded is one of 1e-12 * 10^k, k <= max_tries, and at least the deficit.
    assert np.allclose(added, added[0], rtol=1e-5, atol=1e-15)
    k = math.log10(added[0] / 1e-12)
    assert abs(k - round(k)) < 1e-3 and 1 <= round(k) <= 6, added[0]
    off = factor @ factor.T - np.asarray(matrix) - added[0] * np.eye(n)
    assert np.max(np.abs(off)) < 1e-12


DUP_X = np.repeat(np.array([[0.1, 0.2, 0.3], [0.5, 0.5, 0.5], [0.9, 0.3, 0.1]]), 4, axis=0)
DUP_Y = np.linspace(-1.0, 1.0, 12)


@jax.jit
def se_fit(params, data, floor):
    """Factor, alpha, log marginal likelihood and its gradient (default escalating jitter)."""
    kernel = SquaredExponential()
    post = gp.condition(kernel, params, data, noise_floor=floor)
    value, grad = jax.value_and_grad(lambda p: gp.log_marginal_likelihood(kernel, p, data, None, floor))(params)
    return post.factor, post.alpha, value, grad


def _all_finite(tree):
    return all(np.all(np.isfinite(np.asarray(leaf))) for leaf in jax.tree_util.tree_leaves(tree))


def test_gp_with_duplicate_rows_and_zero_noise_is_finite():
    data = pad_data(DUP_X, DUP_Y, size=16)
    params = gp_params("se", noise=0.0)
    for floor in (0.0, SURROGATE_FLOOR):
        factor, alpha, value, grad = se_fit(params, data, floor)
        assert _all_finite((factor, alpha, value, grad)), floor


def test_gp_forced_jitter_escalation_returns_finite_factor():
    """Duplicate rows and a noise variance of -1e-7: the covariance is indefinite by more than the
    default jitter (1e-8), so the first factorisation must fail and escalation must rescue it."""
    data = pad_data(DUP_X, DUP_Y, size=16)
    params = gp_params("se", noise=-1e-7)
    cov = gp.masked_covariance(SquaredExponential(), params, data, 0.0)
    jitter = linalg.default_jitter(jnp.float64)
    assert bool(jnp.any(jnp.isnan(jnp.linalg.cholesky(cov + jitter * jnp.eye(16))))), "premise: first try fails"
    factor, alpha, value, grad = se_fit(params, data, 0.0)
    assert _all_finite((factor, alpha, value, grad))
    factor = np.asarray(factor)
    added = np.diag(factor @ factor.T - np.asarray(cov))
    k = np.log10(added / jitter)
    assert np.allclose(k, np.round(k[0]), atol=1e-3) and 1 <= round(k[0]) <= 6, added


# ============================================================================ kernels


def _stationary_params(draw, with_alpha=False):
    p = {
        "lengthscale": jnp.asarray(draw(st.lists(st.floats(0.05, 5.0), min_size=3, max_size=3))),
        "amplitude": jnp.asarray(draw(st.floats(0.1, 10.0))),
    }
    if with_alpha:
        p["alpha"] = jnp.asarray(draw(st.floats(0.1, 10.0)))
    return p


def _warp_params(draw, base):
    return {
        "warp_a": jnp.asarray(draw(st.lists(st.floats(0.2, 5.0), min_size=3, max_size=3))),
        "warp_b": jnp.asarray(draw(st.lists(st.floats(0.2, 5.0), min_size=3, max_size=3))),
        "base": base,
    }


# name -> (kernel, params strategy, expected k(x, x) from the params)
KERNEL_CASES = {
    "matern52": (Matern52(), lambda d: _stationary_params(d), lambda p: p["amplitude"]),
    "se": (SquaredExponential(), lambda d: _stationary_params(d), lambda p: p["amplitude"]),
    "rq": (RationalQuadratic(), lambda d: _stationary_params(d, True), lambda p: p["amplitude"]),
    "sum": (
        Matern52() + SquaredExponential(),
        lambda d: (_stationary_params(d), _stationary_params(d)),
        lambda p: p[0]["amplitude"] + p[1]["amplitude"],
    ),
    "product": (
        SquaredExponential() * RationalQuadratic(),
        lambda d: (_stationary_params(d), _stationary_params(d, True)),
        lambda p: p[0]["amplitude"] * p[1]["amplitude"],
    ),
    "scaled": (Matern52() * 2.5, lambda d: _stationary_params(d), lambda p: 2.5 * p["amplitude"]),
    "warped": (
        KumaraswamyWarp(Matern52()),
        lambda d: _warp_params(d, _stationary_params(d)),
        lambda p: p["base"]["amplitude"],
    ),
    "warped_rq": (
        KumaraswamyWarp(RationalQuadratic()),
        lambda d: _warp_params(d, _stationary_params(d, True)),
        lambda p: p["base"]["amplitude"],
    ),
}


@functools.lru_cache(maxsize=None)
def gram_program(name):
    kernel = KERNEL_CASES[name][0]
    return jax.jit(lambda p, x: (kernel.gram(p, x, x), kernel.diag(p, x), jax.vmap(lambda a: kernel(p, a, a))(x)))


@pytest.mark.parametrize("name", sorted(KERNEL_CASES))
def test_gram_symmetric_psd_and_diag_is_amplitude(name):
    _, params_strategy, amplitude = KERNEL_CASES[name]
    run = gram_program(name)

    @HYP
    @given(data=st.data(), x=st.lists(st.floats(0.0, 1.0, **finite), min_size=24, max_size=24))
    def check(data, x):
        params = params_strategy(data.draw)
        pts = jnp.asarray(np.reshape(x, (8, 3)))
        K, diag, self_k = run(params, pts)
        K = np.asarray(K)
        amp = float(amplitude(params))
        assert np.all(np.isfinite(K))
        np.testing.assert_allclose(K, K.T, rtol=1e-13, atol=1e-14 * amp)
        eig = np.linalg.eigvalsh(0.5 * (K + K.T))
        assert eig.min() >= -1e-8 * eig.max(), (eig.min(), eig.max())
        # k(x, x) == amplitude: exactly from diag(); the Gram matrix's diagonal up to the round-off of
        # its distance computation.
        np.testing.assert_allclose(np.asarray(diag), amp, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(self_k), amp, rtol=1e-12)
        np.testing.assert_allclose(np.diag(K), amp, rtol=1e-9)
        assert np.all(K <= amp * (1 + 1e-9))  # |k(x, y)| <= k(x, x) for these PSD kernels

    check()


def test_stationary_kernels_match_numpy():
    pts = jnp.asarray(X)
    for name, (kernel, kp) in GP_KERNELS.items():
        K = kernel.gram({k: jnp.asarray(v) for k, v in kp.items()}, pts, jnp.asarray(XS))
        np.testing.assert_allclose(K, np_gram(name, kp, X, XS), rtol=1e-12, err_msg=name)


def test_non_ard_kernel_uses_one_lengthscale():
    k = Matern52(ard=False)
    p = {"lengthscale": jnp.asarray(0.7), "amplitude": jnp.asarray(1.3)}
    ref = np_gram("matern52", {"lengthscale": np.full(D, 0.7), "amplitude": 1.3}, X, XS)
    np.testing.assert_allclose(k.gram(p, jnp.asarray(X), jnp.asarray(XS)), ref, rtol=1e-12)


@HYP
@given(a=st.floats(0.5, 3.0), b=st.floats(0.5, 3.0))
def test_kumaraswamy_cdf_monotone_onto_unit_interval(a, b):
    grid = np.linspace(0.0, 1.0, 1001)
    w = np.asarray(kumaraswamy_cdf(jnp.asarray(grid), a, b))
    assert np.all((w >= 0.0) & (w <= 1.0))
    assert np.all(np.diff(w) >= 0.0)
    assert w[0] <= 1e-2 and w[-1] >= 1.0 - 1e-2  # endpoints (up to the documented eps clipping)
    inner = grid[1:-1]
    np.testing.assert_allclose(w[1:-1], 1.0 - (1.0 - inner**a) ** b, rtol=1e-10, atol=1e-14)


def test_kumaraswamy_identity_and_finite_gradients_at_faces():
    grid = jnp.linspace(0.0, 1.0, 11)
    np.testing.assert_allclose(kumaraswamy_cdf(grid, 1.0, 1.0)[1:-1], grid[1:-1], rtol=1e-12)
    g = jax.grad(lambda ab: jnp.sum(kumaraswamy_cdf(grid, ab[0], ab[1])))(jnp.array([0.3, 4.0]))
    assert np.all(np.isfinite(np.asarray(g)))


# ============================================================================ acquisitions

ACQ_RNG = np.random.default_rng(7)
MU = ACQ_RNG.normal(0.0, 2.0, 500)
VAR = np.exp(ACQ_RNG.uniform(-6.0, 2.0, 500))
BEST = -0.5

log_h_jit = jax.jit(acq.log_h)
grad_log_h = jax.jit(jax.vmap(jax.grad(acq.log_h)))


def scipy_ei(mu, var, best):
    sigma = np.sqrt(var)
    z = (best - mu) / sigma
    return sigma * (z * scipy.stats.norm.cdf(z) + scipy.stats.norm.pdf(z))


@jax.jit
def _pointwise_all(mu, var, best):
    return dict(
        ei=acq.expected_improvement(mu, var, best),
        logei=acq.log_expected_improvement(mu, var, best),
        pi=acq.probability_of_improvement(mu, var, best),
        logpi=acq.log_probability_of_improvement(mu, var, best),
        ucb05=acq.upper_confidence_bound(mu, var, best, beta=0.5),
        ucb2=acq.upper_confidence_bound(mu, var, best),
        ucb9=acq.upper_confidence_bound(mu, var, best, beta=9.0),
    )


@pytest.fixture(scope="module")
def pointwise():
    return {k: np.asarray(v) for k, v in _pointwise_all(jnp.asarray(MU), jnp.asarray(VAR), BEST).items()}


def test_expected_improvement_matches_scipy(pointwise):
    ref = scipy_ei(MU, VAR, BEST)
    keep = ref > 1e-250
    assert keep.sum() > 300
    np.testing.assert_allclose(pointwise["ei"][keep], ref[keep], rtol=1e-9, atol=0)


def test_log_ei_is_log_of_ei_where_representable(pointwise):
    ref = scipy_ei(MU, VAR, BEST)
    z = (BEST - MU) / np.sqrt(VAR)
    keep = (ref > 1e-250) & (z > -20)  # scipy's closed form cancels in the far tail
    assert keep.sum() > 300
    logei = pointwise["logei"]
    np.testing.assert_allclose(logei[keep], np.log(ref[keep]), rtol=1e-9, atol=1e-9)
    ok = pointwise["ei"] > 1e-300
    np.testing.assert_allclose(np.exp(logei[ok]), pointwise["ei"][ok], rtol=1e-8)
    assert np.all(np.isfinite(logei))


BRANCH_POINTS = {np.float64: (-1.0, -30.0), np.float32: (-1.0, -10.0)}
Z_GRID = np.unique(np.concatenate([
    np.linspace(-1000.0, 10.0, 1011),
    -np.logspace(-6, 3, 400),
    np.linspace(-40.0, 10.0, 1001),
    np.array([-30.0 + 1e-9, -30.0 - 1e-9, -10.0 + 1e-6, -10.0 - 1e-6, -1.0 + 1e-12, -1.0 - 1e-12, 0.0]),
]))
Z_GRID = Z_GRID[~np.isin(Z_GRID, (-1.0, -10.0, -30.0))]  # exact branch points: see the dedicated test


@functools.lru_cache(maxsize=None)
def mp_log_h(z: float) -> tuple[float, float]:
    """(log h(z), d/dz log h(z) = Phi(z) / h(z)) at 50 digits."""
    with mpmath.workdps(50):
        zz = mpmath.mpf(z)
        cdf = mpmath.ncdf(zz)
        h = zz * cdf + mpmath.npdf(zz)
        return float(mpmath.log(h)), float(cdf / h)


@pytest.fixture(scope="module")
def mp_reference():
    return np.array([mp_log_h(float(z)) for z in Z_GRID])


def test_log_h_matches_mpmath_float64(mp_reference):
    ref = mp_reference[:, 0]
    got = np.asarray(log_h_jit(jnp.asarray(Z_GRID, jnp.float64)))
    # Relative error of log h; where |log h| < 1 (h near 1) the absolute error of log h, which is
    # the relative error of h itself.
    err = np.abs(got - ref) / np.maximum(np.abs(ref), 1.0)
    worst = int(np.argmax(err))
    assert err[worst] <= 1e-12, f"z={Z_GRID[worst]!r}: log_h={got[worst]!r}, mpmath={ref[worst]!r}, err={err[worst]:.3g}"


def test_log_h_gradient_matches_mpmath_float64(mp_reference):
    ref = mp_reference[:, 1]
    got = np.asarray(grad_log_h(jnp.asarray(Z_GRID, jnp.float64)))
    assert np.all(np.isfinite(got))
    err = np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300)
    worst = int(np.argmax(err))
    assert err[worst] <= 1e-8, f"z={Z_GRID[worst]!r}: grad={got[worst]!r}, mpmath={ref[worst]!r}, err={err[worst]:.3g}"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_log_h_gradient_at_branch_points(dtype):
    """d/dz log h is continuous; at the exact branch points the clamps (maximum/minimum/clip) of
    log_h must not split the gradient between the clamped input and the bound."""
    z = np.array(BRANCH_POINTS[dtype], dtype)
    got = np.asarray(grad_log_h(jnp.asarray(z)), np.float64)
    ref = np.array([mp_log_h(float(v))[1] for v in z])
    np.testing.assert_allclose(got, ref, rtol=1e-4 if dtype == np.float32 else 1e-8,
                               err_msg=f"d/dz log_h at z={z.tolist()} ({np.dtype(dtype).name})")


def test_log_h_float32_finite_and_accurate(mp_reference):
    z32 = jnp.asarray(Z_GRID, jnp.float32)
    got = np.asarray(log_h_jit(z32))
    assert got.dtype == np.float32
    z64 = np.asarray(z32, np.float64)
    ref = np.array([mp_log_h(float(z))[0] for z in z64])
    err = np.abs(got.astype(np.float64) - ref) / np.maximum(np.abs(ref), 1.0)
    worst = int(np.argmax(err))
    assert err[worst] <= 1e-4, f"z={z64[worst]!r}: log_h={got[worst]!r}, mpmath={ref[worst]!r}"
    grad = np.asarray(grad_log_h(z32))
    assert grad.dtype == np.float32 and np.all(np.isfinite(grad))


@jax.jit
def _log_ei_value_and_grads(mean, var):
    fn = lambda m, v: acq.log_expected_improvement(m, v, jnp.zeros((), m.dtype))
    return fn(mean, var), jax.vmap(jax.grad(fn, argnums=(0, 1)))(mean, var)


@pytest.mark.parametrize("dtype", [jnp.float64, jnp.float32])
def test_log_ei_finite_with_finite_gradients_far_below_incumbent(dtype):
    # z = (best - mean) / sigma from -1e6 up to 10, for sigma = 1 and sigma = 1e-3.
    z = np.concatenate([-np.logspace(6, -3, 60), np.linspace(0.0, 10.0, 11)])
    sigma = np.repeat([1.0, 1e-3], z.size)
    zz = np.tile(z, 2)
    val, (gm, gv) = _log_ei_value_and_grads(jnp.asarray(-zz * sigma, dtype), jnp.asarray(sigma**2, dtype))
    val, gm, gv = np.asarray(val), np.asarray(gm), np.asarray(gv)
    assert val.dtype == np.dtype(dtype)
    assert np.all(np.isfinite(val)), val
    assert np.all(np.isfinite(gm)) and np.all(np.isfinite(gv))
    assert np.all(gm < 0)  # a higher mean is always worse
    for half in (val[: z.size], val[z.size :]):
        assert np.all(np.diff(half) >= -1e-6 * np.abs(half[1:]))  # non-decreasing in z
    # log EI(mu, sigma) = log sigma + log h(z): compare with mpmath in float64
    if dtype == jnp.float64:
        ref = np.log(sigma) + np.array([mp_log_h(float(v))[0] for v in zz])
        np.testing.assert_allclose(val, ref, rtol=1e-12, atol=1e-12)


def test_probability_of_improvement_matches_scipy(pointwise):
    z = (BEST - MU) / np.sqrt(VAR)
    np.testing.assert_allclose(pointwise["pi"], scipy.stats.norm.cdf(z), rtol=1e-12, atol=1e-300)
    # log PI: relative in the lower tail; where PI ~ 1, log PI ~ -(1 - PI) is tiny and
    # jax.scipy.special.log_ndtr computes it as log(ndtr(z)), so compare absolutely there.
    np.testing.assert_allclose(pointwise["logpi"], scipy.stats.norm.logcdf(z), rtol=1e-10, atol=1e-15)


def test_upper_confidence_bound_formula(pointwise):
    for beta, key in ((0.5, "ucb05"), (2.0, "ucb2"), (9.0, "ucb9")):
        ref = -(MU - np.sqrt(beta) * np.sqrt(VAR))
        np.testing.assert_allclose(pointwise[key], ref, rtol=1e-13, atol=1e-14)


def _stack(tree, s):
    return jax.tree_util.tree_map(lambda a: jnp.stack([a] * s), tree)


INTEGRATE_POINTS = jnp.asarray(_rng.random((7, D)))
SURR = gp.exact_gp(Matern52(), noise_floor=SURROGATE_FLOOR, jitter=0.0)
condition_one = jax.jit(SURR.condition)


def condition_many(stacked_params, data, condition=condition_one):
    """Condition each sample (one compiled single-sample program) and stack the posteriors."""
    s = jax.tree_util.tree_leaves(stacked_params)[0].shape[0]
    posts = [condition(jax.tree_util.tree_map(lambda a: a[i], stacked_params), data) for i in range(s)]
    return jax.tree_util.tree_map(lambda *a: jnp.stack(a), *posts)


@functools.lru_cache(maxsize=None)
def integrated(acq_name):
    pointwise_fn, log_domain = acq.ACQUISITIONS[acq_name]
    return jax.jit(lambda posts, best, x: acq.integrate(SURR.predict, posts, pointwise_fn, log_domain, best)(x))


@pytest.mark.parametrize("acq_name", sorted(acq.ACQUISITIONS))
def test_integrate_identical_samples_equals_single(acq_name):
    data = padded("bucket")
    pointwise_fn, _ = acq.ACQUISITIONS[acq_name]
    best = float(np.min(Y))
    values = {}
    for s in (1, 4):
        posteriors = condition_many(_stack(gp_params("matern52"), s), data)
        values[s] = np.asarray(integrated(acq_name)(posteriors, best, INTEGRATE_POINTS))
    np.testing.assert_allclose(values[4], values[1], rtol=1e-12, atol=1e-12)
    # and the single-sample value is the pointwise acquisition of that posterior (NumPy GP)
    mean, var = np_gp_reference_at(gp_params("matern52"), INTEGRATE_POINTS)
    np.testing.assert_allclose(values[1], pointwise_fn(jnp.asarray(mean), jnp.asarray(var), best), rtol=1e-8)


def test_integrate_averages_ei_in_linear_domain():
    """Two different hyperparameter samples: integrated log-EI is log of the mean EI; UCB is the mean."""
    data = padded("bucket")
    best = float(np.min(Y))
    samples = [gp_params("matern52", scale=1.0), gp_params("matern52", noise=0.2, mean=-0.3, scale=0.4)]
    stacked = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *samples)
    posteriors = condition_many(stacked, data)
    per = [np_gp_reference_at(p, INTEGRATE_POINTS) for p in samples]
    ei = np.mean([scipy_ei(m, v, best) for m, v in per], axis=0)
    got = integrated("logei")(posteriors, best, INTEGRATE_POINTS)
    np.testing.assert_allclose(np.asarray(got), np.log(ei), rtol=1e-9)
    ucb = np.mean([-(m - np.sqrt(2.0 * v)) for m, v in per], axis=0)
    got = integrated("ucb")(posteriors, best, INTEGRATE_POINTS)
    np.testing.assert_allclose(np.asarray(got), ucb, rtol=1e-9)


def np_gp_reference_at(params, xs):
    """NumPy posterior mean/variance of the Matern-5/2 surrogate (noise floor included) at ``xs``."""
    kp = {k: np.asarray(v) for k, v in params["kernel"].items()}
    noise, mean = float(params["noise"]) + SURROGATE_FLOOR, float(params["mean"])
    xs = np.asarray(xs)
    K = np_gram("matern52", kp, X, X) + noise * np.eye(N)
    cf = scipy.linalg.cho_factor(K, lower=True)
    Ks = np_gram("matern52", kp, X, xs)
    mu = mean + Ks.T @ scipy.linalg.cho_solve(cf, Y - mean)
    var = np.diag(np_gram("matern52", kp, xs, xs)) - np.sum(Ks * scipy.linalg.cho_solve(cf, Ks), axis=0)
    return mu, var


SURR_SE = gp.exact_gp(SquaredExponential(), noise_floor=0.0)
condition_se_one = jax.jit(SURR_SE.condition)
condition_se = lambda params, data: condition_many(params, data, condition_se_one)
thompson = jax.jit(lambda k, posts, cand: acq.thompson_sample(k, SURR_SE.predict_joint, posts, cand))


def test_thompson_sampling_picks_certain_minimiser():
    cand = np.linspace(0.0, 1.0, 12)[:, None] * np.ones((1, D))
    values = np.array([0.9, 0.4, 0.8, -1.5, 0.7, 1.0, 0.2, 0.5, 0.6, -0.2, 0.3, 1.1])
    data = pad_data(cand, values, size=16)
    posteriors = condition_se(_stack(gp_params("se", noise=1e-8, mean=0.0, scale=0.3), 2), data)
    for i in range(10):
        p = thompson(jax.random.key(i), posteriors, jnp.asarray(cand))
        assert jnp.issubdtype(p.dtype, jnp.integer) and p.shape == ()
        assert int(p) == 3
    # Far from the data the posterior is the prior: draws are random, and so are the picks.
    far = pad_data(np.zeros((2, D)), [0.0, 0.0], size=16)
    far_post = condition_se(_stack(gp_params("se", noise=0.01, scale=0.05), 2), far)
    cand_far = jnp.asarray(np.linspace(0.5, 1.0, 12)[:, None] * np.ones((1, D)))
    picks = {int(thompson(jax.random.key(i), far_post, cand_far)) for i in range(20)}
    assert len(picks) >= 4 and all(0 <= p < 12 for p in picks)


# ============================================================================ data


def test_bucket_size_properties():
    previous, sizes = 0, set()
    for n in range(0, 2049):
        b = bucket_size(n)
        assert b >= n and b >= 16 and b % 8 == 0, (n, b)
        assert b >= previous, (n, b)  # monotone
        previous = b
        sizes.add(b)
        if n > 16:
            assert b <= 1.5 * n + 8, (n, b)  # at most a factor ~1.5 of padding (plus rounding to 8)
    assert bucket_size(16) == 16 and bucket_size(17) > 16
    # a small set: a bounded number of sizes per doubling (two up to 256, eight above)
    for lo in (16, 32, 64, 128, 256, 512, 1024):
        per_octave = {b for b in sizes if lo < b <= 2 * lo}
        assert len(per_octave) <= (2 if lo < 256 else 8), (lo, sorted(per_octave))
    assert len({bucket_size(n) for n in range(200)}) <= 10
    assert len({bucket_size(n) for n in range(1, 201)}) <= 10
    for n in range(0, 300):
        b = bucket_size(n, minimum=4, steps_per_octave=1)
        assert b >= n and (b % 8 == 0 or b == 4), (n, b)
        assert bucket_size(n, minimum=32) >= max(n, 32)


def test_pad_data_layout_and_errors():
    data = pad_data(X, Y)
    n_pad = data.x.shape[0]
    assert n_pad == bucket_size(N)
    assert data.x.dtype == jnp.float64 and data.mask.dtype == jnp.bool_
    np.testing.assert_array_equal(data.mask, np.arange(n_pad) < N)
    np.testing.assert_array_equal(data.x[:N], X)
    np.testing.assert_array_equal(data.y[:N], Y)
    assert np.all(np.asarray(data.y[N:]) == 0.0)
    assert np.all((np.asarray(data.x[N:]) >= 0.0) & (np.asarray(data.x[N:]) <= 1.0))
    assert int(data.n) == N
    assert pad_data(X, Y, dtype=jnp.float32).x.dtype == jnp.float32
    with pytest.raises(ValueError):
        pad_data(X, Y, size=N - 1)


def test_standardizer_round_trip_and_moments():
    y = np.random.default_rng(3).normal(50.0, 7.0, 33)
    s = Standardizer.fit(y)
    z = s.forward(y)
    np.testing.assert_allclose(np.mean(z), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.std(z), 1.0, rtol=1e-12)
    np.testing.assert_allclose(s.inverse(z), y, rtol=1e-14)
    np.testing.assert_allclose(s.inverse(jnp.asarray(z)), y, rtol=1e-14)


@pytest.mark.parametrize("const", [0.0, 3.5, -1e8])
def test_standardizer_constant_input(const):
    y = np.full(7, const)
    s = Standardizer.fit(y)
    assert s.scale == 1.0 and s.shift == const
    z = s.forward(y)
    assert np.all(np.isfinite(z)) and np.all(z == 0.0)
    np.testing.assert_allclose(s.inverse(z), y)
    empty = Standardizer.fit(np.zeros(0))
    assert (empty.shift, empty.scale) == (0.0, 1.0)
