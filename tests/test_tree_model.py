"""Tree-structured GP (Jenatton et al., 2017): numerics against a dense NumPy/SciPy GP, padding,
baselines, path EI, jit caching and the two-step proposal.

The references below never call the model's linear algebra: they build the dense covariance of
eq. (4), ``Z Σ_c Zᵀ + K_block + σ² I``, with NumPy from the structure's fields directly.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import pytest
from scipy import stats

from jbo.data import pad_data
from jbo.models import tree
from jbo.surrogates import tree as tree_surrogate
from jbo.surrogates import gp
from jbo.kernels import Matern52
from jbo.optimize import MaximizeConfig
from jbo.spaces import Categorical, Integer, Real, Space

try:  # the spaces module's types once they exist; the model only reads their fields
    from jbo.spaces import TreeNode, TreeStructure
except ImportError:  # pragma: no cover - until conditional spaces land
    class TreeNode(NamedTuple):
        leaves: tuple
        columns: tuple
        bias: bool

    class TreeStructure(NamedTuple):
        leaves: tuple
        leaf_columns: tuple
        nodes: tuple


# ----------------------------------------------------------------------------- helpers


def random_structure(rng: np.random.Generator, num_leaves: int, dim: int) -> TreeStructure:
    """A random structure: leaves with random own columns (possibly none), nodes on random leaf sets."""
    leaf_columns = tuple(tuple(sorted(rng.choice(dim, size=rng.integers(0, 4), replace=False).tolist()))
                         for _ in range(num_leaves))
    nodes = [TreeNode(tuple(range(num_leaves)), (), True)]  # the root's bias
    for _ in range(rng.integers(1, 4)):
        leaves = tuple(sorted(rng.choice(num_leaves, size=rng.integers(1, num_leaves + 1), replace=False).tolist()))
        columns = tuple(sorted(rng.choice(dim, size=rng.integers(0, 3), replace=False).tolist()))
        nodes.append(TreeNode(leaves, columns, bool(rng.integers(2)) or not columns))
    leaves = tuple(((("leaf", p),),) for p in range(num_leaves))
    return TreeStructure(tuple(l[0] for l in leaves), leaf_columns, tuple(nodes))


propose = jax.jit(tree.propose, static_argnames=("spec", "decoder", "strategy", "acquisition", "ucb_beta", "config"))


def tree_blocks(x, y, leaf, num_leaves, size=None, dtype=jnp.float64):
    """Observations ``(x, y)`` of leaves ``leaf`` as the model's per-leaf blocks (:func:`jbo.models.tree.blocks`)."""
    data = pad_data(x, y, size, dtype)
    padded = np.zeros(data.x.shape[0], np.int64)
    padded[: len(leaf)] = leaf
    return tree_surrogate.blocks(data, jnp.asarray(padded), num_leaves)


def draw_params(spec, seed):
    """Hyperparameters drawn from the model's own prior (every site exercised)."""
    return numpyro.handlers.seed(tree_surrogate.prior, jax.random.key(seed))(spec)


def np_features(structure, x, leaf):
    """Features z_p(x) straight from the node definitions (bias first, then columns)."""
    rows = []
    for xi, p in zip(x, leaf):
        z = []
        for node in structure.nodes:
            r = ([1.0] if node.bias else []) + [xi[c] for c in node.columns]
            z += r if p in node.leaves else [0.0] * len(r)
        rows.append(z)
    return np.asarray(rows).reshape(len(x), -1)


def np_matern52(x1, x2, lengthscale, amplitude):
    r = np.sqrt(5.0 * np.sum(((x1[:, None, :] - x2[None, :, :]) / lengthscale) ** 2, -1))
    return amplitude * (1.0 + r + r**2 / 3.0) * np.exp(-r)


def np_leaf_cov(spec, params, q, xa, xb):
    """Leaf ``q``'s kernel between full rows ``xa`` and ``xb``, from the structure's fields: one Matérn over
    the leaf's columns, or (``shared_kernel="additive"``) one over its own columns plus one over the shared
    columns of its path (the nodes' columns), (``"additive+joint"``) plus one over all its columns, each with
    its own params."""
    s = spec.structure
    cols = list(s.leaf_columns[q])
    shared = set().union(*[n.columns for n in s.nodes if q in n.leaves])
    parts = [("kernel", list(range(len(cols))))]
    if spec.shared_kernel in ("additive", "additive+joint") and any(c in shared for c in cols):
        parts = [("kernel", [i for i, c in enumerate(cols) if c not in shared]),
                 ("shared_kernel", [i for i, c in enumerate(cols) if c in shared])]
        if spec.shared_kernel == "additive+joint":
            parts.append(("joint_kernel", list(range(len(cols)))))
    total = 0.0
    for part, slots in parts:
        kp = {k: np.asarray(v) for k, v in params[part].items()}
        used = [cols[i] for i in slots]
        total = total + np_matern52(xa[:, used], xb[:, used], kp["lengthscale"][q, slots], kp["amplitude"][q])
    return total


class Dense(NamedTuple):
    cov: np.ndarray
    mean: np.ndarray
    x: np.ndarray
    leaf: np.ndarray
    variances: np.ndarray


def dense_model(spec, params, x, leaf, noise):
    """Eq. (4): prior mean b, covariance Z Σ_c Zᵀ + K_block + noise I of the rows (x, leaf)."""
    s = spec.structure
    p = {k: np.asarray(v) for k, v in params.items() if k not in ("kernel", "shared_kernel")}
    variances = p["variance"] if "variance" in p else np.zeros(0)
    z = np_features(s, x, leaf)
    cov = z @ np.diag(variances) @ z.T + noise * np.eye(len(x))
    for q in range(len(s.leaf_columns)):
        idx = np.flatnonzero(leaf == q)
        cov[np.ix_(idx, idx)] += np_leaf_cov(spec, params, q, x[idx], x[idx])
    return Dense(cov, p["offset"][leaf], x, leaf, variances)


def dense_cross(spec, params, dense, xs, leaf_s):
    """Prior covariances between the latent g_p(x*) + z_p(x*)ᵀc at (xs, leaf_s) and the training rows,
    and among the test points."""
    s = spec.structure
    zs, zt = np_features(s, xs, leaf_s), np_features(s, dense.x, dense.leaf)
    cross = zs @ np.diag(dense.variances) @ zt.T
    prior = zs @ np.diag(dense.variances) @ zs.T
    for q in range(len(s.leaf_columns)):
        i, j = np.flatnonzero(leaf_s == q), np.flatnonzero(dense.leaf == q)
        cross[np.ix_(i, j)] += np_leaf_cov(spec, params, q, xs[i], dense.x[j])
        prior[np.ix_(i, i)] += np_leaf_cov(spec, params, q, xs[i], xs[i])
    return cross, prior


