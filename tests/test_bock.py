"""Tests of BOCK (Oh, Gavves & Welling 2018): the cylindrical transform, the cylindrical kernel and
its centre rule, and the exact GP over it (BOCK, BOCK-W, BOCK+B), against NumPy/SciPy computations
written from the paper's formulas."""

import functools
import math
import types

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax.flatten_util import ravel_pytree
from scipy.stats import multivariate_normal

from jbo.kernels import cylindrical
from jbo.kernels.cylindrical import Cylindrical, from_cylinder, to_cylinder
from jbo.surrogates.cylindrical import bock_surrogate
from jbo.data import Data
from jbo.surrogates.gp import exact_gp

NOISE_FLOOR = 1e-6  # bock_surrogate's


# --------------------------------------------------------------------------------------------
# an independent NumPy version of the kernel (eqs. 5-8, the centre rule of §3.3)
# --------------------------------------------------------------------------------------------
def np_features(p, u, warp=True):
    x = 2.0 * np.asarray(u, float) - 1.0
    r = np.linalg.norm(x, axis=-1)
    a = np.zeros_like(x)
    a[r > 0] = x[r > 0] / r[r > 0, None]
    t = r / math.sqrt(x.shape[-1])
    if warp:
        t = np.clip(t, 1e-6, 1 - 1e-6)
        t = 1.0 - (1.0 - t ** float(p["warp_a"])) ** float(p["warp_b"])
    return t, a, r == 0


def np_radius(p, w1, w2):
    s = math.sqrt(5.0) * np.abs(w1 - w2) / float(p["lengthscale"])
    return float(p["amplitude"]) * (1.0 + s + s**2 / 3.0) * np.exp(-s)


def np_angular(p, t):
    c = np.asarray(p["angular"], float)
    return sum(c[k] * np.clip(t, -1, 1) ** k for k in range(len(c))) / c.sum()


def np_gram(p, u1, u2, warp=True, direction=None):
    """K[i, j]; origin points take ``direction`` if given (the paper's rule for a test point in that
    direction), else the direction of the other point (the pairwise rule)."""
    w1, a1, c1 = np_features(p, u1, warp)
    w2, a2, c2 = np_features(p, u2, warp)
    if direction is not None:
        a1[c1], a2[c2] = direction, direction
        cos = a1 @ a2.T
    else:
        cos = np.where(c1[:, None] | c2[None, :], 1.0, a1 @ a2.T)
    return np_radius(p, w1[:, None], w2[None, :]) * np_angular(p, cos)


def np_direction(u):
    x = 2.0 * np.asarray(u, float) - 1.0
    return x / np.linalg.norm(x)


def np_posterior(p, x, y, xs, warp=True, direction=None, extra=None):
    """Dense GP posterior mean and variance at one test point ``xs`` ``(D,)`` (origin points in the
    data along ``direction``); ``extra`` ``(k, D)``: value-less observations, in the variance only."""
    noise = float(p["noise"]) + NOISE_FLOOR
    kp = p["kernel"]
    K = np_gram(kp, x, x, warp, direction) + noise * np.eye(len(x))
    k = np_gram(kp, x, xs[None], warp, direction)[:, 0]
    mean = float(p["mean"]) + k @ np.linalg.solve(K, y - float(p["mean"]))
    if extra is not None:
        x = np.vstack([x, extra])
        K = np_gram(kp, x, x, warp, direction) + noise * np.eye(len(x))
        k = np_gram(kp, x, xs[None], warp, direction)[:, 0]
    return mean, float(kp["amplitude"]) - k @ np.linalg.solve(K, k)


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def draw_params(seed, dim, warp=True, degree=3):
    """Kernel params drawn from the priors of ``sample_params``."""
    with numpyro.handlers.seed(rng_seed=seed):
        return Cylindrical(degree, warp).sample_params(dim)


def f64(value):
    """A float64 array that is not weakly typed, as the priors' draws are: given and drawn values then share
    one compiled program."""
    return jnp.asarray(value, jnp.float64)


def gp_params(seed, dim, warp=True, noise=0.01, mean=0.1, lengthscale=None):
    kp = draw_params(seed, dim, warp)
    if lengthscale is not None:
        kp["lengthscale"] = f64(lengthscale)
    return {"kernel": kp, "noise": f64(noise), "mean": f64(mean)}


def points(rng, n, dim, origin=0, corners=0):
    """``n`` random unit-cube points: ``origin`` copies of the centre, then ``corners`` cube corners
    (on BOCK's boundary sphere), then uniform ones."""
    u = rng.uniform(size=(n, dim))
    u[:origin] = 0.5
    u[origin:origin + corners] = rng.integers(0, 2, size=(corners, dim))
    return u


def padded(x, y, extra=3):
    n, d = x.shape
    xp = np.vstack([x, np.full((extra, d), 0.5)])  # pad_data's padding: the centre
    return Data(jnp.asarray(xp), jnp.asarray(np.r_[y, np.zeros(extra)]), jnp.asarray(np.arange(n + extra) < n))


@functools.lru_cache(maxsize=None)
def jitted(warp=True, boundary=False):
    """The surrogate's functions, jitted once per configuration (and per shape)."""
    s = bock_surrogate(warp=warp, boundary=boundary)
    return types.SimpleNamespace(
        condition=jax.jit(s.condition), predict=jax.jit(s.predict), predict_joint=jax.jit(s.predict_joint),
        log_likelihood=jax.jit(s.log_likelihood), fantasize=jax.jit(s.fantasize),
        grad=jax.jit(jax.grad(s.log_likelihood)))


@functools.lru_cache(maxsize=None)
def gram_of(warp=True):
    return jax.jit(Cylindrical(warp=warp).gram)


def random_rotation(rng, dim):
    q, r = np.linalg.qr(rng.normal(size=(dim, dim)))
    return q * np.sign(np.diag(r))


# --------------------------------------------------------------------------------------------
# the transform
# --------------------------------------------------------------------------------------------
DIM, N = 5, 10  # the GP tests share shapes: one compilation per function


