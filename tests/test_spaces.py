"""Tests for jbo.spaces: encodings, validation, serialisation, sampling, traceable (JAX) paths."""

import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jbo import design, loop
from jbo.spaces import Categorical, Integer, Real, Space

SETTINGS = settings(max_examples=50, deadline=None)


def mixed_space() -> Space:
    return Space(
        {
            "x": Real(-2.0, 3.0),
            "lr": Real(1e-5, 1e-1, log=True),
            "k": Integer(0, 4),
            "units": Integer(1, 1024, log=True),
            "opt": Categorical(["adam", "sgd", "rmsprop"]),
            "flag": Categorical([True, False]),
            "mixed": Categorical([1, 2.5, "a", True]),
            "const": Categorical(["only"]),
        }
    )


SPACE = mixed_space()

finite = dict(allow_nan=False, allow_infinity=False)


@st.composite
def configs(draw):
    return {
        "x": draw(st.floats(-2.0, 3.0, **finite)),
        "lr": draw(st.floats(1e-5, 1e-1, **finite)),
        "k": draw(st.integers(0, 4)),
        "units": draw(st.integers(1, 1024)),
        "opt": draw(st.sampled_from(["adam", "sgd", "rmsprop"])),
        "flag": draw(st.booleans()),
        "mixed": draw(st.sampled_from([1, 2.5, "a", True])),
        "const": "only",
    }


def points(dim, lo=0.0, hi=1.0):
    return st.lists(st.floats(lo, hi, **finite), min_size=dim, max_size=dim).map(np.array)


def assert_valid(space: Space, config: dict):
    assert list(config) == list(space.names)
    assert space.validate(config) == config
    for name, p in space.params.items():
        v = config[name]
        if isinstance(p, Real):
            assert type(v) is float and p.low <= v <= p.high
        elif isinstance(p, Integer):
            assert type(v) is int and p.low <= v <= p.high
        else:
            assert any(v == c and type(v) is type(c) for c in p.choices)


def same_config(a: dict, b: dict):
    assert list(a) == list(b)
    for k in a:
        if isinstance(a[k], float):
            assert math.isclose(a[k], b[k], rel_tol=1e-9, abs_tol=1e-12), (k, a[k], b[k])
        else:
            assert a[k] == b[k] and type(a[k]) is type(b[k]), (k, a[k], b[k])


# --------------------------------------------------------------------------- structure


def test_structure():
    s = SPACE
    assert s.names == ("x", "lr", "k", "units", "opt", "flag", "mixed", "const")
    assert s.dim == 4 + 3 + 2 + 4 + 1
    cols = s.columns
    assert cols["x"] == slice(0, 1) and cols["opt"] == slice(4, 7) and cols["const"] == slice(13, 14)
    assert sum(c.stop - c.start for c in cols.values()) == s.dim
    assert isinstance(s.params["lr"], Real) and s.params["lr"].log
    assert "Real(1e-05, 0.1, log=True)" in repr(s) and "Categorical(['adam'" in repr(s)


# --------------------------------------------------------------------------- round trips


@SETTINGS
@given(configs())
def test_decode_encode_round_trip(config):
    u = SPACE.encode(config)
    assert u.shape == (SPACE.dim,) and u.dtype == np.float64
    assert np.all((u >= 0) & (u <= 1))
    back = SPACE.decode(u)
    same_config(back, SPACE.validate(config))


@SETTINGS
@given(
    st.floats(1e-6, 1e6, **finite),
    st.floats(1.0001, 1e6, **finite),
    st.floats(0, 1, **finite),
    st.booleans(),
)
def test_real_round_trip_any_bounds(low, ratio, frac, log):
    high = low * ratio
    p = Real(low, high, log=log)
    v = min(max(low + frac * (high - low), low), high)
    back = p.decode(p.encode(v))
    assert low <= back <= high
    assert math.isclose(back, v, rel_tol=1e-9)


@SETTINGS
@given(st.integers(-10**6, 10**6), st.integers(1, 10**6), st.data(), st.booleans())
def test_integer_round_trip_any_bounds(low, width, data, log):
    if log:
        low = abs(low) + 1
    high = low + width
    p = Integer(low, high, log=log)
    v = data.draw(st.integers(low, high))
    u = p.encode(v)
    assert p.decode(u) == v and p.decode(p.encode(float(v))) == v
    if not log:  # the whole bin around the centre decodes to v
        half = 0.49 / (high - low + 1)
        assert p.decode(u - half) == v and p.decode(u + half) == v


