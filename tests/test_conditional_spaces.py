"""Conditional spaces (issue #4): conditions, validation, encoding with fill, relevance mask, leaves,
Jenatton's tree structure and features, ask/tell/journal/resume, Jenatton's synthetic benchmarks."""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jbo
from jbo import cli, design, loop
from jbo.benchmarks import ConditionalProblem, get_problem, list_problems
from jbo.spaces import Categorical, Integer, Real, Space, TreeNode, TreeStructure

SETTINGS = settings(max_examples=40, deadline=None)
finite = dict(allow_nan=False, allow_infinity=False)


def nested_space() -> Space:
    """Three models, nested decisions (an Integer under a Categorical), two parents, a free parameter."""
    return Space({
        "model": Categorical(["linear", "mlp", "tree"]),
        "lr": Real(1e-4, 1e-1, log=True, when={"model": ["linear", "mlp"]}),
        "n_layers": Integer(1, 3, when={"model": ["mlp"]}),
        "units_2": Integer(8, 256, log=True, when={"n_layers": [2, 3]}),
        "act": Categorical(["relu", "tanh"], when={"model": ["mlp"], "n_layers": [2, 3]}),
        "depth": Integer(1, 10, when={"model": ["tree"]}),
        "criterion": Categorical(["gini", "entropy"], when={"model": ["tree"]}),
        "min_leaf": Real(0.0, 1.0, when={"criterion": ["gini"]}),
        "weight": Real(0.0, 1.0),
    })


def mlp_space() -> Space:
    """Jenatton's MLP shape (Fig. 3, bottom): units of layer j exist when there are >= j layers; shared lr."""
    return Space({
        "n_layers": Integer(0, 3),
        **{f"units_{j}": Integer(1, 30, when={"n_layers": list(range(j, 4))}) for j in (1, 2, 3)},
        "lr": Real(1e-5, 1e-1, log=True),
    })


NESTED = nested_space()
MLP = mlp_space()
SMALL_SHARED = get_problem("jenatton_small_shared").space()
SPACES = {"nested": NESTED, "mlp": MLP, "small_shared": SMALL_SHARED,
          "large_shared": get_problem("jenatton_large_shared").space()}


@st.composite
def conditional_configs(draw, space: Space):
    """A valid configuration: a leaf, then a value for every active non-decision parameter."""
    assignment = dict(draw(st.sampled_from(space.leaves())))
    config = {}
    for name in space.active(assignment):
        p = space.params[name]
        if name in assignment:
            config[name] = assignment[name]
        elif isinstance(p, Real):
            config[name] = draw(st.floats(p.low, p.high, **finite))
        elif isinstance(p, Integer):
            config[name] = draw(st.integers(p.low, p.high))
        else:
            config[name] = draw(st.sampled_from(p.choices))
    return config


def points(dim, lo=-0.2, hi=1.2):
    # no subnormals: XLA on CPU flushes them to zero, so a one-hot block (0, 1e-311) is a tie for
    # jnp.argmax but not for np.argmax (documented in Space.relevance)
    floats = st.floats(lo, hi, allow_subnormal=False, **finite)
    return st.lists(floats, min_size=dim, max_size=dim).map(np.array)


def active_mask(space: Space, config: dict) -> np.ndarray:
    """0/1 per column from the active *names* (independent of Space.relevance)."""
    mask = np.zeros(space.dim)
    for name in space.active(config):
        mask[space.columns[name]] = 1.0
    return mask