# --------------------------------------------------------------------------------------------
# the transform
# --------------------------------------------------------------------------------------------
@jax.jit
def round_trips(x):
    """The transforms and their round trips, compiled whole (one program per dimension)."""
    r, a = to_cylinder(x)
    back = from_cylinder(r, a)
    r2, a2 = to_cylinder(back)
    return r, a, back, r2, a2, cylindrical.cube_to_ball(cylindrical.ball_to_cube(x))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 8), st.integers(0, 2**31 - 1), st.floats(1e-3, 1.0))
def test_cylinder_round_trip(dim, seed, scale):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(5, dim)) * scale
    r, a, back, r2, a2, ball = round_trips(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(r), np.linalg.norm(x, axis=-1), rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(a), axis=-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(back), x, rtol=1e-12, atol=1e-15)
    # T(T^-1(r, a)) = (r, a) for r > 0 and unit a
    np.testing.assert_allclose(np.asarray(r2), np.asarray(r), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(a2), np.asarray(a), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(ball), x, atol=1e-15)


def test_cylinder_origin_is_finite():
    @jax.jit  # one program, not one per primitive
    def at_the_origin(zero, centre, corner):
        r, a = to_cylinder(zero)
        jac = jax.jacobian(lambda x: jnp.concatenate([to_cylinder(x)[0][None], to_cylinder(x)[1]]))(zero)
        return r, a, from_cylinder(r, a), jac, cylindrical.cube_to_ball(centre), to_cylinder(cylindrical.cube_to_ball(corner))[0]

    r, a, back, jac, centre, radius = at_the_origin(jnp.zeros(3), jnp.full(4, 0.5), jnp.ones(9))
    assert float(r) == 0.0 and np.all(np.asarray(a) == 0.0)
    np.testing.assert_array_equal(np.asarray(back), np.zeros(3))
    assert np.all(np.isfinite(np.asarray(jac)))
    # the unit cube's centre is the origin, its corners lie on the sphere of radius sqrt(d)
    assert np.all(np.asarray(centre) == 0.0)
    np.testing.assert_allclose(float(radius), 3.0)


# --------------------------------------------------------------------------------------------
# the kernel
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("warp", [True, False])
def test_gram_agrees_with_call_and_numpy(warp):
    rng = np.random.default_rng(0)
    k = Cylindrical(warp=warp)
    p = draw_params(1, DIM, warp)
    p["lengthscale"] = f64(0.3)
    x1 = jnp.asarray(points(rng, 7, DIM, origin=1, corners=2))
    x2 = jnp.asarray(points(rng, 4, DIM, origin=1, corners=1))
    gram = np.asarray(gram_of(warp)(p, x1, x2))
    pairwise = np.asarray(jax.jit(jax.vmap(jax.vmap(k, (None, None, 0)), (None, 0, None)))(p, x1, x2))
    np.testing.assert_allclose(gram, pairwise, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gram, np_gram(p, x1, x2, warp), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(np.asarray(jax.jit(k.diag)(p, x1)), np.diag(np.asarray(gram_of(warp)(p, x1, x1))),
                               rtol=1e-12)


def test_psd_on_random_sets():
    """PSD, for prior draws of the params, on sets of cube points with corners (on the sphere of
    radius sqrt(d)); with the origin, under the paper's rule (the origin along a test direction)."""
    k = Cylindrical()
    gram, centred = jax.jit(k.gram), jax.jit(k.gram_centred)
    rng = np.random.default_rng(1)
    for trial in range(24):
        dim = [2, 3, 10, 40][trial % 4]
        p = draw_params(100 + trial, dim)
        amp = float(p["amplitude"])
        u = jnp.asarray(points(rng, 16, dim, origin=0, corners=4))
        assert np.linalg.eigvalsh(np.asarray(gram(p, u, u))).min() >= -1e-8 * amp
        u = jnp.asarray(points(rng, 16, dim, origin=2, corners=4))
        direction = jnp.asarray(np_direction(rng.uniform(size=dim)))
        g = np.asarray(centred(p, u, u, direction))
        np.testing.assert_allclose(g, np_gram(p, u, u, direction=np.asarray(direction)), rtol=1e-10, atol=1e-14)
        assert np.linalg.eigvalsh(g).min() >= -1e-8 * amp


def test_pairwise_centre_rule_is_not_psd_with_two_other_points():
    """Why the GP does not use the pairwise rule for the observations' Gram matrix: with the origin
    and two points near it in opposite directions the matrix [[s,s,s],[s,s,u],[s,u,s]] (s = K_a(1),
    u = K_a(-1) < s, radius kernel ≈ 1) has determinant -s(s-u)^2 < 0."""
    k = Cylindrical(warp=False)
    p = {"amplitude": f64(1.0), "lengthscale": f64(1.0), "angular": f64([1.0, 1.0, 0.0, 0.0])}
    u = jnp.asarray([[0.5, 0.5], [0.501, 0.5], [0.499, 0.5]])
    assert np.linalg.eigvalsh(np.asarray(jax.jit(k.gram)(p, u, u))).min() < -0.1
    direction = jnp.asarray([0.0, 1.0])
    assert np.linalg.eigvalsh(np.asarray(jax.jit(k.gram_centred)(p, u, u, direction))).min() > -1e-12


def test_centre_rule():
    """k(0, x) = K_r(0, r) K_a(1) for every direction of x (here: 20 rotations of x), k(0, 0) =
    K_r(0, 0) K_a(1), in either argument order; no fixed direction enters."""
    rng = np.random.default_rng(2)
    k = Cylindrical()
    p = draw_params(3, DIM)
    centre = jnp.full((1, DIM), 0.5)
    x = rng.normal(size=DIM)
    x *= 0.7 / np.linalg.norm(x)  # radius 0.7 < 1: every rotation stays in [-1, 1]^d
    u = jnp.asarray(0.5 * (np.stack([random_rotation(rng, DIM) @ x for _ in range(20)]) + 1.0))
    values = np.asarray(gram_of()(p, centre, u))[0]
    w0, _, _ = np_features(p, np.full((1, DIM), 0.5))
    wx, _, _ = np_features(p, np.asarray(u[:1]))
    np.testing.assert_allclose(values, np_radius(p, w0, wx)[0], rtol=1e-12)  # K_a(1) = 1: normalised
    np.testing.assert_allclose(np.asarray(gram_of()(p, u, centre))[:, 0], values, rtol=1e-12)
    np.testing.assert_allclose(float(jax.jit(k)(p, centre[0], centre[0])), float(p["amplitude"]), rtol=1e-12)


def test_bock_w_is_the_identity_warp():
    rng = np.random.default_rng(4)
    p = draw_params(5, DIM)
    p.update(warp_a=f64(1.0), warp_b=f64(1.0))
    plain = {key: value for key, value in p.items() if not key.startswith("warp")}
    u = jnp.asarray(points(rng, 10, DIM, origin=1, corners=2))
    np.testing.assert_allclose(np.asarray(gram_of(False)(plain, u, u)), np.asarray(gram_of(True)(p, u, u)),
                               rtol=0, atol=1e-5 * float(p["amplitude"]))


def test_number_of_params_does_not_depend_on_dimension():
    for warp, expected in ((True, 8), (False, 6)):
        sizes = {dim: ravel_pytree(draw_params(0, dim, warp))[0].size for dim in (5, 500)}
        assert sizes == {5: expected, 500: expected}
    s = bock_surrogate()
    for dim in (5, 500):
        data = Data(jnp.full((2, dim), 0.25), jnp.zeros(2), jnp.ones(2, bool))
        with numpyro.handlers.seed(rng_seed=0):
            assert ravel_pytree(s.prior(data))[0].size == 10  # + noise, mean


# --------------------------------------------------------------------------------------------
# the GP
# --------------------------------------------------------------------------------------------
def test_no_origin_is_the_exact_gp():
    """Without observations at the origin BOCK is the exact GP over the kernel."""
    rng = np.random.default_rng(5)
    params = gp_params(6, DIM, lengthscale=0.3)
    data = padded(points(rng, N, DIM, corners=2), rng.normal(size=N))
    xs = jnp.asarray(points(rng, 8, DIM, corners=1))

    def everything(surrogate):
        def run(params, data, xs):
            post = surrogate.condition(params, data)
            return (surrogate.log_likelihood(params, data), surrogate.predict(post, xs),
                    surrogate.predict_joint(post, xs))
        return jax.jit(run)(params, data, xs)

    f = jitted()  # BOCK's functions, compiled for these shapes once for the module
    post = f.condition(params, data)
    ours = f.log_likelihood(params, data), f.predict(post, xs), f.predict_joint(post, xs)
    theirs = everything(exact_gp(Cylindrical(), noise_floor=NOISE_FLOOR))
    np.testing.assert_allclose(float(ours[0]), float(theirs[0]), rtol=1e-10)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-12)
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("n_origin", [0, 1, 2])
def test_log_likelihood_against_numpy(n_origin):
    """Against SciPy: the multivariate normal log density under the NumPy Gram matrix; with the
    origin observed, the mean over the directions a_j of the other observations of the density
    with the origin along a_j (the authors' likelihood)."""
    rng = np.random.default_rng(6 + n_origin)
    params = gp_params(7, DIM, noise=0.05, lengthscale=0.5)
    x = points(rng, N, DIM, origin=n_origin, corners=2)
    y = rng.normal(size=N)
    ours = float(jitted().log_likelihood(params, padded(x, y)))
    noise = float(params["noise"]) + NOISE_FLOOR

    def logpdf(direction=None):
        cov = np_gram(params["kernel"], x, x, direction=direction) + noise * np.eye(N)
        return multivariate_normal(np.full(N, float(params["mean"])), cov).logpdf(y)

    expected = logpdf() if n_origin == 0 else np.mean([logpdf(np_direction(u)) for u in x[n_origin:]])
    np.testing.assert_allclose(ours, expected, rtol=1e-7)