def effective_noise(spec, params, dtype=np.float64):
    # The model factorises M_p + jitter I (jbo.linalg.cholesky adds its first jitter always).
    jitter = 1e-8 if dtype == np.float64 else 1e-5
    return float(params["noise"]) + spec.noise_floor + jitter


def leaf_reader(num_leaves):
    """Test stand-in for a space's leaf decoder: the last column codes the leaf."""
    return lambda u: jnp.floor(u[:, -1] * num_leaves).astype(jnp.int32)


def coded_rows(rng, leaf, num_leaves, dim):
    """``dim`` random columns plus the leaf-code column read by :func:`leaf_reader`."""
    return np.column_stack([rng.random((len(leaf), dim)), (np.asarray(leaf) + 0.5) / num_leaves])


def hand_structure():
    """Three leaves covering every case: a leaf without columns, a node with shared columns and no
    bias, overlapping paths, leaves seeing different numbers of columns (column 6 codes the leaf)."""
    return TreeStructure(
        leaves=((("leaf", 0),), (("leaf", 1),), (("leaf", 2),)),
        leaf_columns=((0, 1), (2,), ()),
        nodes=(TreeNode((0, 1, 2), (), True), TreeNode((0, 1), (3,), True), TreeNode((1, 2), (4, 5), False)))


def problem(structure, mode, data_seed, n=12, variance_per="node", shared_kernel="joint"):
    """Random data and prior-drawn hyperparameters for ``structure``; blocks of a fixed size (16), so
    every draw of one structure shares one compiled program."""
    rng = np.random.default_rng(data_seed)
    spec = tree_surrogate.TreeSpec(tree_surrogate.model_structure(structure, mode), variance_per=variance_per,
                         shared_kernel=shared_kernel)
    num_leaves = spec.num_leaves
    leaf = rng.integers(0, num_leaves, n)
    x = coded_rows(rng, leaf, num_leaves, 6)
    y = rng.standard_normal(n)
    params = draw_params(spec, data_seed)
    # Keep the noise moderate: a horseshoe draw can be ~1e-10, which only tests round-off.
    params["noise"] = jnp.full_like(params["noise"], 0.05 + 0.1 * rng.random())
    return rng, spec, params, x, y, leaf, tree_blocks(x, y, leaf, num_leaves, size=16)


# ----------------------------------------------------------------------------- numerics vs dense


@functools.partial(jax.jit, static_argnums=0)
def everything(spec, params, data, xs):
    """Every quantity compared with the dense GP, in one program (one compilation per structure)."""
    post = tree_surrogate.condition(spec, params, data)
    per_leaf = jax.vmap(lambda q: tree_surrogate.predict_leaf(spec, post, xs, q))(jnp.arange(spec.num_leaves))
    surrogate = tree_surrogate.tree_gp(spec, leaf_reader(spec.num_leaves))
    return (tree_surrogate.log_marginal_likelihood(spec, params, data), per_leaf, surrogate.predict(post, xs),
            surrogate.predict_joint(post, xs))


def check_against_dense(structure, mode, data_seed, variance_per="node", shared_kernel="joint"):
    rng, spec, params, x, y, leaf, data = problem(structure, mode, data_seed, variance_per=variance_per,
                                                  shared_kernel=shared_kernel)
    m = 7
    leaf_s = rng.integers(0, spec.num_leaves, m)
    xs = coded_rows(rng, leaf_s, spec.num_leaves, 6)
    lml, (leaf_mean, leaf_var), (mean, var), (jmean, jcov) = everything(spec, params, data, jnp.asarray(xs))

    dense = dense_model(spec, params, x, leaf, effective_noise(spec, params))
    ref = stats.multivariate_normal(dense.mean, dense.cov).logpdf(y)
    assert abs(float(lml) - ref) <= 1e-8 * max(1.0, abs(ref)), (float(lml), ref)
    cross, prior = dense_cross(spec, params, dense, xs, leaf_s)
    solve = np.linalg.solve(dense.cov, np.column_stack([y - dense.mean, cross.T]))
    ref_mean = np.asarray(params["offset"])[leaf_s] + cross @ solve[:, 0]
    ref_cov = prior - cross @ solve[:, 1:]
    rows = np.arange(m)
    # predict_leaf at each row's own leaf (the acquisition's path), then the Surrogate contract
    # with the leaf read from the rows.
    np.testing.assert_allclose(np.asarray(leaf_mean)[leaf_s, rows], ref_mean, rtol=0, atol=1e-8)
    np.testing.assert_allclose(np.asarray(leaf_var)[leaf_s, rows], np.diag(ref_cov), rtol=0, atol=1e-8)
    np.testing.assert_allclose(mean, ref_mean, rtol=0, atol=1e-8)
    np.testing.assert_allclose(var, np.diag(ref_cov), rtol=0, atol=1e-8)
    np.testing.assert_allclose(jmean, ref_mean, rtol=0, atol=1e-8)
    np.testing.assert_allclose(jcov, ref_cov, rtol=0, atol=1e-8)


MODE_KERNELS = [(mode, "joint") for mode in tree_surrogate.MODES] + [("tree", "additive"), ("tree", "additive+joint")]


# Each (mode, shared kernel) with one of the variance groupings in turn, so that every grouping is checked twice
# and each case is one compiled program (a grouping is another spec); every combination: the slow test below.
VARIANCES_PER = tree_surrogate.VARIANCES_PER
CASES = [(mode, kernel, VARIANCES_PER[i % len(VARIANCES_PER)]) for i, (mode, kernel) in enumerate(MODE_KERNELS)]


@pytest.mark.parametrize("mode,shared_kernel,variance_per", CASES)
def test_marginal_likelihood_and_moments_equal_dense_gp(mode, shared_kernel, variance_per):
    for data_seed in range(3):
        check_against_dense(hand_structure(), mode, data_seed, variance_per, shared_kernel)


@pytest.mark.slow
@pytest.mark.parametrize("mode,shared_kernel", MODE_KERNELS)
def test_dense_gp_on_random_trees(mode, shared_kernel):
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        structure = random_structure(rng, int(rng.integers(2, 5)), 6)
        check_against_dense(structure, mode, seed, tree_surrogate.VARIANCES_PER[seed % 3], shared_kernel)