# --------------------------------------------------------------------------- definition errors


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: Space({"a": Real(0, 1, when={"b": [1]})}), r"parameter 'a'.*unknown parameter 'b'"),
        (lambda: Space({"layers": Integer(1, 3), "u": Real(0, 1, when={"layer": [1]})}),
         r"parameter 'u'.*unknown parameter 'layer'; did you mean 'layers'"),
        (lambda: Space({"a": Categorical([0, 1], when={"b": [0]}), "b": Categorical([0, 1], when={"a": [1]})}),
         r"parameter 'a': conditions form a cycle \('a' -> 'b' -> 'a'"),
        (lambda: Space({"a": Categorical([0, 1], when={"a": [0]})}), r"parameter 'a'.*cycle \('a' -> 'a'"),
        (lambda: Space({"free": Categorical([0, 1]), "a": Integer(0, 2, when={"c": [0], "free": [1]}),
                        "b": Integer(0, 2, when={"a": [1]}), "c": Integer(0, 2, when={"b": [2]})}),
         r"parameter 'a'.*cycle \('a' -> 'c' -> 'b' -> 'a'"),
        (lambda: Space({"c": Categorical(["x", "y"]), "u": Real(0, 1, when={"c": ["z"]})}),
         r"parameter 'u': when\['c'\]: 'z' is not one of the choices"),
        (lambda: Space({"c": Categorical([0, 1]), "u": Real(0, 1, when={"c": [True]})}),
         r"parameter 'u': when\['c'\]: True is not one of the choices \[0, 1\]"),
        (lambda: Space({"n": Integer(0, 3), "u": Real(0, 1, when={"n": [4]})}),
         r"parameter 'u': when\['n'\]: value 4 out of bounds \[0, 3\]"),
        (lambda: Space({"n": Integer(0, 3), "u": Real(0, 1, when={"n": [1.5]})}),
         r"parameter 'u': when\['n'\]: expected an integer"),
        (lambda: Space({"x": Real(0, 1), "u": Real(0, 1, when={"x": [0.5]})}),
         r"parameter 'u': condition on 'x', a Real; a parent must be a Categorical or Integer"),
        (lambda: Space({"c": Categorical([0, 1]), "u": Real(0, 1, when={"c": []})}),
         r"parameter 'u': when\['c'\] lists no allowed value"),
        (lambda: Real(0, 1, when=["c"]), r"when must be a mapping"),
        (lambda: Integer(0, 1, when={"c": "ab"}), r"when\['c'\] must be a list"),
        (lambda: Categorical([0, 1], when={"": [0]}), r"parent names must be non-empty strings"),
        (lambda: Space.from_dict({"params": [
            {"name": "c", "type": "categorical", "choices": [0, 1]},
            {"name": "u", "type": "real", "low": 0, "high": 1, "when": {"c": 0}}]}),
         r"parameter 'u': when\['c'\] must be a list"),
        (lambda: Space.from_dict({"params": [
            {"name": "c", "type": "categorical", "choices": [0, 1]},
            {"name": "u", "type": "real", "low": 0, "high": 1, "when": {"c": [2]}}]}),
         r"parameter 'u': when\['c'\]: 2 is not one of the choices"),
    ],
)
def test_condition_errors_name_the_parameter(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_too_many_leaves_is_an_error():
    s = Space({"n": Integer(0, 200_000), "u": Real(0, 1, when={"n": [0]})})
    with pytest.raises(ValueError, match=r"parameter 'n'.*more than 100000 leaves"):
        s.leaves()


# --------------------------------------------------------------------------- structure, serialisation


def test_structure_and_normalised_conditions():
    s = NESTED
    assert s.is_conditional and not Space({"x": Real(0, 1)}).is_conditional
    assert s.decisions == ("model", "n_layers", "criterion")
    assert s.conditions["act"] == {"model": ("mlp",), "n_layers": (2, 3)}
    # values are normalised: in domain order, deduplicated, 3.0 -> 3; parents in definition order
    a = Space({"c": Categorical(["p", "q"]), "n": Integer(0, 3),
               "u": Real(0, 1, when={"n": [3, 1, 3.0], "c": ["q"]})})
    b = Space({"c": Categorical(["p", "q"]), "n": Integer(0, 3),
               "u": Real(0, 1, when={"c": ["q"], "n": [1, 3]})})
    assert a == b and hash(a) == hash(b)
    assert a.to_dict()["params"][2] == {"name": "u", "type": "real", "low": 0.0, "high": 1.0, "log": False,
                                        "when": {"c": ["q"], "n": [1, 3]}}
    assert a != Space({"c": Categorical(["p", "q"]), "n": Integer(0, 3), "u": Real(0, 1, when={"n": [1, 3]})})
    assert "when={'c': ['q'], 'n': [1, 3]}" in repr(a)
    # unconditional definitions carry no "when" at all (journals of old runs stay identical)
    assert "when" not in Real(0, 1).to_dict() and repr(Integer(0, 3)) == "Integer(0, 3)"


@pytest.mark.parametrize("name", sorted(SPACES))
def test_to_dict_from_dict_round_trip(name):
    s = SPACES[name]
    d = json.loads(json.dumps(s.to_dict()))  # what the journal stores
    s2 = Space.from_dict(d)
    assert s2 == s and hash(s2) == hash(s) and repr(s2) == repr(s)
    assert s2.leaves() == s.leaves() and s2.tree() == s.tree()


# --------------------------------------------------------------------------- validation, active sets


def test_validate_requires_exactly_the_active_parameters():
    ok = {"weight": 0.5, "model": "mlp", "lr": 0.01, "n_layers": 2, "units_2": 32, "act": "relu"}
    out = NESTED.validate(ok)
    assert list(out) == ["model", "lr", "n_layers", "units_2", "act", "weight"]  # definition order
    assert NESTED.validate({**ok, "n_layers": 2.0})["n_layers"] == 2
    cases = [
        ({k: v for k, v in ok.items() if k != "units_2"}, r"missing parameter 'units_2' \(active: n_layers in \[2, 3\]\)"),
        ({k: v for k, v in ok.items() if k != "n_layers"}, r"missing parameter 'n_layers'"),
        ({k: v for k, v in ok.items() if k != "weight"}, r"missing parameter 'weight'"),
        ({**ok, "depth": 3}, r"parameter 'depth' is inactive.*requires model in \['tree'\], got 'mlp'"),
        ({**ok, "min_leaf": 0.3}, r"parameter 'min_leaf' is inactive.*its parent 'criterion' is inactive"),
        ({**ok, "n_layers": 1}, r"parameter 'units_2' is inactive.*requires n_layers in \[2, 3\], got 1"),
        ({**ok, "units_2": 1000}, r"parameter 'units_2': value 1000 out of bounds"),
        ({**ok, "model": "svm"}, r"parameter 'model': 'svm' is not one of"),
        ({**ok, "unit_2": 3}, r"unknown parameter 'unit_2'; did you mean 'units_2'"),
    ]
    for config, match in cases:
        with pytest.raises(ValueError, match=match):
            NESTED.validate(config)


def test_active_reads_only_decisions():
    assert NESTED.active({"model": "tree", "criterion": "entropy"}) == ("model", "depth", "criterion", "weight")
    assert NESTED.active({"model": "tree", "criterion": "gini", "lr": "ignored"}) == (
        "model", "depth", "criterion", "min_leaf", "weight")
    assert NESTED.active({"model": "linear"}) == ("model", "lr", "weight")
    assert MLP.active({"n_layers": 2}) == ("n_layers", "units_1", "units_2", "lr")
    with pytest.raises(ValueError, match=r"missing parameter 'n_layers'"):
        NESTED.active({"model": "mlp"})
    with pytest.raises(ValueError, match=r"parameter 'model'"):
        NESTED.active({"model": "svm"})
    plain = Space({"x": Real(0, 1), "c": Categorical([0, 1])})
    assert plain.active({}) == ("x", "c") and plain.leaves() == ((),) and plain.leaf_index({"x": 0.1, "c": 0}) == 0


# --------------------------------------------------------------------------- encode / decode / relevance

# jitted once per space (a jit per hypothesis example would recompile every time)
_relevance_jit = {name: jax.jit(s.relevance) for name, s in SPACES.items()}
_leaf_index_jit = {name: jax.jit(s.leaf_index) for name, s in SPACES.items()}


@pytest.mark.parametrize("name", ["nested", "mlp", "large_shared"])
@SETTINGS
@given(data=st.data())
def test_encode_decode_round_trip_and_relevance(name, data):
    space = SPACES[name]
    config = data.draw(conditional_configs(space))
    valid = space.validate(config)
    u = space.encode(config)
    assert u.shape == (space.dim,) and np.all((u >= 0) & (u <= 1))
    back = space.decode(u)
    assert list(back) == list(valid)
    for k in valid:
        if isinstance(valid[k], float):
            assert back[k] == pytest.approx(valid[k], rel=1e-9, abs=1e-12)
        else:
            assert back[k] == valid[k] and type(back[k]) is type(valid[k])
    mask = active_mask(space, config)
    assert np.all(u[mask == 0] == 0.5)  # the deterministic default fill
    np.testing.assert_array_equal(space.relevance(u), mask)
    np.testing.assert_array_equal(np.asarray(_relevance_jit[name](jnp.asarray(u))), mask)
    # a random fill changes only the inactive columns, and decoding ignores them
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    noisy = space.encode(config, fill=rng)
    np.testing.assert_array_equal(noisy[mask == 1], u[mask == 1])
    assert space.decode(noisy) == back
    assert space.leaf_index(noisy) == space.leaf_index(config) == space.leaf_index(u)
    # round_trip: canonical on active columns, inactive columns kept as given
    rt = space.round_trip(noisy)
    np.testing.assert_array_equal(rt[mask == 0], noisy[mask == 0])
    np.testing.assert_allclose(rt[mask == 1], u[mask == 1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["nested", "small_shared"])
@SETTINGS
@given(data=st.data())
def test_relevance_numpy_equals_jax_equals_decoded_active_set(name, data):
    space = SPACES[name]
    U = np.stack([data.draw(points(space.dim)) for _ in range(3)])
    delta = space.relevance(U)
    assert delta.shape == U.shape and delta.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(_relevance_jit[name](jnp.asarray(U))), delta)
    configs = space.decode_many(U)
    for row, config in zip(delta, configs):
        np.testing.assert_array_equal(row, active_mask(space, config))
        assert tuple(config) == space.active(config)  # decode returns exactly the active set
    leaves = space.leaf_index(U)
    np.testing.assert_array_equal(leaves, space.leaf_index(configs))
    np.testing.assert_array_equal(np.asarray(_leaf_index_jit[name](jnp.asarray(U))), leaves)
    # round_trip is idempotent and keeps every row in its leaf
    rt = space.round_trip(U)
    np.testing.assert_array_equal(space.round_trip(rt), rt)
    np.testing.assert_array_equal(space.leaf_index(rt), leaves)


def test_relevance_traces_under_vmap_grad_and_batches():
    U = np.random.default_rng(0).random((4, 5, NESTED.dim))
    delta = NESTED.relevance(U)
    assert delta.shape == (4, 5, NESTED.dim)
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(NESTED.relevance))(jnp.asarray(U))), delta)
    # the mask is piecewise constant: a masked objective is differentiable through it
    g = jax.jit(jax.grad(lambda u: jnp.sum(NESTED.relevance(u) * u ** 2)))(jnp.asarray(U[0, 0]))
    np.testing.assert_allclose(np.asarray(g), 2 * U[0, 0] * delta[0, 0])
    d32 = _relevance_jit["nested"](jnp.asarray(U[0], dtype=jnp.float32))
    assert d32.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(d32), delta[0])
    with pytest.raises(ValueError, match=r"relevance expects points of shape \(\.\.\., 13\)"):
        NESTED.relevance(np.zeros((2, 3)))