def test_log_likelihood_only_the_origin_observed():
    params = gp_params(8, DIM, noise=0.1)
    x, y = np.full((N, DIM), 0.5), np.random.default_rng(8).normal(size=N)
    cov = float(params["kernel"]["amplitude"]) * np.ones((N, N)) + (0.1 + NOISE_FLOOR) * np.eye(N)
    expected = multivariate_normal(np.full(N, 0.1), cov).logpdf(y)
    ours = float(jitted().log_likelihood(params, padded(x, y)))
    np.testing.assert_allclose(ours, expected, rtol=1e-7)


@pytest.mark.parametrize("warp", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_predict_against_numpy(warp):
    """Per test point, the dense posterior with the observed origin along the test point's direction
    (§3.3); BOCK+B's variance adds one value-less observation at R x*/|x*| (footnote 4). Without the warp
    (slow: two more programs) the posterior's code is the same; BOCK-W's kernel is checked against NumPy by
    test_gram_agrees_with_call_and_numpy[False] and test_bock_w_is_the_identity_warp."""
    rng = np.random.default_rng(9)
    params = gp_params(10, DIM, warp, noise=0.02, lengthscale=0.8)
    x = points(rng, N, DIM, origin=1, corners=2)
    y = rng.normal(size=N)
    xs = points(rng, 8, DIM, corners=1)
    data = padded(x, y)
    plain, boundary = jitted(warp), jitted(warp, True)
    mean, var = plain.predict(plain.condition(params, data), jnp.asarray(xs))
    mean_b, var_b = boundary.predict(boundary.condition(params, data), jnp.asarray(xs))
    for j, u in enumerate(xs):
        a = np_direction(u)
        m_ref, v_ref = np_posterior(params, x, y, u, warp, direction=a)
        np.testing.assert_allclose([float(mean[j]), float(var[j])], [m_ref, v_ref], rtol=1e-6, atol=1e-10)
        satellite = 0.5 * (math.sqrt(DIM) * a + 1.0)  # R a* in unit-cube coordinates
        _, vb_ref = np_posterior(params, x, y, u, warp, direction=a, extra=satellite[None])
        np.testing.assert_allclose(float(var_b[j]), vb_ref, rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(np.asarray(mean_b), np.asarray(mean), rtol=1e-12)
    assert np.all(np.asarray(var_b) < np.asarray(var) - 1e-6)  # a long radius lengthscale: a real reduction


def test_posterior_with_origin_is_rotation_invariant():
    """The centre rule favours no fixed direction: rotating the observations (the origin among
    them) and the test points together leaves BOCK's posterior and likelihood unchanged."""
    rng = np.random.default_rng(3)
    f = jitted(True, True)
    params = gp_params(4, DIM, lengthscale=0.4)
    x = rng.uniform(-0.4, 0.4, size=(N, DIM))  # radius < 1: rotations stay in the cube
    x[0] = 0.0
    xs = rng.uniform(-0.4, 0.4, size=(8, DIM))
    y = rng.normal(size=N)
    rot = random_rotation(rng, DIM)
    before = f.predict(f.condition(params, padded(0.5 * (x + 1), y)), jnp.asarray(0.5 * (xs + 1)))
    after = f.predict(f.condition(params, padded(0.5 * (x @ rot.T + 1), y)), jnp.asarray(0.5 * (xs @ rot.T + 1)))
    for b, a in zip(before, after):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-12)
    ll = [f.log_likelihood(params, padded(0.5 * (z + 1), y)) for z in (x, x @ rot.T)]
    np.testing.assert_allclose(float(ll[1]), float(ll[0]), rtol=1e-10)


def test_boundary_variance():
    """BOCK+B: variance ≤ BOCK's everywhere (the origin observed or not, prior draws of the
    lengthscale); equal at the origin (no direction, no fake point) and where the radius kernel does
    not reach the boundary; the mean and the likelihood are BOCK's. Equal to rounding, not bitwise: the two programs
    solve for 2m and 3m right-hand sides, which an accelerator's BLAS may block differently."""
    rng = np.random.default_rng(11)

    def both(params, data, xs):  # the module's compiled functions (these shapes: compiled once)
        return [(s.predict(s.condition(params, data), xs), s.log_likelihood(params, data))
                for s in (jitted(True), jitted(True, True))]

    xs = jnp.asarray(points(rng, 8, DIM, origin=1, corners=2))
    for n_origin, lengthscale in ((0, 0.5), (1, 0.5), (1, None), (2, None)):
        params = gp_params(12 + n_origin, DIM, lengthscale=lengthscale)
        data = padded(points(rng, N, DIM, origin=n_origin, corners=2), rng.normal(size=N))
        ((mean, var), ll), ((mean_b, var_b), ll_b) = both(params, data, xs)
        np.testing.assert_allclose(np.asarray(mean_b), np.asarray(mean), rtol=1e-12)
        assert np.all(np.asarray(var_b) <= np.asarray(var) * (1 + 1e-12))
        np.testing.assert_allclose(float(var_b[0]), float(var[0]), rtol=1e-12)  # the test point at the origin
        np.testing.assert_allclose(float(ll_b), float(ll), rtol=1e-12)
    # a radius lengthscale far below the distance to the boundary: the fake point is uncorrelated
    params = gp_params(15, DIM, lengthscale=1e-3)
    data = padded(points(rng, N, DIM, origin=1), rng.normal(size=N))
    inner = jnp.asarray(0.5 + 0.1 * rng.uniform(-1, 1, size=(8, DIM)))
    ((_, var), _), ((_, var_b), _) = both(params, data, inner)
    np.testing.assert_allclose(np.asarray(var_b), np.asarray(var), rtol=1e-12)


def test_fantasize_and_predict_joint():
    rng = np.random.default_rng(13)
    s = bock_surrogate(boundary=True)
    params = gp_params(14, DIM, lengthscale=0.5)
    data = padded(points(rng, N, DIM, origin=1, corners=1), rng.normal(size=N))
    xs = jnp.asarray(points(rng, 8, DIM, origin=1, corners=1))
    # pending points: the origin, one more, one padded away
    pending, mask = xs[:3], jnp.asarray([True, True, False])
    full = Data(jnp.concatenate([data.x, pending[:2]]), jnp.concatenate([data.y, jnp.zeros(2)]),
                jnp.concatenate([data.mask, jnp.ones(2, bool)]))

    @jax.jit
    def run(params, data, full, xs):
        post = s.condition(params, data)
        fant = s.fantasize(post, xs[:3], mask)
        again = s.fantasize(fant, xs[3:4], jnp.asarray([True]))
        return (s.predict(post, xs), s.predict_joint(post, xs), s.predict(fant, xs), fant.centre_count,
                s.predict(s.condition(params, full), xs), s.predict(again, xs))

    (mean, var), (mean_j, cov), (mean_f, var_f), count, (_, var_full), (mean_ff, var_ff) = run(params, data, full, xs)
    np.testing.assert_allclose(np.asarray(mean_j), np.asarray(mean), rtol=1e-12)
    np.testing.assert_allclose(np.diag(np.asarray(cov)), np.asarray(var), rtol=1e-9)
    assert np.linalg.eigvalsh(np.asarray(cov)).min() >= -1e-9 * float(np.max(var))
    # the mean stays (kriging believer), the variance shrinks at and near the pending points, to
    # that of the data with the pending points observed
    assert int(count) == 2
    np.testing.assert_allclose(np.asarray(mean_f), np.asarray(mean), rtol=1e-13, atol=1e-15)
    assert np.all(np.asarray(var_f) <= np.asarray(var) * (1 + 1e-9))
    assert np.all(np.asarray(var_f[:2]) < 0.6 * np.asarray(var[:2]))
    np.testing.assert_allclose(np.asarray(var_f), np.asarray(var_full), rtol=1e-9)
    # fantasies on top of fantasies: still the original mean
    np.testing.assert_allclose(np.asarray(mean_ff), np.asarray(mean), rtol=1e-13, atol=1e-15)
    assert float(var_ff[3]) < float(var_f[3])


def test_gradients_are_finite_at_the_origin():
    """Grads of the log likelihood w.r.t. every param, with the origin observed and padded rows at
    the centre, and of the prediction w.r.t. test points at and near the origin."""
    rng = np.random.default_rng(16)
    s = bock_surrogate(boundary=True)
    data = padded(points(rng, N, DIM, origin=1, corners=1), rng.normal(size=N))
    xs = jnp.asarray(np.vstack([np.full(DIM, 0.5), 0.5 + 1e-9 * rng.normal(size=DIM), rng.uniform(size=(6, DIM))]))

    @jax.jit
    def grads(params, data, xs):
        post = s.condition(params, data)
        return (jax.grad(s.log_likelihood)(params, data),
                jax.grad(lambda z: jnp.sum(sum(s.predict(post, z))))(xs))

    for seed in range(3):
        g_params, g_x = grads(gp_params(20 + seed, DIM), data, xs)
        flat = np.asarray(ravel_pytree(g_params)[0])
        assert flat.size == 10 and np.all(np.isfinite(flat))
        assert np.all(np.isfinite(np.asarray(g_x)))


def test_cache_and_vmap():
    assert bock_surrogate() is bock_surrogate(True, False, 3, 0.1)
    assert bock_surrogate(boundary=False, noise_scale=0.1) is bock_surrogate(True, False, 3, 0.1)
    assert bock_surrogate(warp=False) is not bock_surrogate()
    with pytest.raises(ValueError):
        Cylindrical(degree=-1)
    rng = np.random.default_rng(17)
    s = bock_surrogate()
    data = padded(points(rng, N, DIM, origin=1), rng.normal(size=N))
    params = gp_params(30, DIM)
    stacked = jax.tree.map(lambda v: jnp.stack([v, v]), params)
    batched = jax.jit(jax.vmap(s.log_likelihood, in_axes=(0, None)))(stacked, data)
    np.testing.assert_allclose(np.asarray(batched), float(jitted().log_likelihood(params, data)), rtol=1e-10)


def test_float32():
    """The float32 path (TPUs): finite likelihood, gradients and predictions, close to float64."""
    rng = np.random.default_rng(18)
    s = bock_surrogate(boundary=True)
    params = gp_params(31, DIM, noise=0.01, lengthscale=0.4)
    data = padded(points(rng, N, DIM, origin=1, corners=1), rng.normal(size=N))
    xs = jnp.asarray(points(rng, 8, DIM, corners=1))

    @jax.jit
    def run(params, data, xs):
        return s.log_likelihood(params, data), jax.grad(s.log_likelihood)(params, data), s.predict(
            s.condition(params, data), xs)

    to32 = lambda tree: jax.tree.map(lambda v: v.astype(jnp.float32) if v.dtype == jnp.float64 else v, tree)
    ll32, grad32, (mean32, var32) = run(to32(params), to32(data), to32(xs))
    f = jitted(True, True)  # float64 reference (compiled for these shapes by the tests above)
    ll64, (mean64, var64) = f.log_likelihood(params, data), f.predict(f.condition(params, data), xs)
    assert ll32.dtype == jnp.float32 and mean32.dtype == jnp.float32 and var32.dtype == jnp.float32
    assert np.all(np.isfinite(np.asarray(ravel_pytree(grad32)[0])))
    np.testing.assert_allclose(float(ll32), float(ll64), rtol=1e-3)
    np.testing.assert_allclose(np.asarray(mean32), np.asarray(mean64), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(np.asarray(var32), np.asarray(var64), rtol=1e-2, atol=1e-4)


# --------------------------------------------------------------------------------------------
# the models: bock, bock-w, bock-b and the paper's Matérn baseline (jbo.models.bock)
# --------------------------------------------------------------------------------------------
SMALL = dict(num_anchors=256, top_k=4, num_steps=10)  # a small acquisition search for the tests
# The loop's settings of the two tests that call its compiled suggestion on data of their own (one program:
# 3-d, padded to 16 rows, one or two pending points).
SUGGEST = dict(units="standardised", n_init=2, maximize=dict(SMALL, num_local=4), num_samples=2, num_burnin=5,
               num_warmup=1)
ROSENBROCK3 = None


def rosenbrock3():
    global ROSENBROCK3
    if ROSENBROCK3 is None:
        from jbo.benchmarks import get_problem

        ROSENBROCK3 = get_problem("rosenbrock", dim=3, normalized=True)
    return ROSENBROCK3


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31 - 1), st.integers(2, 12), st.integers(0, 2), st.integers(0, 3))
def test_bock_suggestions_are_inside_the_box(seed, n, origin, corners):
    """Whatever the data (the centre observed, corners of the cube, i.e. points on BOCK's boundary
    sphere, pending points), a suggestion is a point of the box: encoded in [0, 1]^D, decoded within
    the problem's bounds. Padded to 16 rows, with one pending point (a corner) and then two, every
    example runs one compiled program, test_standardised_units_are_invariant_to_the_objective_scale's.
    (Suggestions without pending points, and of the paper's model, ``units="objective"``:
    test_minimize_many_runs_bock; of the default model: test_warping.py's units test.)"""
    from jbo import loop

    problem = rosenbrock3()
    space = problem.space()
    rng = np.random.default_rng(seed)
    x = points(rng, n, 3, origin=min(origin, n), corners=min(corners, max(0, n - origin)))
    y = np.asarray(problem.fn(jnp.asarray(problem.bounds[:, 0] + x * np.ptp(problem.bounds, axis=1))))
    cfg = loop.Settings.create("bock", seed=seed % 1000, **SUGGEST)
    state = loop.init(cfg, space)._replace(x=x, y=y, n_suggested=n, pending=points(rng, 1, 3, corners=1))
    for _ in range(2):
        state, u, info = loop.suggest(cfg, space, state, size=16)
        assert info["phase"] == "model" and np.all(np.isfinite(u))
        assert np.all((u >= 0.0) & (u <= 1.0))
        config = space.decode(u)
        values = np.array([config[name] for name in problem.names])
        assert np.all((values >= problem.bounds[:, 0]) & (values <= problem.bounds[:, 1]))