def test_padding_rows_and_slots_change_nothing():
    rng, spec, params, x, y, leaf, small = problem(hand_structure(), "tree", 7)
    big = tree_blocks(x, y, leaf, spec.num_leaves, size=40)
    # Padded rows full of garbage: they must stay inert whatever they hold.
    garbage_x = np.where(np.asarray(big.mask)[..., None], np.asarray(big.x), rng.random(big.x.shape))
    garbage_y = np.where(np.asarray(big.mask), np.asarray(big.y), 10 * rng.standard_normal(big.y.shape))
    big = tree_surrogate.TreeData(jnp.asarray(garbage_x), jnp.asarray(garbage_y), big.mask)
    xs = jnp.asarray(coded_rows(rng, rng.integers(0, 3, 7), 3, 6))
    a, b = everything(spec, params, small, xs), everything(spec, params, big, xs)
    assert abs(float(a[0]) - float(b[0])) <= 1e-10 * abs(float(a[0]))
    for u, v in zip(jax.tree_util.tree_leaves(a[1:]), jax.tree_util.tree_leaves(b[1:])):
        np.testing.assert_allclose(u, v, rtol=0, atol=1e-10)

    # The unused column slots of leaves with fewer columns than D_max: their lengthscales do not matter.
    colmask = tree_surrogate._tables(spec.structure).leaf_colmask
    assert not colmask.all()
    other = dict(params)
    ls = np.asarray(params["kernel"]["lengthscale"])
    other["kernel"] = {"lengthscale": jnp.asarray(np.where(colmask, ls, 1e-3 + 5 * rng.random(ls.shape))),
                       "amplitude": params["kernel"]["amplitude"]}
    c = everything(spec, other, small, xs)
    for u, v in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(c)):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12)


@functools.partial(jax.jit, static_argnums=0)
def exact_gp_fit(kernel, params, data, xs):
    return gp.log_marginal_likelihood(kernel, params, data), gp.predict(kernel, gp.condition(kernel, params, data), xs)


def test_independent_equals_separate_gps():
    rng, spec, params, x, y, leaf, data = problem(hand_structure(), "independent", 3)
    assert spec.num_features == 0 and "variance" not in params
    xs = coded_rows(rng, rng.integers(0, 3, 7), 3, 6)
    lml, (leaf_mean, leaf_var), _, _ = everything(spec, params, data, jnp.asarray(xs))
    total = 0.0
    for q, cols in enumerate(spec.structure.leaf_columns):
        rows = leaf == q
        cols = list(cols)
        assert cols  # the baselines' leaves also see their path's shared columns
        gparams = {"kernel": {"lengthscale": params["kernel"]["lengthscale"][q, : len(cols)],
                              "amplitude": params["kernel"]["amplitude"][q]},
                   "noise": params["noise"], "mean": params["offset"][q]}
        # Unpadded: jbo.models.gp's padded rows add log(1 + jitter)/2 each to its log-determinant.
        gdata = pad_data(x[rows][:, cols], y[rows], size=int(rows.sum()))
        glml, (gmean, gvar) = exact_gp_fit(Matern52(), gparams, gdata, jnp.asarray(xs[:, cols]))
        total += float(glml)
        np.testing.assert_allclose(leaf_mean[q], gmean, rtol=0, atol=1e-10)
        np.testing.assert_allclose(leaf_var[q], gvar, rtol=0, atol=1e-10)
    assert abs(total - float(lml)) <= 1e-9 * abs(total)


def test_model_structures():
    s = TreeStructure(leaves=((("a", 0),), (("a", 1),)), leaf_columns=((2,), ()),
                      nodes=(TreeNode((0, 1), (), True), TreeNode((1,), (3, 4), False), TreeNode((0,), (), False)))
    t = tree_surrogate.model_structure(s, "tree-paper")
    assert t.nodes == s.nodes[:2] and t.leaf_columns == s.leaf_columns  # the empty node is dropped
    assert tree_surrogate.num_features(t) == 3
    # The default tree model keeps the same node terms and adds the path's shared columns to each leaf GP.
    r = tree_surrogate.model_structure(s, "tree")
    assert r.nodes == t.nodes and r.leaf_columns == ((2,), (3, 4))
    assert tree_surrogate.model_structure(s, "tree", leaf_sees_shared=False) == t
    i = tree_surrogate.model_structure(s, "independent")
    assert i.nodes == () and i.leaf_columns == ((2,), (3, 4))
    m = tree_surrogate.model_structure(s, "marginal")
    assert [(n.leaves, n.columns, n.bias) for n in m.nodes] == [((0, 1), (), True), ((1,), (), True), ((0,), (), True)]
    assert tree_surrogate.model_structure(s, "tree-paper", leaf_sees_shared=True).leaf_columns == ((2,), (3, 4))
    with pytest.raises(ValueError, match="unknown tree model"):
        tree_surrogate.model_structure(s, "forest")


def test_features_match_reference_layout():
    rng = np.random.default_rng(3)
    for s in (hand_structure(), random_structure(rng, 4, 7)):
        x, leaf = rng.random((9, 7)), rng.integers(0, len(s.leaves), 9)
        np.testing.assert_array_equal(s.features(jnp.asarray(x), jnp.asarray(leaf), jnp), np_features(s, x, leaf))


# ----------------------------------------------------------------------------- path EI


@functools.partial(jax.jit, static_argnums=0)
def path_eis(spec, params, data, xs, best):
    post = tree_surrogate.condition(spec, params, data)
    per_leaf = lambda log: jax.vmap(lambda q: tree.path_expected_improvement(spec, post, xs, q, best, log=log))(
        jnp.arange(spec.num_leaves))
    return per_leaf(False), per_leaf(True)


def test_path_ei_equals_closed_form():
    for data_seed in range(3):
        rng, spec, params, x, y, leaf, data = problem(hand_structure(), ("tree-paper", "tree")[data_seed % 2],
                                                      data_seed)
        dense = dense_model(spec, params, x, leaf, effective_noise(spec, params))
        # Posterior of c from the dense model: Σ Zᵀ C⁻¹ (y - b) and Σ - Σ Zᵀ C⁻¹ Z Σ.
        z = np_features(spec.structure, x, leaf)
        sz = np.diag(dense.variances) @ z.T
        c_mean = sz @ np.linalg.solve(dense.cov, y - dense.mean)
        c_cov = np.diag(dense.variances) - sz @ np.linalg.solve(dense.cov, sz.T)
        best = float(np.min(y)) - 0.3 * rng.random()
        xs = rng.random((5, x.shape[1]))
        ei, log_ei = path_eis(spec, params, data, jnp.asarray(xs), best)
        for q in range(spec.num_leaves):
            zq = np_features(spec.structure, xs, np.full(5, q))
            mu = np.asarray(params["offset"])[q] + zq @ c_mean
            sigma = np.sqrt(np.einsum("md,de,me->m", zq, c_cov, zq))
            u = (best - mu) / sigma
            ref = (best - mu) * stats.norm.cdf(u) + sigma * stats.norm.pdf(u)
            np.testing.assert_allclose(ei[q], ref, rtol=1e-8, atol=1e-14)
            np.testing.assert_allclose(np.exp(log_ei[q]), ref, rtol=1e-8, atol=1e-14)