def test_integer_bins_equal_width():
    p = Integer(0, 4)
    u = (np.arange(100_000) + 0.5) / 100_000
    counts = np.bincount(p.decode_values(u[:, None]), minlength=5)
    assert np.all(counts == 20_000)
    np.testing.assert_allclose(
        [p.encode(v)[0] for v in range(5)], [0.1, 0.3, 0.5, 0.7, 0.9]
    )
    assert p.decode([0.0]) == 0 and p.decode([1.0]) == 4 and p.decode([0.2]) == 1


def test_integer_log_bins():
    p = Integer(1, 100, log=True)
    u = (np.arange(200_000) + 0.5) / 200_000
    counts = np.bincount(p.decode_values(u[:, None]), minlength=101)[1:]
    # integer v gets volume log((v + 1/2) / (v - 1/2)) / log(100.5 / 0.5)
    expected = np.log((np.arange(1, 101) + 0.5) / (np.arange(1, 101) - 0.5)) / np.log(201)
    np.testing.assert_allclose(counts / 200_000, expected, atol=2e-5)
    assert counts[0] > counts[-1]
    assert p.decode([0.0]) == 1 and p.decode([1.0]) == 100


def test_real_log_is_geometric():
    p = Real(1e-4, 1.0, log=True)
    np.testing.assert_allclose(p.encode(1e-2), [0.5])
    assert math.isclose(p.decode([0.25]), 1e-3, rel_tol=1e-12)
    assert p.decode([0.0]) == 1e-4 and p.decode([1.0]) == 1.0


def test_categorical_one_hot_and_argmax():
    p = Categorical(["a", "b", "c"])
    np.testing.assert_array_equal(p.encode("b"), [0, 1, 0])
    assert p.decode([0.2, 0.9, 0.3]) == "b"
    assert p.decode([0.5, 0.5, 0.1]) == "a"  # ties -> first
    assert p.decode([-3.0, 2.0, 1.5]) == "b"  # clipped: [0, 1, 1] -> first max
    # True and 1 are different choices; 1 and 1.0 are the same
    q = Categorical([1, True])
    np.testing.assert_array_equal(q.encode(True), [0, 1])
    np.testing.assert_array_equal(q.encode(1.0), [1, 0])
    assert type(q.decode([1, 0])) is int and q.decode([0, 1]) is True


@SETTINGS
@given(points(SPACE.dim))
def test_decode_any_point_is_valid(u):
    assert_valid(SPACE, SPACE.decode(u))


@SETTINGS
@given(points(SPACE.dim, -0.5, 1.5))
def test_decode_outside_cube_is_clipped(u):
    config = SPACE.decode(u)
    assert_valid(SPACE, config)
    assert config == SPACE.decode(np.clip(u, 0, 1))


@SETTINGS
@given(st.lists(points(SPACE.dim, -0.1, 1.1), min_size=1, max_size=8).map(np.stack))
def test_round_trip_idempotent(U):
    R = SPACE.round_trip(U)
    assert R.shape == U.shape
    assert np.all((R >= 0) & (R <= 1))
    assert SPACE.decode_many(R) == SPACE.decode_many(U)
    R2 = SPACE.round_trip(R)
    np.testing.assert_allclose(R2, R, rtol=0, atol=1e-12)
    # integers and categoricals are snapped exactly
    exact = np.ones(SPACE.dim, bool)
    exact[[SPACE.columns["x"].start, SPACE.columns["lr"].start]] = False
    np.testing.assert_array_equal(R2[:, exact], R[:, exact])
    for name in ("opt", "flag", "mixed", "const"):
        block = R[:, SPACE.columns[name]]
        assert np.all(block.sum(axis=1) == 1) and set(np.unique(block)) <= {0.0, 1.0}
    # row-wise equal to encode(decode(u)), and a single row keeps its shape
    np.testing.assert_array_equal(R, SPACE.encode_many(SPACE.decode_many(U)))
    np.testing.assert_array_equal(SPACE.round_trip(U[0]), R[0])