@pytest.mark.parametrize("options, field", [
    (dict(degree=-1), "degree"), (dict(degree=2.0), "degree"), (dict(degree=True), "degree"),
    (dict(warp="yes"), "warp"), (dict(boundary=1), "boundary"), (dict(num_samples=0), "num_samples"),
    (dict(inference="hmc"), "inference"), (dict(noise_floor=0.0), "noise_floor"), (dict(noise_floor="1"), "noise_floor"),
    (dict(units="raw"), "units"), (dict(priors="flat"), "priors"),
    (dict(units="objective", priors="jbo"), "priors"),
])
def test_bock_config_validation_names_the_field(options, field):
    from jbo import models

    with pytest.raises(ValueError, match=field):
        models.BOCK(**options)
    with pytest.raises(ValueError, match=field):
        models.create("bock", **options)


def test_unknown_options_and_names():
    from jbo import loop, models

    with pytest.raises(ValueError, match=r"unknown option\(s\) \['ard'\] for model 'bock'"):
        models.create("bock", ard=False)
    with pytest.raises(ValueError, match="escape"):
        models.create("bock-w", escape=True)
    with pytest.raises(ValueError, match="'bock'.*'bock-w'.*'bock-b'.*'matern'"):
        loop.Settings.create("bocks")
    for name in ("bock", "bock-w", "bock-b", "matern"):
        assert name in models.NAMES