# --------------------------------------------------------------------------- traceable round trip and arrays

# jitted once per space (see above)
_round_trip_jit = {name: jax.jit(s.round_trip) for name, s in SPACES.items()}
_decode_arrays_jit = {name: jax.jit(s.decode_arrays) for name, s in SPACES.items()}
_active_arrays_jit = {name: jax.jit(s.active_arrays) for name, s in SPACES.items()}


def _numeric(p) -> bool:
    return isinstance(p, Categorical) and all(
        isinstance(c, (int, float)) and not isinstance(c, bool) for c in p.choices)


def assert_round_trips_agree(space: Space, U: np.ndarray, got, want: np.ndarray):
    """JAX == NumPy round trip: inactive columns kept as given and one-hot blocks exactly, Real and
    Integer columns up to round-off (see Space.round_trip), the same configurations."""
    got = np.asarray(got)
    assert got.shape == want.shape == U.shape and got.dtype == want.dtype
    inactive = space.relevance(U) == 0
    np.testing.assert_array_equal(got[inactive], U[inactive])
    np.testing.assert_array_equal(want[inactive], U[inactive])
    one_hot = np.zeros(space.dim, bool)
    for name, p in space.params.items():
        one_hot[space.columns[name]] = isinstance(p, Categorical)
    np.testing.assert_array_equal(got[..., one_hot], want[..., one_hot])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    flat = lambda A: A.reshape(-1, space.dim)
    for a, b in zip(space.decode_many(flat(got)), space.decode_many(flat(want)), strict=True):
        assert list(a) == list(b)
        for k in a:
            assert a[k] == pytest.approx(b[k], rel=1e-9) if isinstance(a[k], float) else a[k] == b[k]