def test_encode_many_decode_many_shapes():
    cfgs = SPACE.sample(0, 5)
    U = SPACE.encode_many(cfgs)
    assert U.shape == (5, SPACE.dim)
    np.testing.assert_array_equal(U[2], SPACE.encode(cfgs[2]))
    assert SPACE.encode_many([]).shape == (0, SPACE.dim)
    assert SPACE.decode_many(np.zeros((0, SPACE.dim))) == []
    for c, d in zip(cfgs, SPACE.decode_many(U)):
        same_config(c, d)
    with pytest.raises(ValueError, match="shape"):
        SPACE.decode(np.zeros(SPACE.dim + 1))
    with pytest.raises(ValueError, match="shape"):
        SPACE.decode_many(np.zeros(SPACE.dim))
    with pytest.raises(ValueError, match="finite"):
        SPACE.decode(np.full(SPACE.dim, np.nan))


def test_validate_normalises():
    s = Space({"x": Real(0, 1), "n": Integer(0, 10), "c": Categorical([1, "b"])})
    out = s.validate({"c": np.int64(1), "n": 3.0, "x": np.float32(0.5)})
    assert out == {"x": 0.5, "n": 3, "c": 1}
    assert list(out) == ["x", "n", "c"]
    assert type(out["x"]) is float and type(out["n"]) is int and type(out["c"]) is int
    assert s.validate({"x": 1, "n": np.int32(10), "c": "b"}) == {"x": 1.0, "n": 10, "c": "b"}


# --------------------------------------------------------------------------- config errors

GOOD = {"alpha": 0.5, "depth": 3, "kernel": "rbf"}
S3 = Space(
    {"alpha": Real(0.0, 1.0), "depth": Integer(1, 8), "kernel": Categorical(["rbf", "linear"])}
)


@pytest.mark.parametrize(
    "patch, match",
    [
        ({"alpha": None}, r"missing parameter 'alpha'"),
        ({"alhpa": 0.5}, r"unknown parameter 'alhpa'; did you mean 'alpha'\?"),
        ({"zzzzzz": 1}, r"unknown parameter 'zzzzzz'.*valid parameters"),
        ({"alpha": "0.5"}, r"parameter 'alpha'.*real number"),
        ({"alpha": True}, r"parameter 'alpha'.*real number"),
        ({"alpha": [0.5]}, r"parameter 'alpha'.*real number"),
        ({"alpha": float("nan")}, r"parameter 'alpha'.*finite"),
        ({"alpha": float("inf")}, r"parameter 'alpha'.*finite"),
        ({"alpha": 1.5}, r"parameter 'alpha'.*out of bounds"),
        ({"alpha": -0.1}, r"parameter 'alpha'.*out of bounds"),
        ({"depth": 3.5}, r"parameter 'depth'.*non-integer"),
        ({"depth": "3"}, r"parameter 'depth'.*integer"),
        ({"depth": float("nan")}, r"parameter 'depth'.*finite"),
        ({"depth": 9}, r"parameter 'depth'.*out of bounds"),
        ({"depth": 0.0}, r"parameter 'depth'.*out of bounds"),
        ({"kernel": "RBF"}, r"parameter 'kernel'.*not one of the choices"),
        ({"kernel": ["rbf"]}, r"parameter 'kernel'.*not one of the choices"),
    ],
)
def test_validation_errors(patch, match):
    cfg = {**GOOD, **patch}
    cfg = {k: v for k, v in cfg.items() if v is not None}
    with pytest.raises(ValueError, match=match):
        S3.validate(cfg)
    with pytest.raises(ValueError, match=match):
        S3.encode(cfg)


def test_validate_accepts_integral_float_and_rejects_non_mapping():
    assert S3.validate({**GOOD, "depth": 3.0})["depth"] == 3
    with pytest.raises(ValueError, match="mapping"):
        S3.validate([0.5, 3, "rbf"])