@functools.partial(jax.jit, static_argnums=0)
def all_path_moments(spec, params, data, xs):
    post = tree_surrogate.condition(spec, params, data)
    return jax.vmap(lambda q: tree_surrogate.path_moments(spec, post, xs, q))(jnp.arange(spec.num_leaves))


def test_shared_path_moments_equal_dense_gp():
    """With an additive leaf kernel the path EI's value is b_p + z_pᵀc + g_p^sh(x): its posterior moments
    equal the dense GP's for that latent (cross-covariance Z Σ_c zᵀ + K_sh with the leaf's rows); with
    path_ei="linear" they are the paper's b_p + z_pᵀc, as without shared columns."""
    for data_seed in range(2):
        rng, spec, params, x, y, leaf, data = problem(hand_structure(), "tree", data_seed, shared_kernel="additive")
        xs = rng.random((6, x.shape[1]))
        mean, var = all_path_moments(dataclasses.replace(spec, path_ei="shared"), params, data, jnp.asarray(xs))
        lin_mean, lin_var = all_path_moments(dataclasses.replace(spec, path_ei="linear"), params, data,
                                             jnp.asarray(xs))
        dense = dense_model(spec, params, x, leaf, effective_noise(spec, params))
        s = spec.structure
        zt = np_features(s, x, leaf)
        for q in range(spec.num_leaves):
            zq = np_features(s, xs, np.full(len(xs), q))
            cols = list(s.leaf_columns[q])
            shared = set().union(*[n.columns for n in s.nodes if q in n.leaves])
            slots = [i for i, c in enumerate(cols) if c in shared]
            for sk, ref_mean, ref_var in ((True, mean, var), (False, lin_mean, lin_var)):
                cross = zq @ np.diag(dense.variances) @ zt.T
                prior = zq @ np.diag(dense.variances) @ zq.T
                if sk and slots:
                    kp = {k: np.asarray(v) for k, v in params["shared_kernel"].items()}
                    used = [cols[i] for i in slots]
                    rows = np.flatnonzero(leaf == q)
                    cross[:, rows] += np_matern52(xs[:, used], x[rows][:, used], kp["lengthscale"][q, slots],
                                                  kp["amplitude"][q])
                    prior += np_matern52(xs[:, used], xs[:, used], kp["lengthscale"][q, slots], kp["amplitude"][q])
                solve = np.linalg.solve(dense.cov, np.column_stack([y - dense.mean, cross.T]))
                np.testing.assert_allclose(ref_mean[q], float(params["offset"][q]) + cross @ solve[:, 0], atol=1e-8)
                np.testing.assert_allclose(ref_var[q], np.diag(prior - cross @ solve[:, 1:]), atol=1e-8)
        assert not np.allclose(mean, lin_mean)  # the hand structure has leaves with shared columns


def test_path_ei_without_variance_is_the_plain_improvement():
    s = TreeStructure(leaves=((("a", 0),), (("a", 1),)), leaf_columns=((0,), (1,)),
                      nodes=(TreeNode((0,), (), True),))
    spec = tree_surrogate.TreeSpec(s)
    params = draw_params(spec, 0)
    data = tree_blocks(np.random.default_rng(0).random((4, 2)), np.arange(4.0) - 1.5, np.array([0, 0, 1, 1]), 2)
    # Leaf 1 lies on no node: z_1 = 0, so eq. (6) is the deterministic (y_min - b_1)_+.
    best = float(params["offset"][1]) + 0.25
    ei, _ = path_eis(spec, params, data, jnp.zeros((1, 2)), best)
    np.testing.assert_allclose(ei[1], [0.25], rtol=1e-10)


# ----------------------------------------------------------------------------- jit, fantasies, dtype

TRACES = []


@functools.partial(jax.jit, static_argnums=0)
def lml_fn(spec, params, data):
    TRACES.append(spec)
    return tree_surrogate.log_marginal_likelihood(spec, params, data)


def test_second_call_with_same_shapes_does_not_retrace():
    _, spec, params, x, y, leaf, a = problem(hand_structure(), "tree", 2)
    rng = np.random.default_rng(5)
    leaf_b = rng.integers(0, 3, 12)
    b = tree_blocks(coded_rows(rng, leaf_b, 3, 6), rng.standard_normal(12), leaf_b, 3, size=a.x.shape[1])
    before = len(TRACES)
    lml_fn(spec, params, a)
    lml_fn(spec, params, b)
    lml_fn(spec, jax.tree_util.tree_map(lambda v: 1.5 * v, params), b)
    assert len(TRACES) - before <= 1
    # Different counts per leaf within one bucket give the same padded shape.
    assert tree_blocks(x[:9], y[:9], leaf[:9], 3).x.shape == tree_blocks(x, y, leaf, 3).x.shape


@functools.partial(jax.jit, static_argnums=0)
def fantasy_moments(spec, params, data, pending, mask):
    surrogate = tree_surrogate.tree_gp(spec, leaf_reader(spec.num_leaves))
    post = surrogate.condition(params, data)
    return surrogate.predict(post, pending), surrogate.predict(surrogate.fantasize(post, pending, mask), pending)


def test_fantasy_keeps_mean_and_shrinks_variance():
    rng, spec, params, x, y, leaf, data = problem(hand_structure(), "tree", 4)
    pending = jnp.asarray(coded_rows(rng, [1, 2], 3, 6))
    before, after = fantasy_moments(spec, params, data, pending, jnp.array([True, True]))
    np.testing.assert_allclose(after[0], before[0], atol=1e-8)
    assert np.all(np.asarray(after[1]) < np.asarray(before[1]))
    # Masked-out pending rows change nothing.
    before, masked = fantasy_moments(spec, params, data, pending, jnp.array([False, False]))
    np.testing.assert_allclose(masked, before, atol=1e-10)


def test_float32_matches_float64():
    _, spec, params, x, y, leaf, data = problem(hand_structure(), "tree", 2)
    lml64 = float(lml_fn(spec, params, data))
    p32 = jax.tree_util.tree_map(lambda a: jnp.asarray(a, jnp.float32), params)
    d32 = tree_blocks(x, y, leaf, 3, size=16, dtype=jnp.float32)
    lml32 = lml_fn(spec, p32, d32)
    assert lml32.dtype == jnp.float32
    assert abs(float(lml32) - lml64) <= 1e-3 * abs(lml64)


# ----------------------------------------------------------------------------- leaves in the cube


