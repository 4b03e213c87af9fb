"""Peer libraries (Optuna's GPSampler, BoTorch) timed and scored beside jbo.

The peers are benchmark-only: install them with
``pip install -r experiments/requirements-peers.txt`` (torch first, see that file);
they are never dependencies of jbo, and this module does not import jbo.
torch / optuna / botorch are imported lazily inside the functions, so importing
this module (e.g. for the objective functions) costs nothing.

Objectives (numpy, minimisation, standard definitions):

* ``branin``    x1 in [-5, 10], x2 in [0, 15]; optimum 0.397887
* ``hartmann6`` [0, 1]^6; optimum -3.322368

Functions:

* ``time_optuna_gp(n_obs, seed, repeats)`` / ``time_botorch(n_obs, seed, repeats)``:
  seconds per suggestion given ``n_obs`` random Hartmann6 observations.
* ``run_optuna_gp(problem, budget, seed)`` / ``run_botorch(problem, budget, seed)``:
  full minimisation runs, returning the objective value of every evaluation in
  order (``best_so_far`` turns that into a trace).

Command line (from the repository root)::

    python experiments/peers.py time --n 200 800
    python experiments/peers.py run --problem branin --budget 50 --seeds 0 1

Threads: run as a script, OPENBLAS/OMP/MKL threads default to 1 (set before
numpy is imported) and torch uses ``--threads`` (default 1). Imported as a
module, nothing global is changed except torch's thread count when the caller
passes ``torch_threads``; note that Optuna's GPSampler itself pins torch to one
thread while it fits and optimises.
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # only when run as a script: must precede numpy's import
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse
import logging
import statistics
import time
import warnings
from collections.abc import Callable, Sequence

import numpy as np

# --------------------------------------------------------------------------
# Objectives (numpy, minimisation)
# --------------------------------------------------------------------------

BRANIN_OPTIMUM = 0.397887
HARTMANN6_OPTIMUM = -3.322368

_H6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_H6_A = np.array(
    [
        [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
        [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
        [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
        [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
    ]
)
_H6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ],
    dtype=float,
)


def branin(x: np.ndarray) -> np.ndarray | float:
    """Branin-Hoo; ``x`` has shape (2,) or (n, 2). Minimum 0.397887."""
    x = np.asarray(x, dtype=float)
    x1, x2 = x[..., 0], x[..., 1]
    a, b, c = 1.0, 5.1 / (4.0 * np.pi**2), 5.0 / np.pi
    r, s, t = 6.0, 10.0, 1.0 / (8.0 * np.pi)
    y = a * (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1.0 - t) * np.cos(x1) + s
    return float(y) if y.ndim == 0 else y


def hartmann6(x: np.ndarray) -> np.ndarray | float:
    """Hartmann 6-D on [0, 1]^6; ``x`` has shape (6,) or (n, 6). Minimum -3.322368."""
    x = np.asarray(x, dtype=float)
    inner = np.sum(_H6_A * (x[..., None, :] - _H6_P) ** 2, axis=-1)
    y = -np.sum(_H6_ALPHA * np.exp(-inner), axis=-1)
    return float(y) if y.ndim == 0 else y


# name -> (function, bounds of shape (d, 2), known optimum)
PROBLEMS: dict[str, tuple[Callable[[np.ndarray], np.ndarray | float], np.ndarray, float]] = {
    "branin": (branin, np.array([[-5.0, 10.0], [0.0, 15.0]]), BRANIN_OPTIMUM),
    "hartmann6": (hartmann6, np.array([[0.0, 1.0]] * 6), HARTMANN6_OPTIMUM),
}

PEERS = ("optuna-gp", "botorch-logei")


def _problem(name: str):
    try:
        return PROBLEMS[name]
    except KeyError:
        raise ValueError(f"unknown problem {name!r}; choose from {sorted(PROBLEMS)}") from None


def best_so_far(values: Sequence[float]) -> np.ndarray:
    """Running minimum of an evaluation sequence."""
    return np.minimum.accumulate(np.asarray(values, dtype=float))


def _set_torch_threads(n: int | None) -> None:
    if n is not None:
        import torch

        torch.set_num_threads(int(n))


# --------------------------------------------------------------------------
# Optuna GPSampler
# --------------------------------------------------------------------------


def _quiet_optuna():
    """Import optuna with logging at WARNING and experimental-feature warnings off."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    return optuna