def assert_arrays_match(space: Space, arrays: dict, active: dict, configs: list[dict]):
    """decode_arrays / active_arrays agree with decode_many: activity, and values when active."""
    assert sorted(arrays) == sorted(active) == sorted(space.names)
    for name, p in space.params.items():
        a, act = np.asarray(arrays[name]), np.asarray(active[name])
        assert a.shape == act.shape == (len(configs),) and act.dtype == bool
        index = isinstance(p, Categorical) and not _numeric(p)
        assert a.dtype == (np.int32 if index else np.float64)
        for i, config in enumerate(configs):
            assert act[i] == (name in config)
            if name not in config:
                continue
            if isinstance(p, Real):
                assert a[i] == pytest.approx(config[name], rel=1e-12, abs=1e-300)
            elif index:
                assert a[i] == p.index(config[name])
            else:  # an Integer, or a numeric choice, as a float
                assert a[i] == config[name]


@pytest.mark.parametrize("name", sorted(SPACES))
@SETTINGS
@given(data=st.data())
def test_round_trip_and_arrays_jax_equal_numpy(name, data):
    space = SPACES[name]
    # raw points, and canonical encodings with a random fill (decision columns exactly on a leaf)
    configs = [data.draw(conditional_configs(space)) for _ in range(2)]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    U = np.concatenate([np.stack([data.draw(points(space.dim)) for _ in range(2)]),
                        space.encode_many(configs, fill=rng)])
    assert_round_trips_agree(space, U, _round_trip_jit[name](jnp.asarray(U)), space.round_trip(U))
    decoded = space.decode_many(U)
    assert_arrays_match(space, space.decode_arrays(U), space.active_arrays(U), decoded)
    assert_arrays_match(space, _decode_arrays_jit[name](jnp.asarray(U)),
                        _active_arrays_jit[name](jnp.asarray(U)), decoded)