# --------------------------------------------------------------------------- definition errors


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Real(1, 1), r"low \(1\.0\) must be < high \(1\.0\)"),
        (lambda: Real(2, 1), r"low \(2\.0\) must be < high \(1\.0\)"),
        (lambda: Real(0, 1, log=True), r"log=True requires low > 0"),
        (lambda: Real(-1, 1, log=True), r"log=True requires low > 0"),
        (lambda: Real("0", 1), r"low must be a real number"),
        (lambda: Real(0, float("inf")), r"high must be finite"),
        (lambda: Real(0, 1, log="yes"), r"log must be a bool"),
        (lambda: Integer(0, 1.5), r"high must be an integer"),
        (lambda: Integer(3, 3), r"low \(3\) must be < high \(3\)"),
        (lambda: Integer(5, 2), r"low \(5\) must be < high \(2\)"),
        (lambda: Integer(0, 10, log=True), r"log=True requires low >= 1"),
        (lambda: Categorical([]), r"at least one choice"),
        (lambda: Categorical(["a", "b", "a"]), r"duplicate choice 'a'"),
        (lambda: Categorical([1, 1.0]), r"duplicate choice 1\.0"),
        (lambda: Categorical("abc"), r"sequence"),
        (lambda: Categorical([None]), r"str, int, float or bool"),
        (lambda: Categorical([float("nan")]), r"not finite"),
        (lambda: Space({}), r"empty space"),
        (lambda: Space({1: Real(0, 1)}), r"names must be strings"),
        (lambda: Space({"x": (0, 1)}), r"parameter 'x'.*Real, Integer, Categorical"),
        (lambda: Space([("x", Real(0, 1))]), r"mapping"),
    ],
)
def test_definition_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_integral_bounds_accepted():
    assert Integer(1.0, np.int64(5)).to_dict() == {"type": "integer", "low": 1, "high": 5, "log": False}
    assert Categorical([1, True]).choices == (1, True)


@pytest.mark.parametrize(
    "entry, match",
    [
        ({"name": "x1", "type": "real", "low": 2.0, "high": 1.0},
         r"parameter 'x1': low \(2\.0\) must be < high \(1\.0\)"),
        ({"name": "n", "type": "integer", "low": 0, "high": 4, "log": True},
         r"parameter 'n': log=True requires low >= 1"),
        ({"name": "c", "type": "categorical", "choices": ["a", "a"]}, r"parameter 'c': duplicate"),
        ({"name": "c", "type": "categorical"}, r"parameter 'c': missing field 'choices'"),
        ({"name": "z", "type": "bogus"}, r"parameter 'z': unknown type 'bogus'"),
    ],
)
def test_from_dict_errors_name_parameter(entry, match):
    with pytest.raises(ValueError, match=match):
        Space.from_dict({"params": [entry]})


def test_immutable_params():
    p = Real(0, 1)
    with pytest.raises(AttributeError):
        p.low = 5


# --------------------------------------------------------------------------- serialisation


def test_to_dict_from_dict_round_trip():
    d = SPACE.to_dict()
    d2 = json.loads(json.dumps(d))
    assert d2 == d
    s2 = Space.from_dict(d2)
    assert s2 == SPACE and hash(s2) == hash(SPACE)
    assert s2.to_dict() == d and repr(s2) == repr(SPACE)
    assert s2.params["mixed"].choices == (1, 2.5, "a", True)
    assert type(s2.params["mixed"].choices[3]) is bool
    u = np.random.default_rng(3).random((8, SPACE.dim))
    assert s2.decode_many(u) == SPACE.decode_many(u)


def test_equality():
    a = Space({"x": Real(0, 1), "y": Integer(0, 3)})
    assert a == Space({"x": Real(0.0, 1.0), "y": Integer(0, 3)})
    assert a != Space({"y": Integer(0, 3), "x": Real(0, 1)})  # order defines the columns
    assert a != Space({"x": Real(0, 1, log=False), "y": Integer(0, 4)})
    assert Space({"c": Categorical([1])}) != Space({"c": Categorical([True])})
    assert a != "not a space"


# --------------------------------------------------------------------------- sampling


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13, 64])
def test_sobol_table_shape_range_reproducible(n, recwarn):
    table = design.sobol_table(n, SPACE.dim, seed=7)
    assert table.shape == (n, SPACE.dim) and table.dtype == np.float64
    assert np.all((table >= 0) & (table < 1))
    np.testing.assert_array_equal(table, design.sobol_table(n, SPACE.dim, seed=7))
    assert not np.array_equal(table, design.sobol_table(n, SPACE.dim, seed=8))
    assert not [w for w in recwarn if "balance" in str(w.message)]
    np.testing.assert_array_equal(design.sobol_table(5, 3, 1), design.sobol_table(8, 3, 1)[:5])


