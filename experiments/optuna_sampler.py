"""jbo inside Optuna: ``JboSampler`` against Optuna's GPSampler and TPESampler (issue #27).

* ``quality``: every sampler with its defaults inside an Optuna study, seed by seed, on Hartmann6, an SVC on
  scikit-learn's digits and ``categorical-K`` (K categories sharing two floats). The `jbo-minimize` rows' runner is
  retired (they ran at 8f10008).
* ``overhead``: a steady trial through ``JboSampler`` against jbo's own ``ask`` + ``tell`` (Hartmann6).

    python experiments/optuna_sampler.py quality --problems hartmann6 --seeds 30
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import driver  # noqa: E402

BUDGETS = {"hartmann6": 100, "svc-digits": 40, "categorical-4": 40, "categorical-12": 40}
VARIANTS = ("jbo-sampler", "gpsampler", "tpe")
SHOWN = ("jbo-sampler", "jbo-minimize", "gpsampler", "tpe")  # with the retired runner's rows
OPTIMA = {"hartmann6": -3.322368, "categorical-4": 0.397887, "categorical-12": 0.397887}
CATEGORICAL = ("categorical-4", "categorical-12")  # the problems the claims compare against TPE
OVERHEAD_BAR = 1.2  # issue #27: a trial through JboSampler costs at most 1.2× jbo's own ask + tell


def svc_error(params: dict) -> float:
    """1 - mean 3-fold accuracy of an SVC on scikit-learn's digits (scaled to [0, 1])."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import cross_val_score
    from sklearn.svm import SVC

    x, y = load_digits(return_X_y=True)
    return float(1.0 - cross_val_score(SVC(**params, max_iter=20000), x / 16.0, y, cv=3).mean())


def categorical_problem(width: int):
    """Branin with its first input shifted by ``shift[c]`` in [-2, 2] plus ``offset[c]`` (0 for one category drawn at
    random, the others in [0.5, 5]): only one category reaches Branin's optimum. ``(suggest, evaluate)``."""
    import numpy as np

    import peers

    rng = np.random.default_rng(width)
    shift, offset = rng.uniform(-2.0, 2.0, width), rng.uniform(0.5, 5.0, width)
    offset[rng.integers(width)] = 0.0
    names = [f"c{k}" for k in range(width)]

    def suggest(trial) -> dict:
        return {"c": names.index(trial.suggest_categorical("c", names)), "x1": trial.suggest_float("x1", -5.0, 10.0),
                "x2": trial.suggest_float("x2", 0.0, 15.0)}

    return suggest, lambda p: float(peers.branin([p["x1"] + shift[p["c"]], p["x2"]]) + offset[p["c"]])


def objectives(problem: str):
    """``(suggest, evaluate)``: apart, so that a trial's time outside the evaluation can be measured."""
    import peers

    if problem in CATEGORICAL:
        return categorical_problem(int(problem.split("-")[1]))
    if problem == "hartmann6":
        return lambda trial: [trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(6)], peers.hartmann6
    return lambda trial: {"C": trial.suggest_float("C", 1e-3, 1e3, log=True),
                          "gamma": trial.suggest_float("gamma", 1e-5, 1e1, log=True),
                          "kernel": trial.suggest_categorical("kernel", ["rbf", "poly", "sigmoid"]),
                          "degree": trial.suggest_int("degree", 2, 5)}, svc_error


def run(problem: str, variant: str, seed: int) -> dict:
    """One run: every trial's value, the run's seconds and each trial's seconds outside the objective."""
    import peers
    from jbo.integrations.optuna import JboSampler

    optuna, start = peers.quiet_optuna(), time.perf_counter()
    (suggest, evaluate), objective_seconds, trial_seconds = objectives(problem), [], []

    def timed(trial):
        params, t = suggest(trial), time.perf_counter()
        try:
            return evaluate(params)
        finally:
            objective_seconds.append(time.perf_counter() - t)

    samplers = {"jbo-sampler": lambda: JboSampler("gp", seed=seed),
                "gpsampler": lambda: optuna.samplers.GPSampler(seed=seed),
                "tpe": lambda: optuna.samplers.TPESampler(seed=seed)}
    study = optuna.create_study(sampler=samplers[variant]())
    for _ in range(BUDGETS[problem]):
        t = time.perf_counter()
        study.optimize(timed, n_trials=1)
        trial_seconds.append(time.perf_counter() - t - objective_seconds[-1])
    return {"values": [float(t.value) for t in study.trials], "seconds": time.perf_counter() - start,
            "trial_seconds": trial_seconds}