def _optuna_space(optuna, bounds: np.ndarray) -> dict:
    return {
        f"x{i}": optuna.distributions.FloatDistribution(float(lo), float(hi))
        for i, (lo, hi) in enumerate(bounds)
    }


def _optuna_gp_preload() -> None:
    """Import the GPSampler's lazily-imported internals so no timing pays for them."""
    import torch  # noqa: F401
    import optuna._gp.acqf  # noqa: F401
    import optuna._gp.gp  # noqa: F401
    import optuna._gp.optim_mixed  # noqa: F401
    import optuna._gp.prior  # noqa: F401
    import optuna._gp.search_space  # noqa: F401


def time_optuna_gp(
    n_obs: int,
    seed: int = 0,
    repeats: int = 3,
    torch_threads: int | None = None,
    warmup: bool = True,
) -> dict:
    """Seconds per suggestion of ``optuna.samplers.GPSampler`` on Hartmann6.

    ``n_obs`` uniform random (seeded) completed trials are added with
    ``study.add_trials``; then ``repeats`` consecutive suggestions are timed, each
    ``study.ask(space)`` + objective + ``study.tell``. The told trials stay in the
    study, so repeat k sees ``n_obs + k`` observations, and from the second repeat
    on the sampler warm-starts its kernel fit from its cache (as it does in a
    normal run). With ``warmup`` (default) one untimed suggestion is first made
    in a separate 12-trial study, so one-off process costs (first torch/scipy
    calls: ~1-2 s on CPU) are not timed. Returns
    ``{"peer", "n", "seconds_per_suggestion" (median), "all", "version"}``.
    """
    optuna = _quiet_optuna()
    _set_torch_threads(torch_threads)
    _optuna_gp_preload()
    fn, bounds, _ = _problem("hartmann6")
    space = _optuna_space(optuna, bounds)

    def make_study(n: int, rng_seed: int):
        rng = np.random.default_rng(rng_seed)
        X = rng.uniform(bounds[:, 0], bounds[:, 1], size=(n, len(bounds)))
        Y = fn(X)
        study = optuna.create_study(
            direction="minimize", sampler=optuna.samplers.GPSampler(seed=rng_seed)
        )
        study.add_trials(
            [
                optuna.trial.create_trial(
                    params={f"x{i}": float(v) for i, v in enumerate(x)},
                    distributions=space,
                    value=float(y),
                )
                for x, y in zip(X, Y)
            ]
        )
        return study

    if warmup:
        w = make_study(12, seed + 1)
        t = w.ask(space)
        w.tell(t, float(fn(np.array([t.params[f"x{i}"] for i in range(len(bounds))]))))

    study = make_study(n_obs, seed)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        trial = study.ask(space)  # fixed distributions: all sampling happens inside ask()
        x = np.array([trial.params[f"x{i}"] for i in range(len(bounds))])
        study.tell(trial, float(fn(x)))
        times.append(time.perf_counter() - t0)
    return {
        "peer": "optuna-gp",
        "n": n_obs,
        "seconds_per_suggestion": statistics.median(times),
        "all": times,
        "version": optuna.__version__,
    }


def run_optuna_gp(problem: str, budget: int, seed: int) -> list[float]:
    """Minimise ``problem`` with ``GPSampler(seed=seed)`` and its defaults.

    The sampler does its own initial design (``n_startup_trials=10`` random
    trials from a seeded ``RandomSampler``). Returns the value of each of the
    ``budget`` evaluations, in order.
    """
    optuna = _quiet_optuna()
    fn, bounds, _ = _problem(problem)

    def objective(trial) -> float:
        x = np.array(
            [trial.suggest_float(f"x{i}", float(lo), float(hi)) for i, (lo, hi) in enumerate(bounds)]
        )
        return float(fn(x))

    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.GPSampler(seed=seed))
    study.optimize(objective, n_trials=budget)
    return [float(t.value) for t in study.trials]