def test_sobol_integers_are_scipys_unscrambled_points():
    from scipy.stats import qmc

    integers = design.sobol_integers(16, 5)
    assert integers.dtype == np.uint32 and integers.shape == (16, 5)
    np.testing.assert_array_equal(integers / 2.0**design.SOBOL_BITS,
                                  qmc.Sobol(5, scramble=False, bits=design.SOBOL_BITS).random_base2(4))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([(8, 2), (16, 6), (32, 3)]))
def test_scrambled_sobol_keeps_the_net_and_changes_its_geometry(seed, shape):
    """A scrambled set is still a digital net (every dyadic box of volume 1/n of any two coordinates that
    the unscrambled set fills once is filled once: Sobol's first two coordinates are a (0, m, 2)-net), is a
    function of the key, and its points' relative positions (distances on the torus) change with the key,
    which a shared table shifted modulo 1 never does."""
    n, dim = shape
    integers = design.sobol_integers(n, dim)
    key = jax.random.key(seed)
    points = np.asarray(design.scrambled(key, integers))
    assert points.shape == (n, dim) and np.all((points >= 0) & (points < 1))
    np.testing.assert_array_equal(points, np.asarray(design.scrambled(key, integers)))
    m = n.bit_length() - 1
    for j in range(dim):
        assert sorted(np.floor(points[:, j] * n).astype(int).tolist()) == list(range(n))
    for rows in range(m + 1):  # boxes of 2^-rows by 2^-(m - rows) in the first two coordinates
        boxes = np.floor(points[:, 0] * 2**rows) * 2 ** (m - rows) + np.floor(points[:, 1] * 2 ** (m - rows))
        assert len(set(boxes.tolist())) == n

    def torus_distances(p):
        d = np.abs(p[:, None] - p[None])
        return np.sort(np.linalg.norm(np.minimum(d, 1 - d), axis=-1), axis=None)

    other = np.asarray(design.scrambled(jax.random.fold_in(key, 1), integers))
    assert not np.allclose(torus_distances(points), torus_distances(other))
    table = design.sobol_table(n, dim, seed=1)
    rotated = [np.asarray(design.shifted(jax.random.key(s), table)) for s in (seed, seed + 1)]
    np.testing.assert_allclose(torus_distances(rotated[0]), torus_distances(rotated[1]), atol=1e-9)


def test_initial_design_is_valid_and_space_filling():
    configs = SPACE.decode_many(loop.initial_design(loop.Settings(seed=4, n_init=10), SPACE))
    assert len(configs) == 10
    for c in configs:
        assert_valid(SPACE, c)
    # space filling: a 1-d Sobol design of 8 points hits every integer bin of Integer(0, 7)
    s = Space({"i": Integer(0, 7)})
    assert sorted(c["i"] for c in s.decode_many(loop.initial_design(loop.Settings(n_init=8), s))) == list(range(8))


def test_sample_reproducible():
    a = SPACE.sample(np.random.default_rng(3), 6)
    assert a == SPACE.sample(3, 6) == SPACE.sample(np.int64(3), 6)
    assert a != SPACE.sample(4, 6)
    assert len(a) == 6 and SPACE.sample(0, 0) == []
    for c in a:
        assert_valid(SPACE, c)
    with pytest.raises(ValueError):
        SPACE.sample(0, -1)
    with pytest.raises(ValueError, match="rng"):
        SPACE.sample("seed", 2)


def test_sample_with_jax_key():
    jax = pytest.importorskip("jax")
    a = SPACE.sample(jax.random.key(0), 4)
    assert a == SPACE.sample(jax.random.key(0), 4)
    assert a != SPACE.sample(jax.random.key(1), 4)
    for c in a:
        assert_valid(SPACE, c)


# --------------------------------------------------------------------------- traceable (jax.numpy) paths

# every parameter type: Real, log Real, Integer, log Integer, Categorical (str, bool, mixed, a single
# choice) and numeric categoricals, which decode_arrays decodes to their value
ARRAY_SPACE = Space({**SPACE.params, "num": Categorical([1, 2.5, -3]), "bits": Categorical([0, 1]),
                     "big": Integer(-1000, 10**6, log=False), "wide": Integer(3, 10**6, log=True)})