def decision_space():
    return Space({
        "kind": Categorical(["a", "b"]),
        "depth": Integer(1, 3),
        "width": Integer(2, 40, log=True),
        "lr": Real(1e-4, 1e-1, log=True),
        "u": Real(0.0, 1.0),
    })


def decision_structure():
    leaves = ((("kind", "a"), ("depth", 1)), (("kind", "a"), ("depth", 2)), (("kind", "a"), ("depth", 3)),
              (("kind", "b"), ("width", 2)), (("kind", "b"), ("width", 17)), (("kind", "b"), ("width", 40)))
    return TreeStructure(leaves, ((5,), (5,), (6,), (), (6,), (5, 6)),
                         (TreeNode(tuple(range(6)), (5,), True), TreeNode((0, 1, 2), (), True)))


def test_leaf_decoder_matches_space_decoding():
    space, s = decision_space(), decision_structure()
    decoder = tree.LeafDecoder.from_space(space, s)
    rng = np.random.default_rng(0)
    u = rng.random((4000, space.dim))
    # Points next to the integer bin edges, where an inexact decoder would slip.
    edges = np.concatenate([b for cols, kind, b in [(c, k, np.asarray(b)) for c, k, b in decoder.decisions] if kind == "integer"])
    u[:2 * len(edges), 2] = np.concatenate([edges - 1e-12, edges + 1e-12])
    u[:2 * len(edges), 3] = np.concatenate([edges - 1e-12, edges + 1e-12])
    leaf = np.asarray(jax.jit(decoder)(jnp.asarray(u)))
    configs = space.decode_many(u)
    for p, assignment in enumerate(s.leaves):
        expected = np.array([all(c[k] == v for k, v in assignment) for c in configs])
        assert np.array_equal(leaf[expected], np.full(expected.sum(), p))
    # Writing a leaf's decisions into any row puts the row in that leaf.
    for p in range(len(s.leaves)):
        assert np.all(np.asarray(decoder(decoder.encode(jnp.asarray(u[:50]), p))) == p)


# ----------------------------------------------------------------------------- inference, proposal


def small_balanced():
    """Jenatton's Fig. 1 (bottom): x1 picks a subtree, x2/x3 a leaf, r8/r9 shared per subtree."""
    from jbo.benchmarks.jenatton import tree_space, tree_value

    space = tree_space(2, True)
    return space, space.tree(), lambda config: tree_value(config, 2, True)


def prior_samples(spec, seeds):
    return jax.tree_util.tree_map(lambda *a: jnp.stack(a), *[draw_params(spec, s) for s in seeds])


@pytest.mark.parametrize("mode,strategy", [("marginal", None), ("tree", None),
                                           pytest.param("tree", "screen", marks=pytest.mark.slow),
                                           pytest.param("tree-paper", None, marks=pytest.mark.slow),
                                           pytest.param("independent", None, marks=pytest.mark.slow)])
def test_proposal(mode, strategy):
    space, structure, objective = small_balanced()
    spec = tree_surrogate.TreeSpec(tree_surrogate.model_structure(structure, mode), shared_kernel="additive")
    decoder = tree.LeafDecoder.from_space(space, structure)
    rng = np.random.default_rng(0)
    u = rng.random((16, space.dim))
    leaf = np.asarray(decoder(jnp.asarray(u)))
    y = np.array([objective(c) for c in space.decode_many(u)])
    y = (y - y.mean()) / y.std()
    data = tree_blocks(u, y, leaf, spec.num_leaves)
    params = prior_samples(spec, [0, 1])
    anchors = jnp.asarray(rng.random((128, space.dim)))
    config = MaximizeConfig(num_anchors=128, num_local=0, top_k=4, num_steps=20)
    strategy = strategy or tree.DEFAULT_STRATEGY[mode]
    with_pending = mode.startswith("tree")
    pending = jnp.asarray(rng.random((4, space.dim)))
    pending_mask = jnp.array([True, True, False, False]) if with_pending else None
    x, score, chosen = propose(spec, decoder, params, data, pending if with_pending else None, pending_mask,
                                    anchors, jnp.asarray(y.min()), strategy=strategy, config=config)
    assert np.isfinite(float(score)) and int(space.leaf_index(np.asarray(x)[None])[0]) == int(chosen)
    # The returned point scores at least as well as every anchor in its leaf (the search keeps the
    # best point it visited, anchors included), under the same (fantasised) posteriors.
    scores = leaf_scores(spec, decoder, params, data, pending if with_pending else None, pending_mask, chosen,
                         jnp.asarray(y.min()), jnp.concatenate([anchors, x[None]]))
    assert float(score) >= float(jnp.max(scores[:-1])) - 1e-9
    np.testing.assert_allclose(float(scores[-1]), float(score), rtol=1e-9)
    if strategy == "screen":
        # Step 1 of the screen: the chosen leaf holds the largest acquisition value at the anchors.
        best_per_leaf = [float(jnp.max(leaf_scores(spec, decoder, params, data, pending, pending_mask, q,
                                                   jnp.asarray(y.min()), anchors)))
                         for q in range(spec.num_leaves)]
        assert int(chosen) == int(np.argmax(best_per_leaf)), best_per_leaf


@pytest.mark.parametrize("strategy", ["auto", "all_leaves"])
def test_proposal_keeps_to_a_trust_region(strategy):
    """Every search of a proposal (the leaf scores' and the chosen leaf's) keeps to ``region`` on the numeric
    columns, as the loop's trust region asks; the one-hot decision columns stay free."""
    space, structure, objective = small_balanced()
    spec = tree_surrogate.TreeSpec(tree_surrogate.model_structure(structure, "tree"), shared_kernel="additive")
    decoder = tree.LeafDecoder.from_space(space, structure)
    rng = np.random.default_rng(1)
    u = rng.random((16, space.dim))
    y = np.array([objective(c) for c in space.decode_many(u)])
    data = tree_blocks(u, (y - y.mean()) / y.std(), np.asarray(decoder(jnp.asarray(u))), spec.num_leaves)
    categorical = np.repeat([isinstance(p, Categorical) for p in space.params.values()],
                            [p.width for p in space.params.values()])
    lower, upper = np.where(categorical, 0.0, 0.55), np.where(categorical, 1.0, 0.7)
    anchors = jnp.asarray(lower + (upper - lower) * rng.random((128, space.dim)))
    config = MaximizeConfig(num_anchors=128, num_local=0, top_k=4, num_steps=50, learning_rate=0.05)
    best = jnp.asarray(((y - y.mean()) / y.std()).min())
    params = prior_samples(spec, [0, 1])

    def proposal(region):
        x, _, _ = propose(spec, decoder, params, data, None, None, anchors, best, strategy=strategy, config=config,
                          region=region)
        return np.asarray(x)[~categorical]

    free = proposal(None)
    assert np.any((free < lower[~categorical] - 1e-6) | (free > upper[~categorical] + 1e-6))  # the box binds
    kept = proposal((jnp.asarray(lower), jnp.asarray(upper)))
    assert np.all((kept >= lower[~categorical] - 1e-12) & (kept <= upper[~categorical] + 1e-12)), kept


