r"""A real conditional problem: tuning a multilayer-perceptron classifier (Jenatton et al. 2017, §4.2).

"We optimize for the number of hidden layers in {0, 1, 2, 3, 4}, the number of units per layer in
{1, 2, ..., 30} (provided the corresponding layer is activated), the choice of the activation
function in {identity, logistic, tanh, relu}, which we constrain to be identical across all
layers, the amount of l2 regularization in [1e-6, 1e-1], the learning rate in [1e-5, 1e-1] of the
underlying Adam solver, the tolerance in [1e-5, 1e-2] of the solver (based on relative decrease),
and the type of data pre-processing, which can be unit l2-norm observation-wise normalization,
l_inf-norm feature-wise normalization, mean/standard-deviation feature-wise whitening or no
normalization at all." There is "one regularization parameter λ_k per number k of hidden
layer(s)", and the network is scikit-learn's ``MLPClassifier``, as in the paper.

The search space (:func:`mlp_space`, the shared topology of their Fig. 3, bottom):

* ``layers``: ``Integer(0, 4)``, the root decision (an integer keeps the order of depths for
  distance-based models; it has the 5 leaves of the paper's tree);
* ``units1 .. units4``: ``Integer(1, 30)``, ``units{j}`` active when ``layers >= j``;
* ``activation``: one of ``identity, logistic, tanh, relu``, active when ``layers >= 1`` (with no
  hidden layer the model is a logistic regression and has no activation);
* ``l2_0 .. l2_4``: ``Real(1e-6, 1e-1, log)``, ``l2_k`` active when ``layers == k``;
* ``learning_rate`` ``Real(1e-5, 1e-1, log)``, ``tolerance`` ``Real(1e-5, 1e-2, log)`` and
  ``normalization`` in ``none, l2_rows, maxabs_columns, standardize``, always active (shared).

The objective is the classification error on a held-out validation split. The paper used 45
LIBSVM data sets; jbo uses the data sets that ship with scikit-learn (no downloads):
``breast_cancer`` (binary, 569 x 30, the default: the paper's task is binary), ``wine`` (3 classes,
178 x 13), ``iris`` (3 classes, 150 x 4) and ``digits`` (10 classes, 1797 x 64). As in the paper
the split is a random 80 % - 20 % one and the training set is capped at 10^3 points (stratified,
seeded). The paper's 5-minute CPU limit (error 1.0 beyond it) becomes a cap on Adam's epochs,
``max_iter`` (scikit-learn's default, 200); a fit that fails numerically also scores 1.0.

``mlp_fast`` is the variant for tests: 128 training points and 40 epochs, well under a second
per evaluation.

Every evaluation is deterministic: the split, the subsample and the network's initialisation and
shuffling are all seeded by ``seed``. The optimum is unknown; ``optimum`` is 0.0, the lower bound
of an error rate, so that regret is the error itself.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np

from jbo.benchmarks.problem import ConditionalProblem, _fixed_dim
from jbo.spaces import Categorical, Integer, Real, Space

__all__ = ["DATASETS", "ACTIVATIONS", "NORMALIZATIONS", "MAX_LAYERS", "Split", "load_split",
           "mlp_space", "validation_error", "mlp_tuning", "mlp_tuning_fast", "PROBLEMS"]

#: Data sets shipped with scikit-learn: name -> loader name in ``sklearn.datasets``.
DATASETS = {
    "breast_cancer": "load_breast_cancer",
    "wine": "load_wine",
    "iris": "load_iris",
    "digits": "load_digits",
}
ACTIVATIONS = ("identity", "logistic", "tanh", "relu")
NORMALIZATIONS = ("none", "l2_rows", "maxabs_columns", "standardize")
MAX_LAYERS = 4


class Split(NamedTuple):
    """A fixed train / validation split (read-only arrays)."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_valid: np.ndarray
    y_valid: np.ndarray


def _positive_int(field: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{field} must be a positive int, got {value!r}")
    return int(value)


@functools.lru_cache(maxsize=16)
def load_split(dataset: str = "breast_cancer", seed: int = 0, max_train: int = 1000,
               max_valid: int = 10_000) -> Split:
    """The 80 % / 20 % stratified split of ``dataset``, with the training and validation sets
    capped at ``max_train`` and ``max_valid`` points (stratified subsamples), all seeded.

    Args:
      dataset: a key of :data:`DATASETS`.
      seed: seed of the split and of the subsamples.
      max_train, max_valid: caps (Jenatton et al.: 10^3 and 10^4).
    Returns:
      A :class:`Split`; its arrays are read-only, shared by every call with the same arguments.
    """
    from sklearn import datasets
    from sklearn.model_selection import train_test_split

    if dataset not in DATASETS:
        raise ValueError(f"dataset must be one of {sorted(DATASETS)}, got {dataset!r}")
    max_train = _positive_int("max_train", max_train)
    max_valid = _positive_int("max_valid", max_valid)
    x, y = getattr(datasets, DATASETS[dataset])(return_X_y=True)
    x_tr, x_va, y_tr, y_va = train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)
    parts = []
    for xs, ys, cap in ((x_tr, y_tr, max_train), (x_va, y_va, max_valid)):
        if len(ys) > cap:
            xs, _, ys, _ = train_test_split(xs, ys, train_size=cap, random_state=seed, stratify=ys)
        xs, ys = np.array(xs, dtype=np.float64), np.array(ys)
        xs.flags.writeable = ys.flags.writeable = False
        parts += [xs, ys]
    return Split(*parts)