N_ROWS = 4  # fixed batch size: one compilation per jitted function
_round_trip_jit = jax.jit(ARRAY_SPACE.round_trip)
_decode_arrays_jit = jax.jit(ARRAY_SPACE.decode_arrays)
_active_arrays_jit = jax.jit(ARRAY_SPACE.active_arrays)


def jax_points(dim, lo=-0.2, hi=1.2):
    # no subnormals: XLA on CPU flushes them to zero, so a one-hot block (0, 1e-311) is a tie for
    # jnp.argmax but not for np.argmax (documented in Space.relevance)
    floats = st.floats(lo, hi, allow_subnormal=False, **finite)
    return st.lists(floats, min_size=dim, max_size=dim).map(np.array)


def batches(dim):
    return st.lists(jax_points(dim), min_size=N_ROWS, max_size=N_ROWS).map(np.stack)


def assert_round_trips_agree(space: Space, got, want: np.ndarray):
    """JAX round trip == NumPy round trip: the same configurations; one-hot blocks exactly, Real and
    Integer columns up to round-off (decoding and re-encoding a Real; for an Integer's bin centre,
    XLA's log differs from NumPy's by an ulp and jit turns a division by a constant into a product)."""
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype
    rounded, tolerance = np.zeros(space.dim, bool), np.full(space.dim, 1e-12)
    for name, p in space.params.items():
        rounded[space.columns[name]] = not isinstance(p, Categorical)
        if getattr(p, "log", False):  # an ulp of log(high), over the encoded range log(high) - log(low)
            lo, hi = np.log(p.low), np.log(p.high)
            tolerance[space.columns[name]] = max(1e-12, 8 * np.finfo(float).eps * max(abs(lo), abs(hi)) / (hi - lo))
    np.testing.assert_array_equal(got[..., ~rounded], want[..., ~rounded])
    assert np.all(np.abs(got - want)[..., rounded] <= tolerance[rounded]), np.max(np.abs(got - want)[..., rounded])
    flat = lambda A: A.reshape(-1, space.dim)
    for a, b in zip(space.decode_many(flat(got)), space.decode_many(flat(want)), strict=True):
        same_config(a, b)


def assert_arrays_match(space: Space, arrays: dict, active: dict, configs: list[dict]):
    """decode_arrays / active_arrays agree with decode_many (values of the active parameters)."""
    assert sorted(arrays) == sorted(active) == sorted(space.names)  # jit returns dicts key-sorted
    for name, p in space.params.items():
        a, act = np.asarray(arrays[name]), np.asarray(active[name])
        assert a.shape == act.shape == (len(configs),) and act.dtype == bool
        numeric = isinstance(p, Categorical) and all(
            isinstance(c, (int, float)) and not isinstance(c, bool) for c in p.choices)
        assert a.dtype == (np.int32 if isinstance(p, Categorical) and not numeric else np.float64)
        for i, config in enumerate(configs):
            assert act[i] == (name in config)
            if name not in config:
                continue
            if isinstance(p, Real):
                assert p.low <= a[i] <= p.high
                assert a[i] == pytest.approx(config[name], rel=1e-12, abs=1e-300)
            elif isinstance(p, Categorical) and not numeric:
                assert a[i] == p.index(config[name])
            else:  # Integer value or numeric choice, as a float
                assert a[i] == config[name]


@SETTINGS
@given(batches(ARRAY_SPACE.dim))
def test_round_trip_jax_equals_numpy(U):
    want = ARRAY_SPACE.round_trip(U)
    got = ARRAY_SPACE.round_trip(jnp.asarray(U))
    assert isinstance(got, jax.Array) and got.dtype == jnp.float64
    assert_round_trips_agree(ARRAY_SPACE, got, want)
    assert_round_trips_agree(ARRAY_SPACE, _round_trip_jit(jnp.asarray(U)), want)


@SETTINGS
@given(st.integers(-10**6, 10**6), st.integers(1, 10**6), st.booleans(), batches(4))
def test_round_trip_and_decode_arrays_jax_any_integer_bounds(low, width, log, U):
    if log:
        low = abs(low) + 1
    space = Space({"n": Integer(low, low + width, log=log), "x": Real(0.5, 2.0, log=True),
                   "c": Categorical([0.5, 7])})
    assert_round_trips_agree(space, space.round_trip(jnp.asarray(U)), space.round_trip(U))
    assert_arrays_match(space, space.decode_arrays(jnp.asarray(U)), space.active_arrays(jnp.asarray(U)),
                        space.decode_many(U))