def test_names_configs_and_the_settings_round_trip():
    from jbo import loop, models
    from jbo.models import bock

    expected = {
        "bock": models.BOCK(), "bock-w": models.BOCK(warp=False), "bock-b": models.BOCK(boundary=True),
        "matern": models.Matern(),
    }
    for name, config in expected.items():
        settings = loop.Settings.create(name, seed=3)
        assert settings.model == config and settings.model.name == name == settings.model_name
        # BOCK's search, also for the Matérn baseline; jbo's scale-free BOCK screens its anchors first
        paper = bock.paper_maximize()
        assert settings.maximize == (paper if name == "matern" else paper._replace(screen=bock.SCREEN))
        if name != "matern":
            assert loop.Settings.create(name, units="objective").maximize == paper
        assert loop.Settings.from_dict(json_round_trip(settings.to_dict())) == settings
    matern = models.Matern()
    assert isinstance(matern, models.GP) and matern.ard is False and matern.kernel == "matern52"
    assert models.GP().ard  # jbo's GP stays ARD
    assert models.GP().default_maximize() != bock.paper_maximize()
    odd = loop.Settings(models.BOCK(warp=False, boundary=True, degree=5, num_samples=4), maximize=SMALL)
    assert odd.model.name == "bock-b" and odd.maximize == bock.paper_maximize()._replace(screen=bock.SCREEN, **SMALL)
    assert loop.Settings.from_dict(json_round_trip(odd.to_dict())) == odd
    assert loop.Settings.from_dict(json_round_trip(loop.Settings.create("matern", kernel="se").to_dict())).model \
        == models.Matern(kernel="se")