def test_round_trip_and_arrays_under_jit_vmap_and_batches():
    U = np.random.default_rng(0).uniform(-0.1, 1.1, (2, 3, NESTED.dim))
    flat = U.reshape(-1, NESTED.dim)
    want = NESTED.round_trip(flat).reshape(U.shape)
    for got in (NESTED.round_trip(jnp.asarray(U)), jax.jit(jax.vmap(jax.vmap(NESTED.round_trip)))(jnp.asarray(U))):
        assert_round_trips_agree(NESTED, U, got, want)
    assert_round_trips_agree(NESTED, U[0, 0], NESTED.round_trip(jnp.asarray(U[0, 0])), want[0, 0])
    r32 = _round_trip_jit["nested"](jnp.asarray(want, dtype=jnp.float32))  # idempotent, float32 kept
    assert r32.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(r32), want, rtol=0, atol=1e-6)
    # eager jax.numpy path, batch shape (2, 3)
    arrays, active = NESTED.decode_arrays(jnp.asarray(U)), NESTED.active_arrays(jnp.asarray(U))
    assert all(a.shape == (2, 3) for a in (*arrays.values(), *active.values()))
    flat_arrays = {k: np.asarray(v).reshape(-1) for k, v in arrays.items()}
    flat_active = {k: np.asarray(v).reshape(-1) for k, v in active.items()}
    assert_arrays_match(NESTED, flat_arrays, flat_active, NESTED.decode_many(flat))
    # always-active parameters are all True; "model" is the index of a str choice
    assert np.all(flat_active["model"]) and np.all(flat_active["weight"])
    assert arrays["model"].dtype == jnp.int32


def test_a_jitted_objective_on_a_conditional_space():
    """fn(config, active): branches picked with jnp.where; the inactive values are decoded too."""
    def fn(config, active):
        lr = jnp.where(active["lr"], jnp.log10(config["lr"]), 0.0)
        trees = jnp.where(active["depth"], config["depth"] * jnp.where(config["criterion"] == 0, 1.0, -1.0), 0.0)
        return lr + trees + config["weight"]

    def reference(c):
        lr = np.log10(c["lr"]) if "lr" in c else 0.0
        trees = c["depth"] * (1.0 if c["criterion"] == "gini" else -1.0) if "depth" in c else 0.0
        return lr + trees + c["weight"]

    U = np.random.default_rng(2).random((16, NESTED.dim))
    objective = jax.jit(jax.vmap(lambda u: fn(NESTED.decode_arrays(u), NESTED.active_arrays(u))))
    np.testing.assert_allclose(np.asarray(objective(jnp.asarray(U))),
                               [reference(c) for c in NESTED.decode_many(U)], rtol=1e-12)


def test_fill_values():
    config = {"n_layers": 1, "units_1": 4, "lr": 1e-3}
    u = MLP.encode(config, fill=0.0)
    np.testing.assert_array_equal(u[[2, 3]], [0.0, 0.0])
    a = MLP.encode_many([config] * 2, fill=np.random.default_rng(3))
    assert not np.array_equal(a[0, 2:4], a[1, 2:4]) and np.all((a >= 0) & (a <= 1))
    for bad in (1.5, -0.1, "random", None, True):
        with pytest.raises(ValueError, match="fill must be a number in"):
            MLP.encode(config, fill=bad)


# --------------------------------------------------------------------------- leaves, sampling, design


def test_leaves_of_a_nested_space():
    assert NESTED.leaves() == (
        (("model", "linear"),),
        (("model", "mlp"), ("n_layers", 1)),
        (("model", "mlp"), ("n_layers", 2)),
        (("model", "mlp"), ("n_layers", 3)),
        (("criterion", "gini"), ("model", "tree")),
        (("criterion", "entropy"), ("model", "tree")),
    )
    assert NESTED.leaf_index({"model": "tree", "criterion": "entropy", "depth": 2, "weight": 0.1}) == 5
    # leaves are told apart by their codes: choices 1 and True are different leaves
    s = Space({"c": Categorical([1, True]), "u": Real(0, 1, when={"c": [True]})})
    assert s.leaves() == ((("c", 1),), (("c", True),))
    assert s.leaf_index({"c": True, "u": 0.5}) == 1 and s.leaf_index({"c": 1}) == 0


def test_sample_leaf():
    for p, leaf in enumerate(NESTED.leaves()):
        configs = NESTED.sample_leaf(np.random.default_rng(p), leaf, 20)
        assert all(NESTED.leaf_index(c) == p for c in configs)
        assert all(tuple(c) == NESTED.active(c) for c in configs)
    by_index = NESTED.sample_leaf(7, 4, 5)
    by_mapping = NESTED.sample_leaf(7, {"model": "tree", "criterion": "gini"}, 5)
    assert by_index == by_mapping and len({c["min_leaf"] for c in by_index}) == 5
    with pytest.raises(ValueError, match="leaf index 6 out of range"):
        NESTED.sample_leaf(0, 6, 1)
    with pytest.raises(ValueError, match="is not a leaf"):
        NESTED.sample_leaf(0, {"model": "mlp"}, 1)