def test_round_trip_jax_under_jit_vmap_and_batch_shapes():
    U = np.random.default_rng(0).uniform(-0.1, 1.1, (2, 3, ARRAY_SPACE.dim))
    want = ARRAY_SPACE.round_trip(U.reshape(-1, ARRAY_SPACE.dim)).reshape(U.shape)
    assert_round_trips_agree(ARRAY_SPACE, jax.jit(ARRAY_SPACE.round_trip)(jnp.asarray(U)), want)
    assert_round_trips_agree(ARRAY_SPACE, jax.jit(jax.vmap(jax.vmap(ARRAY_SPACE.round_trip)))(jnp.asarray(U)), want)
    assert_round_trips_agree(ARRAY_SPACE, ARRAY_SPACE.round_trip(jnp.asarray(U[0, 0])), want[0, 0])
    # idempotent, and float32 stays float32 (bin centres are far from the bin edges)
    r32 = _round_trip_jit(jnp.asarray(want[0], dtype=jnp.float32))
    assert r32.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(r32), want[0], rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match=rf"round_trip expects points of shape \(\.\.\., {ARRAY_SPACE.dim}\)"):
        ARRAY_SPACE.round_trip(jnp.zeros((2, 3)))


@SETTINGS
@given(batches(ARRAY_SPACE.dim))
def test_decode_arrays_agree_with_decode_many(U):
    configs = ARRAY_SPACE.decode_many(U)
    assert_arrays_match(ARRAY_SPACE, ARRAY_SPACE.decode_arrays(U), ARRAY_SPACE.active_arrays(U), configs)
    jU = jnp.asarray(U)
    arrays, active = ARRAY_SPACE.decode_arrays(jU), ARRAY_SPACE.active_arrays(jU)
    assert list(arrays) == list(active) == list(ARRAY_SPACE.names)  # definition order
    assert all(isinstance(a, jax.Array) for a in (*arrays.values(), *active.values()))
    assert_arrays_match(ARRAY_SPACE, arrays, active, configs)
    assert_arrays_match(ARRAY_SPACE, _decode_arrays_jit(jU), _active_arrays_jit(jU), configs)


def test_decode_arrays_feed_a_jitted_objective():
    """A researcher's objective ``fn(config)`` sees JAX scalars (vmap) or batches (plain jit)."""
    def fn(config):
        penalty = jnp.where(config["opt"] == 1, 1.0, 0.0)  # "sgd": index 1 of the choices
        return config["x"] ** 2 + jnp.log10(config["lr"]) + config["k"] * config["num"] + penalty

    U = np.random.default_rng(1).random((N_ROWS, ARRAY_SPACE.dim))
    want = [c["x"] ** 2 + math.log10(c["lr"]) + c["k"] * c["num"] + (c["opt"] == "sgd")
            for c in ARRAY_SPACE.decode_many(U)]
    one = jax.jit(jax.vmap(lambda u: fn(ARRAY_SPACE.decode_arrays(u))))(jnp.asarray(U))
    batch = jax.jit(lambda V: fn(ARRAY_SPACE.decode_arrays(V)))(jnp.asarray(U))
    np.testing.assert_allclose(np.asarray(one), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(batch), want, rtol=1e-12)
    scalars = ARRAY_SPACE.decode_arrays(jnp.asarray(U[0]))
    assert all(v.shape == () for v in scalars.values())
    assert all(bool(a) for a in ARRAY_SPACE.active_arrays(jnp.asarray(U[0])).values())
    # float32 points decode to float32 values (the index of a non-numeric choice stays int32)
    d32 = ARRAY_SPACE.decode_arrays(jnp.asarray(U, dtype=jnp.float32))
    assert d32["x"].dtype == d32["k"].dtype == d32["num"].dtype == jnp.float32
    assert d32["opt"].dtype == jnp.int32
    with pytest.raises(ValueError, match=r"decode_arrays expects points of shape"):
        ARRAY_SPACE.decode_arrays(jnp.zeros(3))