def json_round_trip(d):
    import json

    return json.loads(json.dumps(d))


def test_surrogates():
    from jbo.kernels import make_kernel
    from jbo.models import bock, gp

    assert bock.BOCK().surrogate_for(None) is bock.BOCK(num_samples=3).surrogate_for(None)  # cached
    s = bock.BOCK(warp=False, boundary=True, degree=2, units="standardised").surrogate_for(None)
    base = bock_surrogate(warp=False, boundary=True, degree=2, noise_floor=1e-10)  # BOCK's default floor
    assert s.log_likelihood is base.log_likelihood and s.condition is base.condition
    s = bock.BOCK(warp=False, boundary=True, degree=2, units="objective").surrogate_for(None)
    base = bock_surrogate(warp=False, boundary=True, degree=2, authors_priors=True)
    assert s.log_likelihood is base.log_likelihood and s.prior is base.prior
    # each units' own priors unless told; the authors' on standardised targets are the same surrogate
    assert (bock.BOCK().priors, bock.BOCK(units="objective").priors) == ("jbo", "authors")
    s = bock.BOCK(warp=False, boundary=True, degree=2, priors="authors").surrogate_for(None)
    assert s.log_likelihood is base.log_likelihood and s.prior is base.prior
    m = bock.Matern().surrogate_for(None)
    assert m.log_likelihood is gp.gp_surrogate(make_kernel("matern52", ard=False)).log_likelihood
    # the config's noise floor is the surrogate's: a floor of 1e-3 is 1e-3 - 1e-6 more noise under the default
    rng = np.random.default_rng(22)
    params = gp_params(34, DIM, noise=0.01)
    data = padded(points(rng, N, DIM, origin=1), rng.normal(size=N))
    raised = dict(params, noise=params["noise"] + 1e-3 - NOISE_FLOOR)
    floored = jax.jit(bock.BOCK(noise_floor=1e-3, units="standardised").surrogate_for(None).log_likelihood)(params, data)
    np.testing.assert_allclose(float(floored), float(jitted().log_likelihood(raised, data)), rtol=1e-10)