# --------------------------------------------------------------------------
# BoTorch: SingleTaskGP + LogExpectedImprovement
# --------------------------------------------------------------------------


def _botorch_preload() -> None:
    """Import what ``_botorch_suggest`` imports, so no timing pays for it."""
    import botorch.acquisition  # noqa: F401
    import botorch.fit  # noqa: F401
    import botorch.models  # noqa: F401
    import botorch.optim  # noqa: F401
    import gpytorch.mlls  # noqa: F401


def _botorch_suggest(train_X, train_Y):
    """One BoTorch suggestion on the unit cube (maximisation of ``train_Y``).

    SingleTaskGP with its default ``Standardize`` outcome transform, fitted with
    ``fit_gpytorch_mll(ExactMarginalLogLikelihood)``; ``LogExpectedImprovement``
    with ``best_f = train_Y.max()``, optimised by ``optimize_acqf`` (q=1,
    num_restarts=10, raw_samples=512). Returns a (1, d) tensor.
    """
    import torch
    from botorch.acquisition import LogExpectedImprovement
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.optim import optimize_acqf
    from gpytorch.mlls import ExactMarginalLogLikelihood

    d = train_X.shape[-1]
    model = SingleTaskGP(train_X, train_Y)
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    fit_gpytorch_mll(mll)
    acqf = LogExpectedImprovement(model, best_f=train_Y.max())
    bounds = torch.stack([torch.zeros(d, dtype=train_X.dtype), torch.ones(d, dtype=train_X.dtype)])
    cand, _ = optimize_acqf(acqf, bounds=bounds, q=1, num_restarts=10, raw_samples=512)
    return cand.detach()


def time_botorch(
    n_obs: int,
    seed: int = 0,
    repeats: int = 3,
    torch_threads: int | None = None,
    warmup: bool = True,
) -> dict:
    """Seconds per suggestion of BoTorch SingleTaskGP + LogEI on Hartmann6.

    ``n_obs`` uniform random (seeded) points, double precision, outcomes negated
    (BoTorch maximises). Each timed suggestion = build model + fit hyperparameters
    + build LogEI + ``optimize_acqf``; the suggested point is evaluated and added
    to the data between repeats (untimed). With ``warmup`` (default) one
    untimed suggestion on 12 other random points is made first, so one-off
    process costs are not timed. Returns the same shape as ``time_optuna_gp``
    with peer ``"botorch-logei"``.
    """
    import botorch
    import torch

    _botorch_preload()
    _set_torch_threads(torch_threads)
    fn, bounds, _ = _problem("hartmann6")  # already the unit cube
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n_obs, len(bounds)))
    train_X = torch.tensor(X, dtype=torch.float64)
    train_Y = -torch.tensor(fn(X), dtype=torch.float64).unsqueeze(-1)

    times = []
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        if warmup:
            Xw = np.random.default_rng(seed + 1).uniform(size=(12, len(bounds)))
            _botorch_suggest(
                torch.tensor(Xw, dtype=torch.float64),
                -torch.tensor(fn(Xw), dtype=torch.float64).unsqueeze(-1),
            )
        for _ in range(repeats):
            t0 = time.perf_counter()
            cand = _botorch_suggest(train_X, train_Y)
            times.append(time.perf_counter() - t0)
            y = -float(fn(cand.numpy()[0]))
            train_X = torch.cat([train_X, cand])
            train_Y = torch.cat([train_Y, torch.tensor([[y]], dtype=torch.float64)])
    return {
        "peer": "botorch-logei",
        "n": n_obs,
        "seconds_per_suggestion": statistics.median(times),
        "all": times,
        "version": botorch.__version__,
    }