def test_initial_design_one_point_per_leaf_then_sobol():
    n_leaves = len(NESTED.leaves())
    U = loop.initial_design(loop.Settings(seed=3, n_init=10), NESTED)
    assert U.shape == (10, NESTED.dim)
    assert sorted(NESTED.leaf_index(U[:n_leaves])) == list(range(n_leaves))
    np.testing.assert_array_equal(loop.initial_design(loop.Settings(seed=3, n_init=10), NESTED), U)  # by the seed
    assert not np.array_equal(loop.initial_design(loop.Settings(seed=4, n_init=10), NESTED), U)
    assert all(c == NESTED.validate(c) for c in NESTED.decode_many(U))
    key, integers = jax.random.key(0), design.sobol_integers(8, 2)
    plain = Space({"x": Real(0, 1), "y": Real(0, 1)})  # no leaves: the scrambled Sobol set itself
    np.testing.assert_array_equal(design.initial_points(key, plain, 8, integers),
                                  design.scrambled(jax.random.split(key, 3)[0], integers))


# --------------------------------------------------------------------------- tree structure


def test_tree_of_jenatton_small_trees():
    small = get_problem("jenatton_small").space()
    leaves = ((("x1", 0), ("x2", 0)), (("x1", 0), ("x2", 1)), (("x1", 1), ("x3", 0)), (("x1", 1), ("x3", 1)))
    # columns: x1 0-1, x2 2-3, x3 4-5, x4..x7 6..9, r8 10, r9 11
    assert small.tree() == TreeStructure(
        leaves, ((6,), (7,), (8,), (9,)),
        (TreeNode((0, 1, 2, 3), (), True), TreeNode((0, 1), (), True), TreeNode((2, 3), (), True)))
    # Fig. 1 bottom: r8, r9 attached to the decision nodes x2, x3 (r_v = [1, r])
    tree = SMALL_SHARED.tree()
    assert tree == TreeStructure(
        leaves, ((6,), (7,), (8,), (9,)),
        (TreeNode((0, 1, 2, 3), (), True), TreeNode((0, 1), (10,), True), TreeNode((2, 3), (11,), True)))
    assert tree.feature_dim == 5 and tree.n_leaves == 4
    hash(tree)  # static: usable as a jit static argument


def test_tree_of_mlp_and_nested_spaces():
    # columns: n_layers 0, units_1 1, units_2 2, units_3 3, lr 4
    assert MLP.tree() == TreeStructure(
        tuple(((("n_layers", k),)) for k in range(4)),
        ((), (), (), (3,)),
        (TreeNode((0, 1, 2, 3), (4,), True), TreeNode((1, 2, 3), (1,), False), TreeNode((2, 3), (2,), False)))
    # columns: model 0-2, lr 3, n_layers 4, units_2 5, act 6-7, depth 8, criterion 9-10, min_leaf 11, weight 12
    assert NESTED.tree().leaf_columns == ((), (), (), (), (11,), ())
    assert NESTED.tree().nodes == (
        TreeNode((0, 1, 2, 3, 4, 5), (12,), True),  # model, merged with the free parameter
        TreeNode((1, 2, 3), (), True),  # n_layers
        TreeNode((4, 5), (8,), True),  # criterion, merged with depth (same leaves)
        TreeNode((0, 1, 2, 3), (3,), False),  # lr
        TreeNode((2, 3), (5, 6, 7), False),  # units_2 and act (one-hot), shared by 2 and 3 layers
    )
    plain = Space({"x": Real(0, 1), "c": Categorical(["a", "b"])})
    assert plain.tree() == TreeStructure(((),), ((0, 1, 2),), ())


def test_tree_features():
    # Jenatton small with shared variables: z = [1 | 1, r8 | 1, r9]
    configs = [{"x1": 0, "x2": 1, "x5": 0.2, "r8": 0.25}, {"x1": 1, "x3": 0, "x6": -0.5, "r9": 0.75}]
    U = SMALL_SHARED.encode_many(configs, fill=np.random.default_rng(0))
    leaf = SMALL_SHARED.leaf_index(U)
    np.testing.assert_array_equal(leaf, [1, 2])
    Z = SMALL_SHARED.tree_features(U, leaf)
    np.testing.assert_array_equal(Z, [[1, 1, 0.25, 0, 0], [1, 0, 0, 1, 0.75]])
    # c^T z = sum over the path's nodes of c_v^T r_v (Sec. 2.4), on random points of a nested space
    U = np.random.default_rng(1).random((50, NESTED.dim))
    leaf = NESTED.leaf_index(U)
    Z = NESTED.tree_features(U, leaf)
    tree = NESTED.tree()
    c = np.random.default_rng(2).normal(size=tree.feature_dim)
    start, expected = 0, np.zeros(len(U))
    for node in tree.nodes:
        cv = c[start:start + node.width]
        r = np.concatenate([np.ones((len(U), int(node.bias))), U[:, list(node.columns)]], axis=1)
        expected += np.isin(leaf, node.leaves) * (r @ cv)
        start += node.width
    np.testing.assert_allclose(Z @ c, expected, rtol=1e-12)
    fn = jax.jit(lambda u: NESTED.tree_features(u, NESTED.leaf_index(u)))
    np.testing.assert_array_equal(np.asarray(fn(jnp.asarray(U))), Z)
    with pytest.raises(ValueError, match="leaf_idx out of range"):
        NESTED.tree_features(U[:2], np.array([0, 6]))
    with pytest.raises(ValueError, match=r"leaf_idx must have shape \(2,\)"):
        NESTED.tree_features(U[:2], np.array([0]))


