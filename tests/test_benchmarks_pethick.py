"""Tests of Pethick (2018)'s benchmarks: SinOne and its embeddings, Corana, Dolan, LennardJones6.

Each function is checked against an independent NumPy implementation written here from the
published formulas (one point at a time, plain Python control flow, as the collections write them),
at its minimisers, on random points, and under jit / vmap / grad / float32.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize

from jbo.benchmarks import PROBLEMS, get_problem, list_problems
from jbo.benchmarks import pethick


# --------------------------------------------------------------------------------------------
# independent references (per point, from the formulas in the collections' documentation)
# --------------------------------------------------------------------------------------------
def ref_sinone(x):
    return 0.5 * math.sin(13.0 * x[0]) * math.sin(27.0 * x[0]) + 0.5


def ref_corana(x):
    d = (1.0, 1000.0, 10.0, 100.0)
    total = 0.0
    for xi, di in zip(x, d):
        s = math.copysign(1.0, xi) if xi != 0 else 0.0
        z = 0.2 * math.floor(abs(xi / 0.2) + 0.49999) * s
        sz = math.copysign(1.0, z) if z != 0 else 0.0
        if abs(xi - z) < 0.05:
            total += 0.15 * di * (z - 0.05 * sz) ** 2
        else:
            total += di * xi * xi
    return total


def ref_dolan(x):
    x1, x2, x3, x4, x5 = x
    return abs((x1 + 1.7 * x2) * math.sin(x1) - 1.5 * x3 - 0.1 * x4 * math.cos(x4 + x5 - x1)
               + 0.2 * x5 * x5 - x2 - 1.0)


def ref_lennard_jones6(x):
    ed = sum((x[i] - x[i + 3]) ** 2 for i in range(3))
    if ed <= 0:
        return 0.0
    ud = ed**3 + 1e-8
    return min((1.0 / ud - 2.0) / ud, 0.0)


REFERENCES = {
    "sinone": ref_sinone,
    "corana": ref_corana,
    "dolan": ref_dolan,
    "lennard_jones6": ref_lennard_jones6,
}

# (name, dim, kwargs)
CASES = [
    ("sinone", None, {}),
    ("sinone", 2, {}),
    ("sinone", 3, {}),
    ("sinone", 4, {}),
    ("sinone", 3, {"weights": [0.5, -0.25]}),
    ("corana", None, {}),
    ("dolan", None, {}),
    ("dolan", None, {"domain": "gavana"}),
    ("lennard_jones6", None, {}),
]


def _id(case):
    name, dim, kw = case
    return "-".join([name] + ([str(dim)] if dim else []) + [f"{k}={v}" for k, v in kw.items()])


@pytest.fixture(params=CASES, ids=[_id(c) for c in CASES])
def problem(request):
    name, dim, kwargs = request.param
    return get_problem(name, dim, **kwargs)


def _uniform(p, n, seed=0):
    rng = np.random.default_rng(seed)
    lo, hi = p.bounds[:, 0], p.bounds[:, 1]
    return lo + rng.random((n, p.dim)) * (hi - lo)


def _reference(p, x):
    """Reference values for problem ``p`` at ``x`` (n, dim), the embedding added by hand."""
    base = REFERENCES[p.name]
    if p.name != "sinone":
        return np.array([base(row) for row in x])
    weights = _sinone_weights(p)
    return np.array([base(row[:1]) + float(np.dot(weights, row[1:])) for row in x])


def _sinone_weights(p):
    # recover the linear coefficients from values at the unit vectors of the extra coordinates
    d = p.dim
    base = np.full((d, d), 0.3)
    base[1:, 1:] = 0.0
    base[np.arange(1, d), np.arange(1, d)] = 1.0
    y = np.asarray(p.fn(jnp.asarray(base)))
    return y[1:] - ref_sinone([0.3])


# --------------------------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------------------------
def test_registered():
    for name in ("sinone", "corana", "dolan", "lennard_jones6"):
        assert name in list_problems() and name in PROBLEMS
        assert get_problem(name).name == name
    assert [get_problem(n).dim for n in ("sinone", "corana", "dolan", "lennard_jones6")] == [1, 4, 5, 6]
    for d in (2, 3, 4):  # Pethick's embeddings
        assert get_problem("sinone", d).dim == d


def test_domains_and_published_optima():
    np.testing.assert_array_equal(get_problem("sinone", 4).bounds, [[0.0, 1.0]] * 4)
    np.testing.assert_array_equal(get_problem("corana").bounds, [[-5.0, 5.0]] * 4)
    np.testing.assert_array_equal(get_problem("dolan").bounds, [[-100.0, 20.0]] * 5)
    np.testing.assert_array_equal(get_problem("dolan", domain="gavana").bounds, [[-100.0, 100.0]] * 5)
    np.testing.assert_array_equal(get_problem("lennard_jones6").bounds, [[-3.0, 3.0]] * 6)
    # HPOlib's SinOne optimum (a grid point) is within 1e-15 of the solved one
    p = get_problem("sinone")
    assert float(p([0.6330131633013163])[0]) == pytest.approx(0.042926342433644127, abs=1e-15)
    assert p.optimum == pytest.approx(0.042926342433644127, abs=1e-15)
    assert abs(p.argmins[0, 0] - 0.6330131633013163) < 1e-8
    # Gavana's Dolan minimiser and the evalset's LennardJones6 minimiser (both rounded)
    assert float(get_problem("dolan", domain="gavana")(
        [-74.10522498, 44.33511286, 6.21069214, 18.42772233, -16.5839403])[0]) < 1e-7
    lj = [-2.66666470373, 2.73904387714, 1.42304625988, -1.95553276732, 2.81714839844, 2.12175295546]
    assert float(get_problem("lennard_jones6")(lj)[0]) == pytest.approx(-1.0, abs=1e-9)


@pytest.mark.parametrize(
    "name,dim,kwargs,error",
    [
        ("sinone", 0, {}, ValueError),
        ("sinone", 3, {"weights": [1.0]}, ValueError),
        ("sinone", 2, {"weights": [np.nan]}, ValueError),
        ("sinone", 2.0, {}, TypeError),
        ("corana", 3, {}, ValueError),
        ("dolan", 4, {}, ValueError),
        ("dolan", None, {"domain": "jamil"}, ValueError),
        ("lennard_jones6", 9, {}, ValueError),
    ],
)
def test_invalid_arguments(name, dim, kwargs, error):
    with pytest.raises(error):
        get_problem(name, dim, **kwargs)


def test_errors_name_the_field():
    with pytest.raises(ValueError, match="weights"):
        get_problem("sinone", 3, weights=[1.0])
    with pytest.raises(ValueError, match="domain"):
        get_problem("dolan", domain="jamil")


# --------------------------------------------------------------------------------------------
# optima, minimisers, random points, reference agreement
# --------------------------------------------------------------------------------------------
def test_minimisers_and_random_points(problem):
    p = problem
    lo, hi = p.bounds[:, 0], p.bounds[:, 1]
    assert np.all((p.argmins >= lo) & (p.argmins <= hi))
    assert len(np.unique(np.round(p.argmins, 9), axis=0)) == len(p.argmins)
    rng = np.random.default_rng(1)
    random = _uniform(p, 4000)
    corners = p.bounds[np.arange(p.dim), rng.integers(0, 2, (64, p.dim))]
    eps = rng.normal(size=(len(p.argmins), 32, p.dim)) * 1e-3 * (hi - lo)
    perturbed = np.clip(p.argmins[:, None, :] + eps, lo, hi).reshape(-1, p.dim)
    k = len(p.argmins)
    y = np.asarray(p.fn(jnp.asarray(np.vstack([p.argmins, random, corners, perturbed]))))
    assert np.all(np.isfinite(y))
    np.testing.assert_allclose(y[:k], p.optimum, rtol=0, atol=1e-12)
    assert y[k:].min() >= p.optimum - 1e-12
    # the references agree with the optimum and with fn everywhere
    np.testing.assert_allclose(_reference(p, p.argmins), p.optimum, rtol=0, atol=1e-12)
    x = np.vstack([random[:500], corners, perturbed[:200]])
    np.testing.assert_allclose(np.asarray(p.fn(jnp.asarray(x))), _reference(p, x), rtol=1e-12, atol=1e-12)


def test_sinone_minimum_is_global_on_a_fine_grid():
    x = np.linspace(0.0, 1.0, 200_001)
    y = np.asarray(get_problem("sinone").fn(jnp.asarray(x[:, None])))
    assert y.min() >= pethick.SINONE_OPTIMUM - 1e-15
    assert abs(x[np.argmin(y)] - pethick.SINONE_ARGMIN) <= 5e-6


def test_embedding_has_no_effect_by_default():
    """Pethick §4.3: the added dimensions do not change the value; with weights they add w . x."""
    rng = np.random.default_rng(2)
    for d in (2, 3, 4):
        p = get_problem("sinone", d)
        x = rng.random((50, d))
        y = np.asarray(p.fn(jnp.asarray(x)))
        x_moved = x.copy()
        x_moved[:, 1:] = rng.random((50, d - 1))
        np.testing.assert_array_equal(np.asarray(p.fn(jnp.asarray(x_moved))), y)
        np.testing.assert_allclose(y, [ref_sinone(r) for r in x], rtol=1e-14, atol=1e-15)
    w = np.array([0.5, -0.25, 2.0])
    p = get_problem("sinone", 4, weights=w)
    x = rng.random((50, 4))
    expected = [ref_sinone(r) + float(w @ r[1:]) for r in x]
    np.testing.assert_allclose(np.asarray(p.fn(jnp.asarray(x))), expected, rtol=1e-13)
    assert p.optimum == pytest.approx(pethick.SINONE_OPTIMUM - 0.25, abs=1e-15)
    np.testing.assert_array_equal(p.argmins, [[pethick.SINONE_ARGMIN, 0.0, 1.0, 0.0]])
    # the raw embedding rejects a weight vector of the wrong length
    with pytest.raises(ValueError, match="weights"):
        pethick.embed(pethick.sinone, 1, [1.0, 2.0])(jnp.ones((3, 2)))


def test_corana_plateaus():
    """Inside |x_i - z_i| < 0.05 around a grid point z the value is constant (the plateau) and
    lower than the parabola; outside, it is d_i x_i^2."""
    p = get_problem("corana")
    d = np.array([1.0, 1000.0, 10.0, 100.0])
    x = np.array([[0.4, 0.0, 0.0, 0.0], [0.43, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, -1.02], [0.07, 0.0, 0.0, 0.0]])
    expected = [0.15 * (0.4 - 0.05) ** 2, 0.15 * (0.4 - 0.05) ** 2, 0.15 * 100 * (1.0 - 0.05) ** 2, 0.07**2]
    np.testing.assert_allclose(np.asarray(p(x)), expected, rtol=1e-12)
    assert float(p([0.43, 0.0, 0.0, 0.0])[0]) < 0.43**2 * d[0]


@pytest.mark.parametrize("name", ["sinone", "lennard_jones6"])
def test_local_search_cannot_beat_optimum(name):
    """L-BFGS-B with jax gradients from random starts (and the argmins) stays at or above the
    optimum and reaches it: checks the constants and that gradients work."""
    p = get_problem(name)
    vg = jax.jit(jax.value_and_grad(lambda x: p.fn(x[None, :])[0]))

    def f(x):
        v, g = vg(jnp.asarray(x))
        assert np.all(np.isfinite(np.asarray(g)))
        return float(v), np.asarray(g)

    best = np.inf
    for x0 in np.vstack([p.argmins, _uniform(p, 16, seed=3)]):
        r = minimize(f, x0, jac=True, method="L-BFGS-B", bounds=p.bounds, options={"ftol": 1e-15})
        assert r.fun >= p.optimum - 1e-12
        best = min(best, r.fun)
    assert best == pytest.approx(p.optimum, abs=1e-10)


# --------------------------------------------------------------------------------------------
# jit, vmap, grad, float32
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sinone", "corana", "dolan", "lennard_jones6"])
def test_jit_vmap_grad_float32(name):
    p = get_problem(name, 3 if name == "sinone" else None)
    x = _uniform(p, 9, seed=4)
    reference = _reference(p, x)

    @jax.jit
    def composite(z, argmins):
        batched = p.fn(z)
        vmapped = jax.vmap(lambda zi: p.fn(zi[None])[0])(z)
        leading = p.fn(z.reshape(3, 3, p.dim))
        grads = jax.vmap(jax.grad(lambda zi: p.fn(zi[None])[0]))(z)
        y32 = p.fn(z.astype(jnp.float32))
        opt32 = p.fn(argmins.astype(jnp.float32))
        return batched, vmapped, leading, grads, y32, opt32

    batched, vmapped, leading, grads, y32, opt32 = composite(x, p.argmins)
    np.testing.assert_allclose(batched, reference, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(vmapped, reference, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(leading).reshape(-1), reference, rtol=1e-12, atol=1e-12)
    assert grads.shape == x.shape and np.all(np.isfinite(np.asarray(grads)))
    # the gradient agrees with central finite differences (a random point is off the kinks)
    h = 1e-6
    fd = [(_reference(p, x[:1] + h * e) - _reference(p, x[:1] - h * e))[0] / (2 * h) for e in np.eye(p.dim)]
    np.testing.assert_allclose(np.asarray(grads[0]), fd, rtol=1e-5, atol=1e-5 * (1 + np.abs(fd).max()))
    assert y32.dtype == jnp.float32 and opt32.dtype == jnp.float32
    scale = 1 + np.abs(reference).max()
    np.testing.assert_allclose(np.asarray(y32), reference, rtol=1e-3, atol=1e-4 * scale)
    np.testing.assert_allclose(np.asarray(opt32), p.optimum, atol=1e-4)


def test_grad_vanishes_at_smooth_minimisers():
    for name in ("sinone", "lennard_jones6"):
        p = get_problem(name)
        g = jax.vmap(jax.grad(lambda z: p.fn(z[None])[0]))(jnp.asarray(p.argmins))
        np.testing.assert_allclose(np.asarray(g), 0.0, atol=1e-6)
    # coinciding Lennard-Jones atoms: value 0 and a finite gradient
    p = get_problem("lennard_jones6")
    z = jnp.ones(6)
    assert float(p(z)[0]) == 0.0
    assert np.all(np.isfinite(np.asarray(jax.grad(lambda v: p.fn(v[None])[0])(z))))


def test_evaluate_config():
    p = get_problem("dolan")
    config = {f"x{i + 1}": float(v) for i, v in enumerate(p.argmins[1])}
    assert p.evaluate(config) == pytest.approx(0.0, abs=1e-12)