def mlp_space() -> Space:
    """The conditional search space of Jenatton et al. §4.2 (see the module docstring)."""
    at_least = lambda j: {"layers": list(range(j, MAX_LAYERS + 1))}  # noqa: E731
    params = {"layers": Integer(0, MAX_LAYERS)}
    params.update({f"units{j}": Integer(1, 30, when=at_least(j)) for j in range(1, MAX_LAYERS + 1)})
    params["activation"] = Categorical(list(ACTIVATIONS), when=at_least(1))
    params.update({f"l2_{k}": Real(1e-6, 1e-1, log=True, when={"layers": [k]}) for k in range(MAX_LAYERS + 1)})
    params["learning_rate"] = Real(1e-5, 1e-1, log=True)
    params["tolerance"] = Real(1e-5, 1e-2, log=True)
    params["normalization"] = Categorical(list(NORMALIZATIONS))
    return Space(params)


def _normalizer(name: str):
    from sklearn.preprocessing import MaxAbsScaler, Normalizer, StandardScaler

    return {
        "none": None,
        "l2_rows": Normalizer(norm="l2"),  # each observation to unit l2 norm
        "maxabs_columns": MaxAbsScaler(),  # each feature to unit l_inf norm
        "standardize": StandardScaler(),  # each feature to zero mean, unit variance
    }[name]


def validation_error(config: Mapping, split: Split, max_iter: int = 200, seed: int = 0) -> float:
    """Validation classification error of ``MLPClassifier`` trained with Adam at ``config``.

    Args:
      config: a configuration of :func:`mlp_space` holding its active parameters (validated).
      split: the data (:func:`load_split`).
      max_iter: maximum Adam epochs (the stand-in for the paper's CPU-time limit).
      seed: ``random_state`` of the network (initialisation, shuffling).
    Returns:
      The error rate in [0, 1]; 1.0 when the fit fails numerically (the paper's failure value).
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    layers = int(config["layers"])
    x_train, x_valid = split.x_train, split.x_valid
    normalizer = _normalizer(config["normalization"])
    if normalizer is not None:
        normalizer.fit(x_train)
        x_train, x_valid = normalizer.transform(x_train), normalizer.transform(x_valid)
    model = MLPClassifier(
        hidden_layer_sizes=tuple(int(config[f"units{j}"]) for j in range(1, layers + 1)),
        activation=config["activation"] if layers else "identity",  # unused without hidden layers
        solver="adam",
        alpha=float(config[f"l2_{layers}"]),
        learning_rate_init=float(config["learning_rate"]),
        tol=float(config["tolerance"]),
        max_iter=max_iter,
        random_state=seed,
    )
    with warnings.catch_warnings():
        # Hitting max_iter is part of the problem, not news; overflow inside a diverging fit is
        # reported through the failure value below.
        warnings.simplefilter("ignore", ConvergenceWarning)
        with np.errstate(all="ignore"):
            try:
                model.fit(x_train, split.y_train)
            except ValueError as err:
                # scikit-learn's check that Adam kept the weights finite; other errors propagate
                if "non-finite" in str(err):
                    return 1.0
                raise
            predicted = model.predict(x_valid)
    return float(np.mean(predicted != split.y_valid))


def mlp_tuning(dim: int | None = None, *, dataset: str = "breast_cancer", max_iter: int = 200,
               max_train: int = 1000, max_valid: int = 10_000, seed: int = 0,
               name: str = "mlp") -> ConditionalProblem:
    """The MLP tuning problem (Jenatton et al. 2017, §4.2) on one scikit-learn data set.

    Args:
      dim: must be ``None`` or the number of parameters (14): the space is fixed.
      dataset: ``breast_cancer`` (default, binary), ``wine``, ``iris`` or ``digits``.
      max_iter: maximum Adam epochs per evaluation.
      max_train, max_valid: caps on the training and validation sets.
      seed: seed of the split and of the network.
      name: registry name.
    Returns:
      A :class:`~jbo.benchmarks.registry.ConditionalProblem` with ``optimum`` 0.0 (the lower bound
      of an error; the true optimum is unknown) and no ``best_config``.
    """
    max_iter = _positive_int("max_iter", max_iter)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    space = mlp_space()
    _fixed_dim(name, len(space.names), dim)
    split = load_split(dataset, int(seed), max_train, max_valid)

    def objective(config: dict) -> float:
        return validation_error(config, split, max_iter, int(seed))

    return ConditionalProblem(name, space, objective, 0.0, None)


def mlp_tuning_fast(dim: int | None = None, *, dataset: str = "breast_cancer", seed: int = 0) -> ConditionalProblem:
    """The fast variant for tests: 128 training points, 40 Adam epochs (under a second)."""
    return mlp_tuning(dim, dataset=dataset, max_iter=40, max_train=128, seed=seed, name="mlp_fast")


PROBLEMS: dict[str, Callable[..., ConditionalProblem]] = {"mlp": mlp_tuning, "mlp_fast": mlp_tuning_fast}