def test_chunked_prediction_is_the_same():
    from jbo.models import bock

    rng = np.random.default_rng(21)
    s = bock_surrogate(boundary=True)
    params = gp_params(33, DIM)
    post = jitted(True, True).condition(params, padded(points(rng, N, DIM, origin=1), rng.normal(size=N)))
    xs = jnp.asarray(points(rng, 21, DIM, origin=1, corners=2))
    mean, var = jax.jit(s.predict)(post, xs)
    chunked_mean, chunked_var = jax.jit(bock.chunked(s.predict, size=8))(post, xs)  # 3 chunks, the last padded
    np.testing.assert_allclose(np.asarray(chunked_mean), np.asarray(mean), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(chunked_var), np.asarray(var), rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_config_object_and_name_suggest_the_same_point():
    """``model=jbo.models.BOCK(boundary=True)`` and ``model="bock-b"`` are one model (BOCK+B's step runs here)."""
    import jbo

    problem = rosenbrock3()
    space = problem.space()
    rng = np.random.default_rng(4)
    configs = [space.decode(u) for u in points(rng, 6, 3, origin=1)]
    suggestions = []
    for model in (jbo.models.BOCK(boundary=True), "bock-b"):
        opt = jbo.Optimizer(space, model=model, seed=11, maximize=SMALL)
        for config in configs:
            opt.tell(config, problem.evaluate(config))
        suggestions.append(opt.ask())
    assert suggestions[0] == suggestions[1]


def test_minimize_many_runs_bock():
    """The paper's model (the authors' priors in the objective's units) in whole compiled runs."""
    import jbo

    problem = rosenbrock3()
    result = jbo.minimize_many(problem.evaluate, problem.space(), budget=6, seeds=[0, 1], model="bock", n_init=3,
                               units="objective",
                               maximize=SMALL, num_samples=2, num_burnin=5, num_warmup=1)
    assert result.values.shape == (2, 6) and np.all(np.isfinite(result.values))
    assert np.all((result.x >= 0) & (result.x <= 1))
    assert not np.array_equal(result.x[0, 3:], result.x[1, 3:])


@pytest.mark.slow
def test_cli_runs_the_matern_baseline(tmp_path, monkeypatch, capsys):
    """``jbo run --model matern`` (any of the four names: the CLI lists jbo.models.NAMES) runs the GP's
    step through this module with BOCK's search (20 000 anchors)."""
    import json

    from jbo import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JBO_NO_CACHE", "1")
    out = "runs/matern"
    assert cli.main(["run", "--quiet", "--model", "matern", "--inference", "map", "--problem", "rosenbrock",
                     "--dim", "3", "--budget", "3", "--n-init", "2", "--out", out]) == 0
    records = [json.loads(line) for line in open(f"{out}/journal.jsonl") if line.strip()]
    settings = records[0]["settings"]
    assert settings["model"]["name"] == "matern" and settings["model"]["ard"] is False
    assert settings["maximize"]["num_anchors"] == 20000 and settings["maximize"]["top_k"] == 20
    assert len([r for r in records if r["type"] == "observation"]) == 3
    with pytest.raises(SystemExit):
        cli.main(["run", "--quiet", "--model", "bock", "--escape", "--out", "runs/x"])
    assert "escape" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# units="objective": the authors' priors, stated in the objective's units
# --------------------------------------------------------------------------------------------
def test_objective_units_likelihood_is_the_standardised_one_rescaled():
    """Targets ``y = s·y_std`` with amplitude ``s²σ²``, noise ``s²σ_n²`` and mean ``s·m`` have the density of
    the standardised problem times ``s⁻ᴺ`` (change of variables), with and without the origin observed:
    the objective-units surrogate is the same GP, only its priors differ."""
    rng = np.random.default_rng(3)
    x = points(rng, 9, 4, origin=1)
    y_std = rng.normal(size=9)
    scale = 3.7e4
    params = gp_params(5, 4, noise=0.02, mean=0.3)
    scaled = {"kernel": dict(params["kernel"], amplitude=params["kernel"]["amplitude"] * scale**2),
              "noise": params["noise"] * scale**2, "mean": params["mean"] * scale}
    tiny = 1e-300  # no noise floor on the standardised side either (the objective units add none)
    standard = jax.jit(bock_surrogate(noise_floor=tiny).log_likelihood)(params, padded(x, y_std))
    objective = jax.jit(bock_surrogate(authors_priors=True).log_likelihood)(scaled, padded(x, scale * y_std))
    # rtol: the Cholesky's absolute jitter (1e-8) is not rescaled with the targets
    np.testing.assert_allclose(float(objective), float(standard) - 9 * math.log(scale), rtol=1e-6)


def test_objective_units_priors_are_the_authors_bounds():
    from jbo import priors

    rng = np.random.default_rng(0)
    y = np.r_[rng.normal(scale=5e5, size=7), 0.0, 0.0]
    mask = np.arange(9) < 7
    mean_prior = priors.reference_mean_prior(jnp.asarray(y), jnp.asarray(mask))
    assert float(mean_prior.low) == y[:7].min() and float(mean_prior.high) == y[:7].max()
    one = priors.reference_mean_prior(jnp.asarray([2.5]), jnp.asarray([True]))  # one value: a small range
    assert float(one.low) < 2.5 < float(one.high) and float(one.high - one.low) < 1e-4

    noise = priors.reference_noise_prior()
    draws = noise.sample(jax.random.key(0), (2000,))
    low, high = priors.REFERENCE_NOISE_BOUNDS
    assert np.all((draws > low) & (draws < high))
    v = jnp.asarray([1e-4, 0.1, 30.0])
    np.testing.assert_allclose(noise.log_prob(v), priors.Horseshoe(0.1).log_prob(v))
    assert not bool(noise.support(jnp.asarray(high * 1.01))) and bool(noise.support(jnp.asarray(high * 0.99)))

    with numpyro.handlers.seed(rng_seed=1):
        kp = Cylindrical(authors_priors=True).sample_params(20)
    assert "amplitude" in kp
    trace = numpyro.handlers.trace(numpyro.handlers.seed(
        bock_surrogate(authors_priors=True).prior, rng_seed=0)).get_trace(padded(points(rng, 5, 3), y[:5]))
    assert trace["amplitude"]["fn"].support.lower_bound == pytest.approx(math.exp(-12.0))
    assert trace["amplitude"]["fn"].support.upper_bound == pytest.approx(math.exp(20.0))
    assert float(trace["mean"]["fn"].low) == y[:5].min()


def test_objective_units_inputs_are_rescaled_and_need_the_scale():
    from jbo.models import bock
    from jbo.types import Inputs

    data = padded(np.full((3, 2), 0.25), np.array([-1.0, 0.5, 0.5]))
    inputs = Inputs(data, None, jnp.zeros((1, 2)), jnp.asarray(-1.0), jnp.asarray(True), jnp.asarray(1.0),
                    scale=jnp.asarray(200.0))
    out = bock.in_objective_units(inputs)
    np.testing.assert_allclose(out.data.y, 200.0 * np.asarray(data.y))
    assert float(out.best) == -200.0
    np.testing.assert_array_equal(out.data.mask, data.mask)
    with pytest.raises(ValueError, match="scale"):
        bock.in_objective_units(inputs._replace(scale=None))


def test_the_loop_hands_models_the_objective_scale():
    """``standardize`` returns the standard deviation it divided by: the scale in Inputs."""
    from jbo import loop

    history = loop.History(jnp.zeros((4, 2)), jnp.asarray([3.0, 5.0, 7.0, 0.0]), jnp.asarray([True, True, True, False]))
    data, best, num_ok, scale = loop.standardize(history, "worst")
    np.testing.assert_allclose(float(scale), np.std([3.0, 5.0, 7.0]))
    np.testing.assert_allclose(np.asarray(data.y)[:3] * float(scale) + 5.0, [3.0, 5.0, 7.0])


@pytest.mark.slow
def test_objective_units_suggestions_on_a_large_scale_objective():
    """BOCK(units="objective") runs end to end on values of order 10⁶ (BOCK's Rosenbrock, where the
    authors' bounds bind): finite suggestions inside the box, and the same ones for the same seed."""
    import jbo

    problem = rosenbrock3()

    def run():
        return jbo.minimize(problem.evaluate, problem.space(), budget=6, n_init=2, seed=4, model="bock",
                            units="objective", design="centre", maximize=dict(SMALL, num_local=4), progress=False)

    first, second = run(), run()
    np.testing.assert_array_equal(first.values, second.values)
    assert np.all(np.isfinite(first.values))

    # The model saw the centred values in the objective's units: its sampled constant means lie between
    # the smallest and the largest of them (the authors' prior), not on the standardised scale.
    opt = jbo.Optimizer(problem.space(), model="bock", units="objective", design="centre", n_init=2, seed=4,
                        maximize=dict(SMALL, num_local=4))
    for _ in range(4):
        candidate = opt.ask()
        opt.tell(candidate, problem.evaluate(candidate))
    y = np.asarray(opt.state.y[:4]) - np.mean(opt.state.y[:3])  # centred over the 3 values the model saw
    means = np.asarray(opt.state.model_state.params["mean"])
    assert np.all((means >= y[:3].min()) & (means <= y[:3].max()))
    assert np.ptp(y[:3]) > 100.0 and np.max(np.abs(means)) > 10.0


def test_bock_defaults_are_the_papers_start_on_scale_free_targets():
    """``bock`` starts as the paper does (the box's centre first) on scale-free targets (standardised, their
    Yeo-Johnson warp chosen by the evidence, a noise floor of 1e-10); the paper's objective-unit priors are an
    explicit option and take no warp; the other models keep the Sobol design; an explicit design wins; a journal
    written before ``units``, ``design``, ``output_warping``, ``evidence_warp`` and ``noise_floor`` were recorded
    resumes with the model and start it ran with."""
    from jbo import loop

    space = rosenbrock3().space()
    for name in ("bock", "bock-w", "bock-b"):
        settings = loop.Settings.create(name, n_init=3)
        assert settings.model.units == "standardised" and settings.output_warping == "none"
        assert settings.model.evidence_warp is True and settings.model.noise_floor == 1e-10
        assert settings.design == "centre"
        np.testing.assert_allclose(loop.initial_design(settings, space)[0], 0.5)
        objective = loop.Settings.create(name, units="objective")
        assert objective.output_warping == "none" and objective.model.evidence_warp is False
        fixed = loop.Settings.create(name, evidence_warp=False)  # issue #28's first default: the warp always
        assert fixed.output_warping == "yeo-johnson" and fixed.model.noise_floor == 1e-10
    for name in ("gp", "matern", "random"):
        assert loop.Settings.create(name).design == "sobol"
    explicit = loop.Settings.create("bock", design="sobol", n_init=3)
    assert explicit.design == "sobol" and not np.allclose(loop.initial_design(explicit, space)[0], 0.5)

    older = json_round_trip(loop.Settings.create("bock").to_dict())
    del older["model"]["evidence_warp"], older["model"]["noise_floor"]
    warped = dict(older, output_warping="yeo-johnson")  # a journal of issue #28's first default
    resumed = loop.Settings.from_dict(warped)
    assert resumed.model.evidence_warp is False and resumed.model.noise_floor == 1e-6
    assert resumed.output_warping == "yeo-johnson" and resumed.design == "centre"
    del older["design"], older["model"]["units"], older["output_warping"]
    resumed = loop.Settings.from_dict(older)
    assert resumed.model.units == "standardised" and resumed.design == "sobol" and resumed.output_warping == "none"
    assert resumed.model.evidence_warp is False and resumed.model.noise_floor == 1e-6


@pytest.mark.parametrize("priors", ["jbo", "authors"])
def test_standardised_units_are_invariant_to_the_objective_scale(priors):
    """``units="standardised"`` sees the same targets whatever the objective's scale, under either priors: the
    suggestions for ``f`` and ``2⁻²⁰ f`` coincide (a power of two rescales every float exactly), the second after
    the first was evaluated (each with a pending point: test_bock_suggestions_are_inside_the_box's program)."""
    from jbo import loop

    problem = rosenbrock3()
    space = problem.space()
    rng = np.random.default_rng(1)
    x, pending = points(rng, 5, 3, origin=1), points(rng, 1, 3)
    f = lambda u: np.asarray(problem.fn(jnp.asarray(problem.bounds[:, 0] + u * np.ptp(problem.bounds, axis=1))))
    cfg = loop.Settings.create("bock", seed=1, priors=priors, **SUGGEST)
    runs = []
    for factor in (1.0, 2.0**-20):
        state = loop.init(cfg, space)._replace(x=x, y=factor * f(x), n_suggested=5, pending=pending)
        state, first, _ = loop.suggest(cfg, space, state, size=16)
        value = float(factor * f(first[None])[0])
        state = loop.observe(state, first, value)
        state, second, _ = loop.suggest(cfg, space, state, size=16)
        runs.append((first, second, value))
    (first, second, value), (first_small, second_small, value_small) = runs
    np.testing.assert_array_equal(first_small, first)
    np.testing.assert_array_equal(second_small, second)
    assert value_small == 2.0**-20 * value


# --------------------------------------------------------------------------------------------
# rounding: the Kumaraswamy radius warp, and suggestions under a 1e-15 change of the targets
# --------------------------------------------------------------------------------------------
def _kumaraswamy_decimal(x, a, b):
    """``1 - (1 - x^a)^b`` in 60-digit decimal arithmetic."""
    import decimal

    with decimal.localcontext() as context:
        context.prec = 60
        x, a, b = (decimal.Decimal(float(v)) for v in (x, a, b))
        inner = 1 - (a * x.ln()).exp()
        return float(1 - (b * inner.ln()).exp())


@pytest.mark.parametrize("x, a, b", [(1 - 1e-6, 0.5, 0.3), (0.999, 3.0, 0.2), (1e-5, 2.0, 3.0), (1e-6, 0.3, 5.0),
                                     (0.5, 1.0, 1.0), (0.7, 0.6, 1.7), (0.02, 4.0, 0.5)])
def test_kumaraswamy_cdf_is_accurate_near_both_ends(x, a, b):
    """Near the sphere (x -> 1) and where w is small, ``1 - (1 - x^a)^b`` as written loses digits; jbo's form
    stays within a few ulps of a 60-digit computation, and its gradient is finite."""
    from jbo.kernels.warp import kumaraswamy_cdf

    with jax.enable_x64(True):
        value = float(kumaraswamy_cdf(jnp.float64(x), a, b))
        grad = jax.grad(lambda t: kumaraswamy_cdf(t, a, b))(jnp.float64(x))
    reference = _kumaraswamy_decimal(x, a, b)
    assert abs(value - reference) <= 2e-15 * abs(reference)  # the direct form: up to 1e-7 here
    assert np.isfinite(float(grad)) and float(grad) > 0