# --------------------------------------------------------------------------- ask / tell / journal


def test_ask_tell_journal_resume(tmp_path):
    problem = get_problem("jenatton_small_shared")
    space = problem.space()
    path = tmp_path / "run.jsonl"
    opt = jbo.Optimizer(space, model="random", seed=4, journal=path)
    for _ in range(8):
        config = opt.ask()
        assert tuple(config) == space.active(config)
        opt.tell(config, problem.evaluate(config))
    assert len(opt.state.pending) == 0  # told points leave pending although their fill differs
    with pytest.raises(ValueError, match=r"parameter 'x5' is inactive"):
        opt.tell({"x1": 0, "x2": 0, "x4": 0.1, "x5": 0.2, "r8": 0.0}, 1.0)
    with pytest.raises(ValueError, match=r"missing parameter 'r8'"):
        opt.tell({"x1": 0, "x2": 0, "x4": 0.1}, 1.0)
    opt.close()
    records = [json.loads(line) for line in open(path)]
    assert Space.from_dict(records[0]["space"]) == space
    assert [tuple(r["config"]) for r in records[1:]] == [tuple(space.active(r["config"])) for r in records[1:]]
    again = jbo.Optimizer.resume(path)
    np.testing.assert_array_equal(again.state.x, opt.state.x)  # the random fill is reproducible
    assert again.history == opt.history
    assert again.ask() == opt.ask()  # same seed stream after the replayed evaluations
    again.close()


def test_gp_initial_design_and_random_fill():
    space = SMALL_SHARED
    opt = jbo.Optimizer(space, model="gp", inference="map", seed=0, n_init=4)
    leaves = []
    for _ in range(4):
        config = opt.ask()
        assert opt.last_info["phase"] == "initial"
        leaves.append(space.leaf_index(config))
        opt.tell(config, get_problem("jenatton_small_shared").evaluate(config))
    assert sorted(leaves) == [0, 1, 2, 3]  # one point per leaf first
    x = opt.state.x
    delta = space.relevance(x)
    np.testing.assert_array_equal(x[delta == 1], space.encode_many([h["config"] for h in opt.history])[delta == 1])
    assert len(np.unique(x[delta == 0])) == int((delta == 0).sum())  # inactive columns: random fill
    # A suggested point is recorded as suggested (its inactive columns included)...
    np.testing.assert_array_equal(loop.initial_design(opt.settings, space)[:4], x)
    # ...a configuration told from elsewhere gets a reproducible random fill.
    other = space.sample(np.random.default_rng(5), 1)[0]
    opt.tell(other, 1.0)
    np.testing.assert_array_equal(loop.encode_observation(opt.settings, space, other, 4), opt.state.x[4])


@pytest.mark.slow
def test_gp_model_step_on_conditional_space():
    problem = get_problem("jenatton_small_shared")
    result = jbo.minimize(problem.evaluate, problem.space(), budget=7, model="gp", inference="map", seed=1,
                          n_init=4)
    assert len(result.history) == 7 and result.best_value >= problem.optimum
    assert all(tuple(h["config"]) == problem.space().active(h["config"]) for h in result.history)


# --------------------------------------------------------------------------- Jenatton benchmarks

JENATTON = ["jenatton_small", "jenatton_small_shared", "jenatton_large", "jenatton_large_shared"]


@pytest.mark.parametrize("name", JENATTON)
def test_jenatton_minimum_and_random_configs(name):
    problem = get_problem(name)
    assert isinstance(problem, ConditionalProblem) and problem.name == name and name in list_problems()
    space = problem.space()
    assert problem.optimum == 0.1
    assert problem.evaluate(problem.best_config) == pytest.approx(0.1, abs=1e-15)
    assert space.leaf_index(problem.best_config) == 0
    configs = space.sample(np.random.default_rng(0), 400)
    values = np.array([problem.evaluate(c) for c in configs])
    assert np.all(values >= problem.optimum)
    # leaves read left to right carry the shifts 0.1 a: value - x_leaf^2 - shared = 0.1 (leaf + 1)
    shared = "shared" in name
    for config, value in zip(configs, values):
        leaf = space.leaf_index(config)
        continuous = [v for k, v in config.items() if isinstance(v, float)]
        rest = value - continuous[0] ** 2 - (continuous[1] if shared else 0.0)
        assert rest == pytest.approx(0.1 * (leaf + 1), abs=1e-12)
        assert len(continuous) == 1 + shared