@functools.partial(jax.jit, static_argnums=(0, 1))
def leaf_scores(spec, decoder, params, data, pending, pending_mask, leaf, best, points):
    """The integrated step-2 acquisition at leaf ``leaf``, built from the Surrogate contract."""
    surrogate = tree_surrogate.tree_gp(spec, decoder)
    posteriors = jax.vmap(lambda p: surrogate.condition(p, data))(params)
    if pending is not None:
        posteriors = jax.vmap(lambda post: surrogate.fantasize(post, pending, pending_mask))(posteriors)
    return tree._leaf_acquisition(spec, posteriors, leaf, best, "ei", 2.0)(points)


def test_two_step_picks_the_leaf_of_largest_path_ei():
    space, structure, objective = small_balanced()
    # Bias-only nodes: eq. (6) does not depend on x, so the leaf choice has a closed form to check.
    spec = tree_surrogate.TreeSpec(tree_surrogate.model_structure(structure, "marginal", leaf_sees_shared=False))
    decoder = tree.LeafDecoder.from_space(space, structure)
    rng = np.random.default_rng(1)
    for trial in range(2):
        u = rng.random((12, space.dim))
        leaf = np.asarray(decoder(jnp.asarray(u)))
        y = rng.standard_normal(12)
        data = tree_blocks(u, y, leaf, 4, size=16)
        seeds = [10 * trial + s for s in range(3)]
        best = float(y.min())
        ei = np.mean([np.asarray(path_eis(spec, draw_params(spec, s), data, jnp.zeros((1, space.dim)), best)[0])[:, 0]
                      for s in seeds], axis=0)
        config = MaximizeConfig(top_k=2, num_steps=5)
        x, _, chosen = propose(spec, decoder, prior_samples(spec, seeds), data, None, None,
                                    jnp.asarray(rng.random((64, space.dim))), jnp.asarray(best), config=config)
        assert int(chosen) == int(np.argmax(ei)), (ei, int(chosen))
        assert int(space.leaf_index(np.asarray(x)[None])[0]) == int(chosen)


def test_hybrid_picks_the_leaf_of_largest_path_or_screened_ei():
    """``strategy="hybrid"``: a leaf's score is the larger of its path EI (6) and its full EI (5) at the
    anchors (both integrated log-EIs); with bias-only nodes eq. (6) has a closed form again."""
    space, structure, objective = small_balanced()
    spec = tree_surrogate.TreeSpec(tree_surrogate.model_structure(structure, "marginal", leaf_sees_shared=True))
    decoder = tree.LeafDecoder.from_space(space, structure)
    rng = np.random.default_rng(2)
    picked = set()
    # Trials 2-3: offsets b_p far below the data and long lengthscales, so each leaf GP's mean is pulled
    # up to its observations everywhere in the leaf while eq. (6) sees the low b_p: there (6) wins.
    for trial, pessimistic in enumerate([False, False, True, True]):
        u = rng.random((12, space.dim))
        leaf = np.asarray(decoder(jnp.asarray(u)))
        y = rng.standard_normal(12)
        data = tree_blocks(u, y, leaf, 4, size=16)
        seeds = [10 * trial + s for s in range(2)]
        params = prior_samples(spec, seeds)
        if pessimistic:
            params["offset"] = params["offset"] - 3.0
            params["kernel"]["lengthscale"] = jnp.full_like(params["kernel"]["lengthscale"], 5.0)
        best = jnp.asarray(float(y.min()))
        anchors = jnp.asarray(rng.random((64, space.dim)))
        path = np.log(np.mean([np.asarray(path_eis(spec, jax.tree_util.tree_map(lambda a: a[i], params), data,
                                                    jnp.zeros((1, space.dim)), float(best))[0])[:, 0]
                               for i in range(len(seeds))], axis=0))
        screened = np.array([float(jnp.max(leaf_scores(spec, decoder, params, data, None, None, q, best, anchors)))
                             for q in range(4)])
        config = MaximizeConfig(top_k=2, num_steps=5)
        x, _, chosen = propose(spec, decoder, params, data, None, None, anchors, best, strategy="hybrid",
                                    config=config)
        assert int(chosen) == int(np.argmax(np.maximum(path, screened))), (path, screened, int(chosen))
        assert int(space.leaf_index(np.asarray(x)[None])[0]) == int(chosen)
        picked.add(bool(screened[int(chosen)] > path[int(chosen)]))
    assert picked == {True, False}  # both scores decided a leaf


# ----------------------------------------------------------------------------- with jbo.spaces


def conditional_spaces():
    from jbo.benchmarks.jenatton import tree_space

    mlp_like = Space({
        "layers": Integer(1, 3),
        "act": Categorical(["relu", "tanh"], when={"layers": [2, 3]}),
        "width": Integer(2, 64, log=True, when={"layers": [1]}),
        "u2": Real(0.0, 1.0, when={"layers": [2, 3]}),
        "u3": Real(0.0, 1.0, when={"layers": [3]}),
        "lr": Real(1e-4, 1e-1, log=True),
        "blocks": Integer(1, 9, log=True, when={"layers": [3]}),
        "extra": Real(0.0, 1.0, when={"blocks": [4, 5, 6]}),
    })
    return [tree_space(2, True), tree_space(3, False), mlp_like]


def test_decoder_and_features_match_space():
    rng = np.random.default_rng(0)
    for space in conditional_spaces():
        structure = space.tree()
        decoder = tree.LeafDecoder.from_space(space, structure)
        u = rng.random((3000, space.dim))
        leaf = np.asarray(jax.jit(decoder)(jnp.asarray(u)))
        np.testing.assert_array_equal(leaf, space.leaf_index(u))
        np.testing.assert_array_equal(structure.features(jnp.asarray(u), jnp.asarray(leaf), jnp),
                                      space.tree_features(u, leaf))
        for p in range(len(structure.leaves)):
            assert np.all(space.leaf_index(np.asarray(decoder.encode(jnp.asarray(u[:20]), p))) == p)


@pytest.mark.parametrize("mode", ["tree", pytest.param("tree-paper", marks=pytest.mark.slow),
                                  pytest.param("independent", marks=pytest.mark.slow),
                                  pytest.param("marginal", marks=pytest.mark.slow)])
