"""jbo inside Optuna: ``JboSampler`` against Optuna's GPSampler and TPESampler, and against ``jbo.minimize``.

Parts (each writes the ``optuna_sampler`` section of BENCHMARKS.md from experiments/results/optuna_sampler.json):

* ``quality``: every sampler inside an Optuna study with its defaults, seeds 0..S-1 (each sampler's
  ``seed``), on
  - ``hartmann6``: six floats on [0, 1], 100 trials (``jbo.minimize`` with the same model beside it);
  - ``svc-digits``: scikit-learn's ``SVC`` on its bundled digits data, 1 - mean 3-fold accuracy over
    C (log), gamma (log), kernel (categorical), degree (int), 40 trials.
  Per run: every trial's value and the seconds per trial spent outside the objective (the sampler and
  Optuna's bookkeeping).
* ``overhead``: the steady cost of a trial through ``JboSampler`` (``study.ask``, the suggestions,
  ``study.tell``) against jbo's own ``ask`` + ``tell`` at the same number of observations (Hartmann6,
  from 49 random observations on, both in one padded size, interleaved; the first three suggestions of each
  compile and are left out).

    python experiments/optuna_sampler.py quality --problems hartmann6 --seeds 30
    python experiments/optuna_sampler.py quality --problems svc-digits --seeds 10
    python experiments/optuna_sampler.py overhead --rounds 15

GPSampler needs torch (``pip install -r experiments/requirements-peers.txt``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import peers  # noqa: E402

_common.setup()

import numpy as np  # noqa: E402
import optuna  # noqa: E402

import jbo  # noqa: E402
from jbo.integrations.optuna import JboSampler  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)
RESULTS = os.path.join(_common.RESULTS, "optuna_sampler.json")
BUDGETS = {"hartmann6": 100, "svc-digits": 40}
VARIANTS = ("jbo-sampler", "jbo-minimize", "gpsampler", "tpe")
OPTIMA = {"hartmann6": -3.322368}


# -- objectives, as an Optuna user writes them ---------------------------------------------------------------
def hartmann6(x: np.ndarray) -> float:
    return float(peers.hartmann6(np.asarray(x, float)))


# Each objective is split in two, the suggestions and the evaluation, so that a trial's time outside the
# evaluation can be measured: Optuna samples relative parameters at the first suggest call, inside the objective.
def hartmann6_parameters(trial) -> dict:
    return {"x": np.array([trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(6)])}


def svc_parameters(trial) -> dict:
    return {"C": trial.suggest_float("C", 1e-3, 1e3, log=True), "gamma": trial.suggest_float("gamma", 1e-5, 1e1, log=True),
            "kernel": trial.suggest_categorical("kernel", ["rbf", "poly", "sigmoid"]),
            "degree": trial.suggest_int("degree", 2, 5)}


_DIGITS = None


def svc_error(params: dict) -> float:
    """1 - mean 3-fold accuracy of an SVC on scikit-learn's digits (scaled to [0, 1])."""
    global _DIGITS
    from sklearn.datasets import load_digits
    from sklearn.model_selection import cross_val_score
    from sklearn.svm import SVC

    if _DIGITS is None:
        x, y = load_digits(return_X_y=True)
        _DIGITS = x / 16.0, y
    return float(1.0 - cross_val_score(SVC(**params, max_iter=20000), *_DIGITS, cv=3).mean())


OBJECTIVES = {"hartmann6": (hartmann6_parameters, lambda p: hartmann6(p["x"])), "svc-digits": (svc_parameters, svc_error)}


def sampler(variant: str, seed: int):
    if variant == "jbo-sampler":
        return JboSampler("gp", seed=seed)
    if variant == "gpsampler":
        return optuna.samplers.GPSampler(seed=seed)
    if variant == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    raise ValueError(variant)


def run(problem: str, variant: str, seed: int) -> dict:
    budget = BUDGETS[problem]
    start = time.perf_counter()
    if variant == "jbo-minimize":
        if problem != "hartmann6":
            raise ValueError("jbo-minimize runs on hartmann6 only")
        space = jbo.Space({f"x{i}": jbo.Real(0.0, 1.0) for i in range(6)})
        result = jbo.minimize(lambda c: hartmann6(np.array([c[f"x{i}"] for i in range(6)])), space, budget=budget,
                              model="gp", seed=seed, progress=False)
        return {"values": [float(v) for v in result.values], "seconds": time.perf_counter() - start}
    objective_seconds = []

    suggest, evaluate = OBJECTIVES[problem]

    def timed(trial):
        params = suggest(trial)
        t = time.perf_counter()
        try:
            return evaluate(params)
        finally:
            objective_seconds.append(time.perf_counter() - t)

    study = optuna.create_study(sampler=sampler(variant, seed))
    trial_seconds = []
    for _ in range(budget):
        t = time.perf_counter()
        study.optimize(timed, n_trials=1)
        trial_seconds.append(time.perf_counter() - t - objective_seconds[-1])
    return {"values": [float(t.value) for t in study.trials], "seconds": time.perf_counter() - start,
            "trial_seconds": trial_seconds}