def overhead(rounds: int, start_n: int = 49) -> dict:
    """Seconds per steady trial: JboSampler (Optuna's ask/tell around it) and jbo's ask + tell, interleaved, from
    ``start_n`` random observations on; the first three of each compile and are left out."""
    import numpy as np

    import jbo
    import peers
    from jbo.integrations.optuna import JboSampler

    optuna, hartmann6 = peers.quiet_optuna(), peers.hartmann6
    space = {f"x{i}": optuna.distributions.FloatDistribution(0.0, 1.0) for i in range(6)}
    opt = jbo.Optimizer(jbo.Space({name: jbo.Real(0.0, 1.0) for name in space}), model="gp", seed=0)
    study = optuna.create_study(sampler=JboSampler("gp", seed=0))
    for x in np.random.default_rng(0).random((start_n, 6)):
        config = {f"x{i}": float(v) for i, v in enumerate(x)}
        opt.tell(config, hartmann6(x))
        study.add_trial(optuna.trial.create_trial(params=config, distributions=space, value=hartmann6(x)))
    times = {"jbo-ask": [], "jbo-sampler": []}
    for _ in range(rounds):
        t = time.perf_counter()
        config = opt.ask()
        times["jbo-ask"].append(time.perf_counter() - t)
        opt.tell(config, hartmann6([config[f"x{i}"] for i in range(6)]))
        t = time.perf_counter()
        trial = study.ask()
        study.tell(trial, hartmann6([trial.suggest_float(name, 0.0, 1.0) for name in space]))
        times["jbo-sampler"].append(time.perf_counter() - t)
    steady = {k: statistics.median(v[3:]) for k, v in times.items()}
    return {"times": times, "steady": steady, "ratio": steady["jbo-sampler"] / steady["jbo-ask"],
            "n": [start_n, start_n + rounds]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _common.add_parts_argument(parser, ["quality", "overhead"], default=["quality"])
    _common.add_grid_arguments(parser, VARIANTS, seeds=10, problems=BUDGETS)
    parser.add_argument("--rounds", type=int, default=15)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, parts=["quality", "overhead"])
    if args is None:
        return
    path = os.path.join(_common.RESULTS, "optuna_sampler.json")
    if "quality" in args.parts:
        _common.run_grid(path, args.problems, args.variants, args.seeds, run, lambda r: "")
    if "overhead" in args.parts:
        _common.merge_result(path, ["overhead"], overhead(args.rounds))
    _common.record_provenance("optuna_sampler", accumulates=True)
    _common.regenerate()


# --------------------------------------------------------------------------------------------------- the report
def _stats(results: dict, problem: str, variant: str):
    """``(mean, se, seeds)`` of the best values of one sampler's stored runs, or ``None``."""
    seeds = results.get(problem, {}).get(variant, {})
    return (*_common.mean_se(driver.best_values(seeds)), len(seeds)) if seeds else None


def _verdict(ours, theirs) -> str:
    """``yes``: our mean best is lower; ``partly``: higher by less than two standard errors of the difference."""
    diff, se = ours[0] - theirs[0], (ours[1] ** 2 + theirs[1] ** 2) ** 0.5
    return "yes" if diff < 0 else "partly" if diff <= 2 * se else "no"