def test_jenatton_definitions_follow_the_paper():
    small = get_problem("jenatton_small_shared")
    # Fig. 1 bottom: leaf x7 (x1 = 1, x3 = 1) is x7^2 + 0.4 + r9
    assert small.evaluate({"x1": 1, "x3": 1, "x7": 0.5, "r9": 0.25}) == pytest.approx(0.25 + 0.4 + 0.25)
    assert small.evaluate({"x1": 0, "x2": 0, "x4": -1.0, "r8": 1.0}) == pytest.approx(1 + 0.1 + 1)
    assert get_problem("jenatton_small").evaluate({"x1": 0, "x2": 1, "x5": 0.1}) == pytest.approx(0.01 + 0.2)
    # large balanced: depth 4, 8 leaves; "7 categorical and 10 continuous parameters, 2 of which being shared"
    large = get_problem("jenatton_large_shared")
    params = large.space().params
    assert large.n_leaves == 8 and large.dim == 17
    assert sum(isinstance(p, Categorical) for p in params.values()) == 7
    reals = {n: p for n, p in params.items() if isinstance(p, Real)}
    assert len(reals) == 10
    assert sorted(n for n, p in reals.items() if p.low == 0.0) == ["r16", "r17"]
    assert all((p.low, p.high) == (-1.0, 1.0) for n, p in reals.items() if n not in ("r16", "r17"))
    assert large.evaluate({"x1": 1, "x3": 1, "x7": 1, "x15": 0.0, "r17": 0.0}) == pytest.approx(0.8)
    with pytest.raises(ValueError, match=r"parameter 'x6' is inactive"):
        small.evaluate({"x1": 0, "x2": 0, "x4": 0.0, "r8": 0.0, "x6": 0.0})
    with pytest.raises(ValueError, match="fixed-dimension"):
        get_problem("jenatton_small", dim=3)


def test_cli_lists_and_runs_a_tree_problem(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JBO_NO_CACHE", "1")
    assert cli.main(["problems"]) == 0
    assert "jenatton_large_shared" in capsys.readouterr().out
    out = str(tmp_path / "tree")
    assert cli.main(["run", "--quiet", "--problem", "jenatton_small", "--model", "random", "--budget", "6",
                     "--out", out]) == 0
    results = json.load(open(os.path.join(out, "results.json")))
    assert results["problem"] == "jenatton_small" and results["n_evaluations"] == 6
    assert results["best_value"] >= 0.1
    space = get_problem("jenatton_small").space()
    assert space.validate(results["best_config"]) == results["best_config"]


@pytest.mark.slow
def test_cli_runs_a_tree_problem_with_the_gp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JBO_NO_CACHE", "1")
    out = str(tmp_path / "tree-gp")
    assert cli.main(["run", "--quiet", "--problem", "jenatton_small", "--model", "gp", "--inference", "map",
                     "--budget", "7", "--n-init", "4", "--out", out]) == 0
    assert json.load(open(os.path.join(out, "results.json")))["best_value"] >= 0.1


@pytest.mark.parametrize("name", sorted(SPACES) + ["mixed"])
@SETTINGS
@given(data=st.data())
def test_the_structure_with_its_bins_round_trips_relates_and_splits_as_the_space(name, data):
    """What the compiled programs see of a space (:attr:`Space.structure`, :attr:`Space.bins`) behaves as the
    space in the cube: the same round trip, relevance, leaves and tree; and bounds, names and choices are gone."""
    space = SPACES.get(name) or Space({"x": Real(-3.0, 7.0), "lr": Real(1e-5, 1.0, log=True), "k": Integer(-4, 9),
                                       "u": Integer(2, 512, log=True), "c": Categorical(["a", 2.5, True])})
    structure = space.structure
    U = np.stack([data.draw(points(space.dim, -0.2, 1.2)) for _ in range(4)])
    np.testing.assert_array_equal(np.asarray(structure.round_trip(jnp.asarray(U), jnp.asarray(space.bins))),
                                  np.asarray(space.round_trip(jnp.asarray(U))))
    np.testing.assert_array_equal(structure.relevance(U), space.relevance(U))
    assert len(structure.leaves()) == len(space.leaves())
    if space.is_conditional:
        np.testing.assert_array_equal(structure.leaf_index(U), space.leaf_index(U))
    assert structure.names == tuple(f"p{i}" for i in range(len(space.names)))
    assert structure.structure is structure and structure.dim == space.dim
    moved = Space({name: (jbo.Real(p.low - 1.0, p.high + 5.0, when=p._when_fields().get("when"))
                          if isinstance(p, Real) and not p.log else p)
                   for name, p in space.params.items()})
    assert moved.structure == structure  # other bounds: the same programs