def test_ask_tell_on_a_conditional_space(mode):
    """A few ask/tell steps through jbo.Optimizer: configurations hold their active parameters only,
    the model phase runs, and the proposed point lies in the leaf the acquisition chose."""
    from jbo import Optimizer
    from jbo.benchmarks.jenatton import jenatton_small_shared

    problem = jenatton_small_shared()
    space = problem.space()
    opt = Optimizer(space, model=mode, seed=3, n_init=4, num_samples=2, num_burnin=4, num_warmup=2,
                    maximize={"num_anchors": 64, "num_local": 8, "top_k": 2, "num_steps": 10})
    infos = []
    for _ in range(6):
        config = opt.ask()
        assert set(config) == set(space.active(config))
        infos.append((dict(opt.last_info), space.leaf_index(config)))
        opt.tell(config, problem.evaluate(config))
    model_steps = [(info, leaf) for info, leaf in infos if info["phase"] == "model"]
    assert len(model_steps) >= 2
    for info, leaf in model_steps:
        assert info["leaf"] == leaf and np.isfinite(info["score"])
    assert all(np.all(np.isfinite(np.asarray(leaf))) for leaf in jax.tree_util.tree_leaves(opt.state.model_state.params))


# ----------------------------------------------------------------------------- tree vs tree-paper


def test_tree_config_names_strategies_and_journal_round_trip():
    from jbo import models

    paper, default = models.create("tree-paper"), models.create("tree")
    assert (paper.name, paper.search) == ("tree-paper", "two_step")
    assert (default.name, default.search, default.shared_kernel) == ("tree", "auto", "additive+joint")
    assert models.create("independent").search == models.create("marginal").search == "all_leaves"
    chosen = models.create("tree", strategy="all_leaves", shared_kernel="joint")
    assert chosen.search == "all_leaves"
    for config in (paper, default, chosen):
        assert models.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="unknown strategy 'best'"):
        models.create("tree", strategy="best")
    with pytest.raises(ValueError, match="unknown tree model"):
        models.create("tree", mode="forest")
    with pytest.raises(ValueError, match="unknown shared_kernel 'sum'"):
        models.create("tree", shared_kernel="sum")
    assert default.path_ei == "linear" and models.create("tree", path_ei="shared").path_ei == "shared"
    with pytest.raises(ValueError, match="unknown path_ei 'curved'"):
        models.create("tree", path_ei="curved")
    assert "tree-paper" in models.NAMES


def test_split_variances_and_the_shrinkage_prior_of_shared_weights():
    """``"split"``: one variance per node for its bias, one per shared feature under its own prior;
    without shared features it is ``"node"``, draw for draw."""
    structure = hand_structure()  # features: bias of node 0, bias + column 3 of node 1, columns 4, 5 of node 2
    spec = tree_surrogate.TreeSpec(structure, variance_per="split", shared_variance_loc=-3.0, shared_variance_scale=2.0)
    traced = numpyro.handlers.trace(numpyro.handlers.seed(lambda: tree_surrogate.prior(spec), 0))
    variance = np.asarray(traced()["variance"])
    trace = traced.trace
    per_node, shared = np.asarray(trace["node_variance"]["value"]), np.asarray(trace["shared_variance"]["value"])
    assert per_node.shape == (3,) and shared.shape == (3,)
    np.testing.assert_array_equal(variance, [per_node[0], per_node[1], shared[0], shared[1], shared[2]])
    value = jnp.full(3, 0.1)
    expected = stats.lognorm(s=2.0, scale=np.exp(-3.0)).logpdf(0.1) * 3
    assert float(trace["shared_variance"]["fn"].log_prob(value)) == pytest.approx(expected, rel=1e-10)
    expected = stats.lognorm(s=1.0, scale=1.0).logpdf(0.1) * 3
    assert float(trace["node_variance"]["fn"].log_prob(value)) == pytest.approx(expected, rel=1e-10)

    unshared = structure._replace(nodes=(structure.nodes[0], structure.nodes[1]._replace(columns=())))
    draws = [numpyro.handlers.seed(lambda s=s: tree_surrogate.prior(s), 3)()["variance"]
             for s in (tree_surrogate.TreeSpec(unshared, variance_per=v) for v in ("split", "node"))]
    np.testing.assert_array_equal(draws[0], draws[1])
    with pytest.raises(ValueError, match="shared_variance_loc"):
        tree_surrogate.TreeSpec(structure, shared_variance_loc=-3.0)
    with pytest.raises(ValueError, match="variance_per must be one of"):
        tree_surrogate.TreeSpec(structure, variance_per="leaf")


def test_weight_prior_of_each_mode():
    """``"tree"`` shrinks its linear shared weights by default; the paper's model keeps the paper's prior."""
    from jbo import models
    from jbo.benchmarks import get_problem

    space = get_problem("nonlinear_optimizers2").space()
    assert models.create("tree").weight_prior == "shrinkage"
    assert models.create("tree-paper").weight_prior == models.create("independent").weight_prior == "paper"
    assert models.create("tree", shared_weights="paper").weight_prior == "paper"
    with pytest.raises(ValueError, match="unknown shared_weights 'none'"):
        models.create("tree", shared_weights="none")
    shrunk = tree.model_for(space, "tree", shared_weights="shrinkage")[0]
    assert (shrunk.variance_per, shrunk.shared_variance_loc, shrunk.shared_variance_scale) == ("split", *tree.SHRINKAGE)
    assert tree.model_for(space, "tree")[0] == shrunk  # the mode's default, as for Tree
    assert tree.model_for(space, "tree-paper")[0].variance_per == "node"


def optimizer_data(n=40, seed=0):
    """Observations of ``nonlinear_optimizers2``: two optimisers whose best shared learning rate differs."""
    from jbo.benchmarks import get_problem

    problem = get_problem("nonlinear_optimizers2")
    space = problem.space()
    structure = space.tree()
    u = np.random.default_rng(seed).random((n, space.dim))
    y = np.array([problem.evaluate(c) for c in space.decode_many(u)])
    return problem, space, structure, u, (y - y.mean()) / y.std()


@functools.partial(jax.jit, static_argnums=0)
def leaf_means(spec, params, data, xs):
    post = tree_surrogate.condition(spec, params, data)
    return jax.vmap(lambda q: tree_surrogate.predict_leaf(spec, post, xs, q)[0])(jnp.arange(spec.num_leaves))