def claims() -> list[dict]:
    """JboSampler against GPSampler per problem (issue #27: ahead in mean), against TPE on the categorical problems
    (the worse verdict of the two), and its steady overhead against the issue's bar."""
    results, rows = _common.load_results("optuna_sampler.json", {}), []
    for problem in ("hartmann6", "svc-digits"):
        ours, theirs = _stats(results, problem, "jbo-sampler"), _stats(results, problem, "gpsampler")
        what = f"{problem}, {BUDGETS[problem]} trials: JboSampler vs Optuna's GPSampler inside Optuna (mean best)"
        if ours is None or theirs is None:
            rows.append(_common.claim("jbo", what, "–", "–", "not run", "optuna_sampler"))
            continue
        rows.append(_common.claim("jbo", what, f"GPSampler {theirs[0]:.4f} ± {theirs[1]:.4f} ({theirs[2]} seeds, same"
                                  " seeds)", f"{ours[0]:.4f} ± {ours[1]:.4f} ({ours[2]} seeds)", _verdict(ours, theirs),
                                  "optuna_sampler"))
    what = (f"{' / '.join(CATEGORICAL)} (K categories sharing two floats), {BUDGETS[CATEGORICAL[0]]} trials: JboSampler "
            "vs Optuna's TPE (mean best)")
    found = [(_stats(results, p, "jbo-sampler"), _stats(results, p, "tpe")) for p in CATEGORICAL]
    if any(ours is None or theirs is None for ours, theirs in found):
        rows.append(_common.claim("jbo", what, "–", "–", "not run", "optuna_sampler"))
    else:
        tpe = "TPE " + " / ".join(f"{t[0]:.4f} ± {t[1]:.4f}" for _, t in found)
        ours = " / ".join(f"{o[0]:.4f} ± {o[1]:.4f}" for o, _ in found) + f" ({min(o[2] for o, _ in found)} seeds, same seeds)"
        verdict = min((_verdict(*pair) for pair in found), key=["no", "partly", "yes"].index)
        rows.append(_common.claim("jbo", what, tpe, ours, verdict, "optuna_sampler"))
    ratio = results.get("overhead", {}).get("ratio")
    verdict = "not run" if ratio is None else "yes" if ratio <= OVERHEAD_BAR else "no"
    return rows + [_common.claim("jbo", "Steady trial through JboSampler vs jbo's own ask + tell (Hartmann6)",
                                 f"≤ {OVERHEAD_BAR}×", "–" if ratio is None else f"{ratio:.2f}×", verdict,
                                 "optuna_sampler")]


def report() -> dict:
    import numpy as np

    results = _common.load_results("optuna_sampler.json", {})
    lines = ["## optuna_sampler: jbo's models inside Optuna", "", _common.header("optuna_sampler"),
             "Each sampler with its defaults and `seed=s` (Optuna 5.0; GPSampler without `greenlet`: its L-BFGS-B runs"
             " sequentially, costing time, not quality); jbo-minimize: `jbo.minimize(model=\"gp\")` (runner retired;"
             " ran at 8f10008). s / trial: the median over trials 21 on of a trial's seconds outside the objective, two"
             " runs side by side on the two cores.", ""]
    for problem in (p for p in BUDGETS if results.get(p)):
        optimum = f" (optimum {OPTIMA[problem]})" if problem in OPTIMA else ""
        lines += [f"**{problem}**, {BUDGETS[problem]} trials{optimum}", "",
                  "| sampler | seeds | mean best ± s.e. | median best | s / trial |", "|---|---|---|---|---|"]
        for variant in (v for v in SHOWN if results[problem].get(v)):
            runs = results[problem][variant]
            best = driver.best_values(runs)
            per_trial = [s for r in runs.values() for s in r.get("trial_seconds", [])[20:]]
            mean, se = _common.mean_se(best)
            trial = f"{statistics.median(per_trial):.3f}" if per_trial else "—"
            lines.append(f"| {variant} | {len(best)} | {mean:.4f} ± {se:.4f} | {np.median(best):.4f} | {trial} |")
        lines.append("")
    if "overhead" in results:
        o = results["overhead"]
        lines += [f"Steady overhead at N = {o['n'][0]}..{o['n'][1]} (Hartmann6, slice-sampled GP): a trial through"
                  f" JboSampler {o['steady']['jbo-sampler']:.3f} s, jbo's ask + tell {o['steady']['jbo-ask']:.3f} s:"
                  f" **{o['ratio']:.2f}×** (bar ≤ {OVERHEAD_BAR}×).", ""]
    lines += ["Verdicts: JboSampler is ahead of GPSampler (or TPE) when its mean best is lower, `partly` when"
              " higher by less than two standard errors of the difference; the overhead meets the bar at ≤ 1.2×."]
    return {"optuna_sampler": "\n".join(lines)}


if __name__ == "__main__":
    main()