# -- overhead ---------------------------------------------------------------------------------------------
def overhead(rounds: int, start_n: int = 49) -> dict:
    """Seconds per steady trial: JboSampler (Optuna's ask/tell around it) and jbo's ask + tell, interleaved."""
    space = {f"x{i}": optuna.distributions.FloatDistribution(0.0, 1.0) for i in range(6)}
    jbo_space = jbo.Space({name: jbo.Real(0.0, 1.0) for name in space})
    points = np.random.default_rng(0).random((start_n, 6))
    opt = jbo.Optimizer(jbo_space, model="gp", seed=0)
    study = optuna.create_study(sampler=JboSampler("gp", seed=0))
    for x in points:
        config = {f"x{i}": float(v) for i, v in enumerate(x)}
        opt.tell(config, hartmann6(x))
        study.add_trial(optuna.trial.create_trial(params=config, distributions=space, value=hartmann6(x)))
    times = {"jbo-ask": [], "jbo-sampler": []}
    for _ in range(rounds):
        t = time.perf_counter()
        config = opt.ask()
        times["jbo-ask"].append(time.perf_counter() - t)
        opt.tell(config, hartmann6(np.array([config[f"x{i}"] for i in range(6)])))
        t = time.perf_counter()
        trial = study.ask()
        x = np.array([trial.suggest_float(name, 0.0, 1.0) for name in space])
        study.tell(trial, hartmann6(x))
        times["jbo-sampler"].append(time.perf_counter() - t)
    steady = {k: statistics.median(v[3:]) for k, v in times.items()}
    return {"times": times, "steady": steady, "ratio": steady["jbo-sampler"] / steady["jbo-ask"],
            "n": [start_n, start_n + rounds]}


# -- report -----------------------------------------------------------------------------------------------
def _best(values) -> float:
    return float(np.nanmin(np.asarray(values, float)))


def report(results: dict) -> str:
    lines = [_common.header(), ""]
    for problem in BUDGETS:
        runs = results.get(problem, {})
        if not runs:
            continue
        lines += [f"**{problem}**, {BUDGETS[problem]} trials" + (f" (optimum {OPTIMA[problem]})" if problem in OPTIMA else ""),
                  "", "| sampler | seeds | mean best ± s.e. | median best | s per trial outside the objective (steady median) |",
                  "|---|---|---|---|---|"]
        for variant in VARIANTS:
            seeds = runs.get(variant, {})
            if not seeds:
                continue
            best = [_best(r["values"]) for r in seeds.values()]
            se = np.std(best, ddof=1) / np.sqrt(len(best)) if len(best) > 1 else float("nan")
            per_trial = [s for r in seeds.values() for s in r.get("trial_seconds", [])[20:]]
            cost = f"{statistics.median(per_trial):.3f}" if per_trial else "—"
            lines.append(f"| {variant} | {len(best)} | {np.mean(best):.4f} ± {se:.4f} | {np.median(best):.4f} | {cost} |")
        lines.append("")
    if "overhead" in results:
        o = results["overhead"]
        lines.append(f"Steady overhead at N = {o['n'][0]}..{o['n'][1]} (Hartmann6, slice-sampled GP): a trial through "
                     f"JboSampler {o['steady']['jbo-sampler']:.3f} s, jbo's ask + tell {o['steady']['jbo-ask']:.3f} s: "
                     f"**{o['ratio']:.2f}×**.")
    lines.append("Each sampler with its defaults and `seed=s` for seeds 0..S-1 (Optuna 5.0; GPSampler without `greenlet`, "
                 "so its L-BFGS-B runs sequentially, which costs it time, not quality); jbo-minimize is "
                 "`jbo.minimize(model=\"gp\")` on the same function. Seconds per trial: medians over trials 21 on, two "
                 "runs side by side on the two cores. Runs: `quality --problems hartmann6 --seeds 30`, "
                 "`quality --problems svc-digits --seeds 10`, `overhead --rounds 15`.")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="*", choices=["quality", "overhead"], default=["quality"])
    _common.add_grid_arguments(parser, VARIANTS, seeds=10, problems=BUDGETS)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    _common.use_results_dir(args.results_dir)
    path = os.path.join(_common.RESULTS, "optuna_sampler.json")
    if "quality" in args.parts:
        variants = [v for v in args.variants if v != "jbo-minimize" or "hartmann6" in args.problems]
        for problem in args.problems:
            todo = [v for v in variants if v != "jbo-minimize" or problem == "hartmann6"]
            if not args.report_only:
                _common.run_grid(path, [problem], todo, args.seeds, run, lambda r: "")
    if "overhead" in args.parts and not args.report_only:
        _common.merge_result(path, ["overhead"], overhead(args.rounds))
    results = json.load(open(path)) if os.path.exists(path) else {}
    _common.update_section("optuna_sampler", "## optuna_sampler: jbo's models inside Optuna\n\n" + report(results))


if __name__ == "__main__":
    main()