def run_botorch(problem: str, budget: int, seed: int, n_init: int | None = None) -> list[float]:
    """Minimise ``problem`` with BoTorch SingleTaskGP + LogEI, one point at a time.

    Initial design: ``n_init`` scrambled Sobol points (seeded), by default
    ``max(5, 2 * d)``; this follows BoTorch's tutorials, which start the BO
    loop from a small quasi-random initial design of about 2*d points. Inputs are mapped to the unit cube, outcomes negated and
    standardized (SingleTaskGP's default transform). Returns the value of each of
    the ``budget`` evaluations, in order (the initial design first).
    """
    import torch

    fn, bounds, _ = _problem(problem)
    d = len(bounds)
    lo, span = bounds[:, 0], bounds[:, 1] - bounds[:, 0]
    n_init = max(5, 2 * d) if n_init is None else int(n_init)
    n_init = min(n_init, budget)

    def evaluate(u: np.ndarray) -> np.ndarray:
        return np.atleast_1d(fn(lo + span * u))

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        sobol = torch.quasirandom.SobolEngine(dimension=d, scramble=True, seed=seed)
        train_X = sobol.draw(n_init, dtype=torch.float64)
        values = [float(v) for v in evaluate(train_X.numpy())]
        train_Y = -torch.tensor(values, dtype=torch.float64).unsqueeze(-1)
        while len(values) < budget:
            cand = _botorch_suggest(train_X, train_Y)
            y = float(evaluate(cand.numpy()[0])[0])
            values.append(y)
            train_X = torch.cat([train_X, cand])
            train_Y = torch.cat([train_Y, torch.tensor([[-y]], dtype=torch.float64)])
    return values


# --------------------------------------------------------------------------
# Dispatch and CLI
# --------------------------------------------------------------------------

TIMERS: dict[str, Callable[..., dict]] = {"optuna-gp": time_optuna_gp, "botorch-logei": time_botorch}
RUNNERS: dict[str, Callable[..., list[float]]] = {"optuna-gp": run_optuna_gp, "botorch-logei": run_botorch}


def _cmd_time(args) -> None:
    print(f"{'peer':<14} {'n':>6} {'s/suggestion':>13}  all")
    for n in args.n:
        for peer in args.peers:
            r = TIMERS[peer](n, seed=args.seed, repeats=args.repeats)
            all_s = " ".join(f"{t:.3f}" for t in r["all"])
            print(f"{r['peer']:<14} {r['n']:>6} {r['seconds_per_suggestion']:>13.3f}  [{all_s}]", flush=True)


def _cmd_run(args) -> None:
    _, _, opt = _problem(args.problem)
    marks = sorted({m for m in range(10, args.budget, 10)} | {args.budget})
    head = " ".join(f"{'@' + str(m):>9}" for m in marks)
    print(f"{args.problem}: best-so-far (known optimum {opt})")
    print(f"{'peer':<14} {'seed':>4} {head} {'seconds':>8}")
    for peer in args.peers:
        for seed in args.seeds:
            t0 = time.perf_counter()
            vals = RUNNERS[peer](args.problem, args.budget, seed)
            dt = time.perf_counter() - t0
            bsf = best_so_far(vals)
            cells = " ".join(f"{bsf[m - 1]:>9.5f}" for m in marks)
            print(f"{peer:<14} {seed:>4} {cells} {dt:>8.1f}", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    sub = p.add_subparsers(dest="cmd", required=True)

    pt = sub.add_parser("time", help="seconds per suggestion on Hartmann6 with N observations")
    pt.add_argument("--n", type=int, nargs="+", default=[200])
    pt.add_argument("--seed", type=int, default=0)
    pt.add_argument("--repeats", type=int, default=3)
    pt.add_argument("--peers", nargs="+", choices=PEERS, default=list(PEERS))
    pt.set_defaults(func=_cmd_time)

    pr = sub.add_parser("run", help="full minimisation runs; prints best-so-far values")
    pr.add_argument("--problem", choices=sorted(PROBLEMS), default="branin")
    pr.add_argument("--budget", type=int, default=50)
    pr.add_argument("--seeds", type=int, nargs="+", default=[0])
    pr.add_argument("--peers", nargs="+", choices=PEERS, default=list(PEERS))
    pr.set_defaults(func=_cmd_run)

    args = p.parse_args(argv)
    logging.getLogger("optuna").setLevel(logging.WARNING)
    _set_torch_threads(args.threads)
    args.func(args)


if __name__ == "__main__":
    main()
