"""Peer libraries (Optuna's GPSampler, BoTorch SingleTaskGP + LogEI) scored and timed beside jbo.

Benchmark-only (``experiments/requirements-peers.txt``). Imports neither jbo nor, until a function needs them, the
peers, so that the peers' own interpreter can run it (``bench_compiled.py --peers-python``). BoTorch's quality runner
is retired (no stored row ran it); its timing (:func:`time_botorch`) remains.
"""

from __future__ import annotations

import importlib
import statistics
import time
import warnings

import numpy as np

_H6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_H6_A = np.array([[10.0, 3.0, 17.0, 3.5, 1.7, 8.0], [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
                  [3.0, 3.5, 1.7, 10.0, 17.0, 8.0], [17.0, 8.0, 0.05, 10.0, 0.1, 14.0]])
_H6_P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                         [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]], dtype=float)


def branin(x):
    """Branin-Hoo on [-5, 10] x [0, 15]; ``x`` of shape (2,) or (n, 2). Minimum 0.397887."""
    x1, x2 = np.asarray(x, float)[..., 0], np.asarray(x, float)[..., 1]
    y = (x2 - 5.1 / (4 * np.pi**2) * x1**2 + 5 / np.pi * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * np.pi)) * np.cos(x1) + 10
    return float(y) if y.ndim == 0 else y


def hartmann6(x):
    """Hartmann 6-D on [0, 1]^6; ``x`` of shape (6,) or (n, 6). Minimum -3.322368."""
    inner = np.sum(_H6_A * (np.asarray(x, float)[..., None, :] - _H6_P) ** 2, axis=-1)
    y = -np.sum(_H6_ALPHA * np.exp(-inner), axis=-1)
    return float(y) if y.ndim == 0 else y


# name -> (function, bounds of shape (d, 2), known optimum)
PROBLEMS = {"branin": (branin, np.array([[-5.0, 10.0], [0.0, 15.0]]), 0.397887),
            "hartmann6": (hartmann6, np.array([[0.0, 1.0]] * 6), -3.322368)}


def quiet_optuna():
    """Optuna, its logging at WARNING and its experimental-feature warnings off."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    return optuna


def run_optuna_gp(problem: str, budget: int, seed: int) -> list[float]:
    """Every value, in order, of ``GPSampler(seed=seed)`` with its defaults minimising ``problem``."""
    optuna, (fn, bounds, _) = quiet_optuna(), PROBLEMS[problem]
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.GPSampler(seed=seed))
    study.optimize(lambda t: float(fn([t.suggest_float(f"x{i}", float(lo), float(hi))
                                       for i, (lo, hi) in enumerate(bounds)])), n_trials=budget)
    return [float(t.value) for t in study.trials]


def time_optuna_gp(n_obs: int, seed: int = 0, repeats: int = 3) -> dict:
    """Seconds per suggestion (``study.ask`` + objective + ``study.tell``) of GPSampler on Hartmann6 after ``n_obs``
    seeded random trials, ``repeats`` in a row, after one untimed suggestion in another study (one-off costs)."""
    optuna, fn = quiet_optuna(), hartmann6
    for lazy in ("acqf", "gp", "optim_mixed", "prior", "search_space"):  # GPSampler's lazy imports, untimed
        importlib.import_module(f"optuna._gp.{lazy}")
    space = {f"x{i}": optuna.distributions.FloatDistribution(0.0, 1.0) for i in range(6)}

    def study_of(n: int, rng_seed: int):
        study = optuna.create_study(direction="minimize", sampler=optuna.samplers.GPSampler(seed=rng_seed))
        x = np.random.default_rng(rng_seed).uniform(size=(n, 6))
        study.add_trials([optuna.trial.create_trial(params={f"x{i}": float(v) for i, v in enumerate(row)},
                                                    distributions=space, value=float(y)) for row, y in zip(x, fn(x))])
        return study

    def step(study) -> float:
        start = time.perf_counter()
        trial = study.ask(space)  # fixed distributions: all sampling happens inside ask()
        study.tell(trial, float(fn([trial.params[f"x{i}"] for i in range(6)])))
        return time.perf_counter() - start

    step(study_of(12, seed + 1))
    study = study_of(n_obs, seed)
    times = [step(study) for _ in range(repeats)]
    return {"peer": "optuna-gp", "n": n_obs, "seconds_per_suggestion": statistics.median(times), "all": times,
            "version": optuna.__version__}


def _botorch_suggest(train_x, train_y):
    """One suggestion on the unit cube maximising ``train_y``: SingleTaskGP fitted by ``fit_gpytorch_mll``, LogEI,
    ``optimize_acqf(q=1, num_restarts=10, raw_samples=512)``."""
    import torch
    from botorch.acquisition import LogExpectedImprovement
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.optim import optimize_acqf
    from gpytorch.mlls import ExactMarginalLogLikelihood

    model = SingleTaskGP(train_x, train_y)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    bounds = torch.stack([torch.zeros(train_x.shape[-1]), torch.ones(train_x.shape[-1])]).to(train_x)
    return optimize_acqf(LogExpectedImprovement(model, best_f=train_y.max()), bounds=bounds, q=1, num_restarts=10,
                         raw_samples=512)[0].detach()


def _botorch_loop(fn, x, budget: int, seed: int):
    """Suggestions from the points ``x`` of the unit cube until ``budget`` evaluations of ``fn`` (minimised):
    ``(values, seconds of each suggestion)``."""
    import torch

    values, seconds = [float(v) for v in np.atleast_1d(fn(x))], []
    train_x = torch.tensor(x, dtype=torch.float64)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        while len(values) < budget:
            start = time.perf_counter()
            candidate = _botorch_suggest(train_x, -torch.tensor(values, dtype=torch.float64).unsqueeze(-1))
            seconds.append(time.perf_counter() - start)
            values.append(float(np.atleast_1d(fn(candidate.numpy()[0]))[0]))
            train_x = torch.cat([train_x, candidate])
    return values, seconds


def time_botorch(n_obs: int, seed: int = 0, repeats: int = 3) -> dict:
    """:func:`time_optuna_gp` for BoTorch SingleTaskGP + LogEI (model, fit, LogEI, ``optimize_acqf``), each
    suggestion evaluated and added before the next."""
    import botorch
    import botorch.acquisition, botorch.fit, botorch.models, botorch.optim, gpytorch.mlls  # noqa: F401, E401 (untimed)

    _botorch_loop(hartmann6, np.random.default_rng(seed + 1).uniform(size=(12, 6)), 13, seed)
    _, times = _botorch_loop(hartmann6, np.random.default_rng(seed).uniform(size=(n_obs, 6)), n_obs + repeats, seed)
    return {"peer": "botorch-logei", "n": n_obs, "seconds_per_suggestion": statistics.median(times), "all": times,
            "version": botorch.__version__}
