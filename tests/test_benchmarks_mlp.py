"""Tests of the MLP tuning problem (Jenatton et al. 2017, §4.2) on scikit-learn's data sets."""

import time
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from jbo.benchmarks import mlp
from jbo.benchmarks.mlp import Split, load_split, mlp_space, mlp_tuning, mlp_tuning_fast, validation_error


def _config(layers, **overrides):
    config = {"layers": layers, "learning_rate": 1e-2, "tolerance": 1e-4, "normalization": "standardize",
              f"l2_{layers}": 1e-4}
    config.update({f"units{j}": 10 + j for j in range(1, layers + 1)})
    if layers:
        config["activation"] = "tanh"
    config.update(overrides)
    return config


# --------------------------------------------------------------------------------------------
# the space
# --------------------------------------------------------------------------------------------
def test_space_structure():
    space = mlp_space()
    assert len(space.names) == 14
    leaves = space.leaves()
    assert [dict(leaf)["layers"] for leaf in leaves] == [0, 1, 2, 3, 4]  # Jenatton's 5 paths
    for k in range(5):
        config = space.validate(_config(k))
        expected = {"layers", "learning_rate", "tolerance", "normalization", f"l2_{k}"}
        expected |= {f"units{j}" for j in range(1, k + 1)} | ({"activation"} if k else set())
        assert set(config) == expected
        # the relevance mask switches on exactly the active columns
        delta = np.asarray(space.relevance(space.encode(config)))
        for name, cols in space.columns.items():
            assert np.all(delta[cols] == (1.0 if name in expected else 0.0)), name


def test_space_rejects_bad_configurations():
    space = mlp_space()
    with pytest.raises(ValueError, match="units3"):
        space.validate(_config(2, units3=5))  # a stray inactive parameter
    config = _config(3)
    del config["units2"]
    with pytest.raises(ValueError, match="units2"):
        space.validate(config)  # a missing active one
    with pytest.raises(ValueError, match="units1"):
        space.validate(_config(1, units1=31))  # out of {1, ..., 30}
    with pytest.raises(ValueError, match="activation"):
        space.validate(_config(1, activation="softplus"))
    with pytest.raises(ValueError, match="learning_rate"):
        space.validate(_config(0, learning_rate=0.5))  # above 1e-1


def test_space_bounds_follow_the_paper():
    space = mlp_space()
    p = space.params
    assert (p["units4"].low, p["units4"].high) == (1, 30)
    assert (p["l2_0"].low, p["l2_0"].high) == (1e-6, 1e-1)
    assert (p["learning_rate"].low, p["learning_rate"].high) == (1e-5, 1e-1)
    assert (p["tolerance"].low, p["tolerance"].high) == (1e-5, 1e-2)
    assert tuple(p["activation"].choices) == mlp.ACTIVATIONS
    assert len(p["normalization"].choices) == 4


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dataset,n,classes", [("breast_cancer", 569, 2), ("wine", 178, 3), ("iris", 150, 3),
                                               ("digits", 1797, 10)])
def test_splits(dataset, n, classes):
    split = load_split(dataset, seed=0)
    n_valid = len(split.y_valid)
    assert n_valid == int(np.ceil(0.2 * n))
    assert len(split.y_train) == min(n - n_valid, 1000)  # Jenatton's cap of 10^3 training points
    assert set(np.unique(split.y_train)) == set(range(classes))
    assert not split.x_train.flags.writeable
    small = load_split(dataset, seed=0, max_train=60, max_valid=20)
    assert (len(small.y_train), len(small.y_valid)) == (60, 20)
    other = load_split(dataset, seed=1)
    assert not np.array_equal(other.y_valid, split.y_valid) or not np.array_equal(other.x_valid, split.x_valid)


def test_invalid_arguments_name_the_field():
    with pytest.raises(ValueError, match="dataset"):
        mlp_tuning(dataset="mnist")
    with pytest.raises(ValueError, match="max_iter"):
        mlp_tuning(max_iter=0)
    with pytest.raises(ValueError, match="max_train"):
        load_split("iris", 0, max_train=0)
    with pytest.raises(ValueError, match="seed"):
        mlp_tuning_fast(seed=-1)
    with pytest.raises(ValueError, match="fixed-dimension"):
        mlp_tuning(dim=3)


# --------------------------------------------------------------------------------------------
# evaluations
# --------------------------------------------------------------------------------------------
def test_fast_variant_is_finite_deterministic_and_fast():
    problem = mlp_tuning_fast()
    assert problem.name == "mlp_fast" and problem.optimum == 0.0 and problem.best_config is None
    configs = [_config(k) for k in range(5)]
    configs.append(_config(4, units1=30, units2=30, units3=30, units4=30, activation="relu", tolerance=1e-5))
    configs.append(_config(2, normalization="l2_rows", activation="logistic"))
    configs.append(_config(1, normalization="maxabs_columns", activation="identity"))
    configs.append(_config(0, normalization="none"))
    values, seconds = [], []
    for config in configs:
        start = time.process_time()
        values.append(problem.evaluate(config))
        seconds.append(time.process_time() - start)
    assert all(0.0 <= v <= 1.0 for v in values)
    assert max(seconds) < 1.0, seconds
    # the same values again, from a freshly built problem
    again = [mlp_tuning_fast().evaluate(c) for c in configs]
    assert again == values
    # and the configurations matter
    assert len(set(values)) > 2


def test_matches_a_direct_scikit_learn_fit():
    """The objective is the validation error of the MLPClassifier the configuration describes:
    λ of the network's own depth, units in layer order, the shared solver settings."""
    split = load_split("wine", seed=3, max_train=100)
    config = _config(2, units1=7, units2=4, activation="relu", l2_2=3e-3, learning_rate=5e-3, tolerance=1e-4,
                     normalization="standardize")
    scaler = StandardScaler().fit(split.x_train)
    model = MLPClassifier((7, 4), activation="relu", solver="adam", alpha=3e-3, learning_rate_init=5e-3,
                          tol=1e-4, max_iter=30, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(scaler.transform(split.x_train), split.y_train)
    expected = float(np.mean(model.predict(scaler.transform(split.x_valid)) != split.y_valid))
    problem = mlp_tuning(dataset="wine", max_iter=30, max_train=100, seed=3)
    assert problem.evaluate(config) == expected
    assert validation_error(mlp_space().validate(config), split, max_iter=30, seed=3) == expected


def test_every_dataset_evaluates():
    for dataset in mlp.DATASETS:
        problem = mlp_tuning_fast(dataset=dataset)
        value = problem.evaluate(_config(1))
        assert 0.0 <= value < 0.8  # better than chance-level failure on every data set


def test_numerical_failure_scores_one():
    """A fit whose weights become non-finite scores the paper's failure value 1.0."""
    split = load_split("breast_cancer", 0, max_train=128)
    huge = Split(np.full_like(split.x_train, 1e307), split.y_train, split.x_valid, split.y_valid)
    config = mlp_space().validate(_config(2, activation="identity", learning_rate=0.1, normalization="none"))
    assert validation_error(config, huge, max_iter=40) == 1.0
    assert validation_error(config, split, max_iter=40) < 1.0


def test_registered():
    from jbo.benchmarks import ConditionalProblem, get_problem, list_problems

    for name in ("mlp", "mlp_fast"):
        assert name in list_problems()
        problem = get_problem(name)
        assert isinstance(problem, ConditionalProblem) and problem.name == name
        assert problem.dim == 14 and problem.n_leaves == 5
    assert get_problem("mlp", dataset="digits", max_iter=5).evaluate(_config(0)) <= 1.0