def lr_scan(space, problem, num=41):
    """Rows along the learning rate with each leaf's own parameter at its optimum (both optimisers' own
    parameters at 0.9: sgd's momentum, adam's beta1)."""
    base = dict(space.decode(space.encode(problem.best_config)))
    grid = np.linspace(0.0, 1.0, num)
    rows = np.tile(space.encode({**base, "optimizer": "adam"}), (num, 1))
    lr = space.columns["lr"].start
    rows[:, lr] = grid
    momentum = space.encode({"optimizer": "sgd", "lr": 1e-3, "momentum": 0.9})
    rows[:, space.columns["momentum"]] = momentum[space.columns["momentum"]]
    return grid, rows


def test_paper_model_is_affine_in_a_shared_parameter_the_default_model_is_not():
    """Under any hyperparameters the paper's model predicts a shared parameter's effect as one straight
    line with the same slope in every leaf (§2.4); the default model's leaf GPs bend it per leaf."""
    problem, space, structure, u, y = optimizer_data()
    leaf = space.leaf_index(u)
    grid, rows = lr_scan(space, problem)
    for mode, shared_kernel in (("tree-paper", "joint"), ("tree", "joint"), ("tree", "additive"),
                                ("tree", "additive+joint")):
        spec = tree_surrogate.TreeSpec(tree_surrogate.model_structure(structure, mode), shared_kernel=shared_kernel)
        params = draw_params(spec, 3)
        for part in ("kernel", "shared_kernel"):
            if part in params:
                params[part]["lengthscale"] = jnp.full_like(params[part]["lengthscale"], 0.3)
        data = tree_blocks(u, y, leaf, spec.num_leaves, size=64)
        means = np.asarray(leaf_means(spec, params, data, jnp.asarray(rows)))  # (leaves, grid)
        second = np.abs(np.diff(means, 2, axis=1)).max()
        slopes = (means[:, -1] - means[:, 0]) / (grid[-1] - grid[0])
        if mode == "tree-paper":
            assert second < 1e-10
            np.testing.assert_allclose(slopes[0], slopes[1], rtol=1e-9)
        else:
            assert second > 1e-4


@pytest.mark.slow
def test_default_model_finds_each_optimizers_own_learning_rate():
    """Fitted (MAP) on 40 observations, the default model's posterior mean along the shared learning rate
    has its minimum near each optimiser's own best rate (sgd 0.8, adam 0.4 in the unit cube); the paper's
    model can only put both at the same end of the range."""
    from jbo import inference

    problem, space, structure, u, y = optimizer_data()
    leaf = space.leaf_index(u)
    decoder = tree.LeafDecoder.from_space(space, structure)
    grid, rows = lr_scan(space, problem)
    argmins = {}
    for mode, shared_kernel in (("tree", "additive+joint"), ("tree", "additive"), ("tree", "joint"),
                                ("tree-paper", "joint")):
        spec = tree_surrogate.TreeSpec(tree_surrogate.model_structure(structure, mode), shared_kernel=shared_kernel)
        data = tree_blocks(u, y, leaf, spec.num_leaves, size=64)
        samples = inference.infer(jax.random.key(0), tree_surrogate.tree_gp(spec, decoder, mode), data, "map")
        params = jax.tree_util.tree_map(lambda a: a[0], samples.params)
        means = np.asarray(leaf_means(spec, params, data, jnp.asarray(rows)))
        argmins[mode, shared_kernel] = grid[np.argmin(means, axis=1)]
    np.testing.assert_allclose(argmins["tree", "additive+joint"], [0.8, 0.4], atol=0.1)
    np.testing.assert_allclose(argmins["tree", "additive"], [0.8, 0.4], atol=0.1)
    np.testing.assert_allclose(argmins["tree", "joint"], [0.8, 0.4], atol=0.1)
    paper = argmins["tree-paper", "joint"]
    assert paper[0] == paper[1] and paper[0] in (0.0, 1.0)


def fitted_weights(name, shared_weights, n=40, seed=0):
    """MAP fit of the default tree model with ``shared_weights`` on ``n`` uniform points of a problem:
    the prior variances and posterior means of ``c``, and which features are shared (not bias)."""
    from jbo import inference
    from jbo.benchmarks import get_problem

    problem = get_problem(name)
    space = problem.space()
    u = np.random.default_rng(seed).random((n, space.dim))
    y = np.array([problem.evaluate(c) for c in space.decode_many(u)])
    spec, _, surrogate = tree.model_for(space, "tree", shared_weights=shared_weights)
    data = tree_blocks(u, (y - y.mean()) / y.std(), space.leaf_index(u), spec.num_leaves, size=64)
    params = jax.tree_util.tree_map(lambda a: a[0], inference.infer(jax.random.key(0), surrogate, data, "map").params)
    post = tree_surrogate.condition(spec, params, data)
    bias = tree_surrogate._tables(spec.structure).feature_bias
    return np.asarray(params["variance"]), np.asarray(post.weight_mean), ~bias


@pytest.mark.slow  # four MAP fits of the tree model on 40 points: the longest test of the suite
def test_shrinkage_drops_a_shared_slope_the_leaves_disagree_on_and_keeps_a_common_one():
    """Two optimisers whose best learning rates differ: the shrinkage prior leaves the linear weight of the
    learning rate near 0 with a small variance (the leaf GPs model the rate), where the paper's prior gives it
    its node's variance. Jenatton's tree, where one slope serves every leaf below a node: the slopes stay."""
    variance, mean, shared = fitted_weights("nonlinear_optimizers2", "shrinkage")
    assert variance[shared].max() < 0.2 and np.abs(mean[shared]).max() < 0.1
    variance, _, _ = fitted_weights("nonlinear_optimizers2", "paper")
    assert variance[shared].min() > 0.5
    shrunk, paper = (fitted_weights("jenatton_small_shared", w)[1:] for w in ("shrinkage", "paper"))
    shared = shrunk[1]
    assert np.abs(paper[0][shared]).min() > 1.5
    np.testing.assert_allclose(shrunk[0][shared], paper[0][shared], rtol=0.1)


@pytest.mark.parametrize("mode", ["tree", pytest.param("tree-paper", marks=pytest.mark.slow)])
def test_compiled_runs_suggest_valid_configurations(mode):
    """Whole runs of both tree models through jbo.minimize_many on a non-linear shared problem: every
    suggestion decodes to a valid configuration of its leaf, and the recorded values are the objective's."""
    import jbo
    from jbo.benchmarks import get_problem

    problem = get_problem("nonlinear_optimizers2")
    space = problem.space()
    result = jbo.minimize_many(problem.evaluate, space, budget=8, seeds=[0, 1], model=mode, inference="map",
                               n_init=3, maximize=dict(num_anchors=32, num_local=4, top_k=2, num_steps=5))
    for xs, values in zip(result.x, result.values):
        for x, value in zip(xs, values):
            config = space.decode(x)
            assert config == space.validate(config)
            assert problem.evaluate(config) == pytest.approx(value, rel=1e-9)
