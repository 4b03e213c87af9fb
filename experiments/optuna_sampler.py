"""jbo inside Optuna: ``JboSampler`` against Optuna's GPSampler and TPESampler, and against ``jbo.minimize``.

Parts (each stores its runs in experiments/results/optuna_sampler.json, from which BENCHMARKS.md is
regenerated: ``experiments/report.py``; ``--report-only``: only that):

* ``quality``: every sampler inside an Optuna study with its defaults, seeds 0..S-1 (each sampler's
  ``seed``), on
  - ``hartmann6``: six floats on [0, 1], 100 trials (``jbo.minimize`` with the same model beside it);
  - ``svc-digits``: scikit-learn's ``SVC`` on its bundled digits data, 1 - mean 3-fold accuracy over
    C (log), gamma (log), kernel (categorical), degree (int), 40 trials;
  - ``categorical-K`` (K = 4, 12): an SVC-like synthetic of K categories sharing two floats, Branin whose
    first input category ``c`` shifts, plus an offset per category (0 for one category, the others drawn
    from [0.5, 5] by a generator seeded with K), 40 trials; optimum 0.397887.
  Per run: every trial's value and the seconds per trial spent outside the objective (the sampler and
  Optuna's bookkeeping).
* ``overhead``: the steady cost of a trial through ``JboSampler`` (``study.ask``, the suggestions,
  ``study.tell``) against jbo's own ``ask`` + ``tell`` at the same number of observations (Hartmann6,
  from 49 random observations on, both in one padded size, interleaved; the first three suggestions of each
  compile and are left out).

    python experiments/optuna_sampler.py quality --problems hartmann6 --seeds 30
    python experiments/optuna_sampler.py quality --problems svc-digits --seeds 10
    python experiments/optuna_sampler.py overhead --rounds 15

GPSampler needs torch (``pip install -r experiments/requirements-peers.txt``). The runs are peers' studies
seed by seed (jbo-minimize beside them: ``jbo.minimize`` on the same Python objective, as a user calls
it), not a grid of JAX objectives for ``jbo.study``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

BUDGETS = {"hartmann6": 100, "svc-digits": 40, "categorical-4": 40, "categorical-12": 40}
VARIANTS = ("jbo-sampler", "jbo-minimize", "gpsampler", "tpe")
OPTIMA = {"hartmann6": -3.322368, "categorical-4": 0.397887, "categorical-12": 0.397887}
CATEGORICAL = ("categorical-4", "categorical-12")  # the problems the claims compare against TPE
OVERHEAD_BAR = 1.2  # issue #27: a trial through JboSampler costs at most 1.2× jbo's own ask + tell


def _optuna():
    """Optuna, quiet (imported when a part runs: the report needs neither Optuna nor jbo)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


# -- objectives, as an Optuna user writes them ---------------------------------------------------------------
def hartmann6(x) -> float:
    import numpy as np

    import peers

    return float(peers.hartmann6(np.asarray(x, float)))


# Each objective is split in two, the suggestions and the evaluation, so that a trial's time outside the
# evaluation can be measured: Optuna samples relative parameters at the first suggest call, inside the objective.
def hartmann6_parameters(trial) -> dict:
    import numpy as np

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


def categorical_problem(width: int):
    """``(suggest, evaluate)`` of ``categorical-<width>``: Branin with its first input shifted by ``shift[c]`` in
    [-2, 2] plus ``offset[c]`` (0 for one category drawn at random, the others in [0.5, 5]): every category's
    minimum keeps inside the box, and only one reaches Branin's optimum."""
    import numpy as np

    import peers

    rng = np.random.default_rng(width)
    shift, offset = rng.uniform(-2.0, 2.0, width), rng.uniform(0.5, 5.0, width)
    offset[rng.integers(width)] = 0.0
    names = [f"c{k}" for k in range(width)]

    def suggest(trial) -> dict:
        return {"c": names.index(trial.suggest_categorical("c", names)), "x1": trial.suggest_float("x1", -5.0, 10.0),
                "x2": trial.suggest_float("x2", 0.0, 15.0)}

    def evaluate(params: dict) -> float:
        c = params["c"]
        return float(peers.branin(np.array([params["x1"] + shift[c], params["x2"]])) + offset[c])

    return suggest, evaluate


OBJECTIVES = {"hartmann6": (hartmann6_parameters, lambda p: hartmann6(p["x"])), "svc-digits": (svc_parameters, svc_error),
              **{name: categorical_problem(int(name.split("-")[1])) for name in CATEGORICAL}}


def sampler(variant: str, seed: int):
    from jbo.integrations.optuna import JboSampler

    optuna = _optuna()
    if variant == "jbo-sampler":
        return JboSampler("gp", seed=seed)
    if variant == "gpsampler":
        return optuna.samplers.GPSampler(seed=seed)
    if variant == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    raise ValueError(variant)


def run(problem: str, variant: str, seed: int) -> dict:
    import numpy as np

    import jbo

    optuna = _optuna()
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
    import numpy as np

    import jbo
    from jbo.integrations.optuna import JboSampler

    optuna = _optuna()
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
    import numpy as np

    return float(np.nanmin(np.asarray(values, float)))


def _stats(results: dict, problem: str, variant: str):
    """``(mean, se, seeds)`` of the best values of one sampler's stored runs, or ``None``."""
    seeds = results.get(problem, {}).get(variant, {})
    if not seeds:
        return None
    return (*_common.mean_se([_best(r["values"]) for r in seeds.values()]), len(seeds))


def claims() -> list[dict]:
    """JboSampler against Optuna's GPSampler inside Optuna, per problem (issue #27 asks it to be ahead in mean):
    ``yes`` when its mean best is lower than GPSampler's, ``partly`` when higher by less than two standard
    errors of the difference, ``no`` otherwise; and the steady overhead of a trial through JboSampler against
    jbo's own ask + tell: ``yes`` when the ratio is ≤ 1.2 (the issue's bar)."""
    results = _common.load_results("optuna_sampler.json", {})
    rows = []
    for problem, budget in BUDGETS.items():
        if problem in CATEGORICAL:
            continue
        ours, theirs = _stats(results, problem, "jbo-sampler"), _stats(results, problem, "gpsampler")
        what = f"{problem}, {budget} trials: JboSampler vs Optuna's GPSampler inside Optuna (mean best)"
        if ours is None or theirs is None:
            rows.append(_common.claim("jbo", what, "–", "–", "not run", "optuna_sampler"))
            continue
        diff, se = ours[0] - theirs[0], (ours[1] ** 2 + theirs[1] ** 2) ** 0.5
        verdict = "yes" if diff < 0 else "partly" if diff <= 2 * se else "no"
        rows.append(_common.claim("jbo", what, f"GPSampler {theirs[0]:.4f} ± {theirs[1]:.4f} ({theirs[2]} seeds,"
                                  " same seeds)", f"{ours[0]:.4f} ± {ours[1]:.4f} ({ours[2]} seeds)", verdict,
                                  "optuna_sampler"))
    what = (f"{' / '.join(CATEGORICAL)} (K categories sharing two floats), {BUDGETS[CATEGORICAL[0]]} trials: JboSampler "
            "vs Optuna's TPE (mean best)")
    found = [(_stats(results, p, "jbo-sampler"), _stats(results, p, "tpe")) for p in CATEGORICAL]
    if any(ours is None or theirs is None for ours, theirs in found):
        rows.append(_common.claim("jbo", what, "–", "–", "not run", "optuna_sampler"))
    else:
        verdicts = []
        for ours, theirs in found:
            diff, se = ours[0] - theirs[0], (ours[1] ** 2 + theirs[1] ** 2) ** 0.5
            verdicts.append("yes" if diff < 0 else "partly" if diff <= 2 * se else "no")
        verdict = min(verdicts, key=["no", "partly", "yes"].index)
        rows.append(_common.claim("jbo", what, "TPE " + " / ".join(f"{t[0]:.4f} ± {t[1]:.4f}" for _, t in found),
                                  " / ".join(f"{o[0]:.4f} ± {o[1]:.4f}" for o, _ in found)
                                  + f" ({min(o[2] for o, _ in found)} seeds, same seeds)", verdict, "optuna_sampler"))
    what = "Steady trial through JboSampler vs jbo's own ask + tell (Hartmann6)"
    if "overhead" in results:
        ratio = results["overhead"]["ratio"]
        rows.append(_common.claim("jbo", what, f"≤ {OVERHEAD_BAR}×", f"{ratio:.2f}×",
                                  "yes" if ratio <= OVERHEAD_BAR else "no", "optuna_sampler"))
    else:
        rows.append(_common.claim("jbo", what, f"≤ {OVERHEAD_BAR}×", "–", "not run", "optuna_sampler"))
    return rows


def report() -> None:
    _common.update_section("optuna_sampler", "## optuna_sampler: jbo's models inside Optuna\n\n"
                           + write_report(_common.load_results("optuna_sampler.json", {})))


def write_report(results: dict) -> str:
    import numpy as np

    lines = [_common.header("optuna_sampler"),
             "Each sampler with its defaults and `seed=s` for seeds 0..S-1 (Optuna 5.0; GPSampler without `greenlet`, "
             "so its L-BFGS-B runs sequentially, which costs it time, not quality); jbo-minimize is "
             "`jbo.minimize(model=\"gp\")` on the same function. Seconds per trial: medians over trials 21 on, two "
             "runs side by side on the two cores. Runs: `quality --problems hartmann6 --seeds 30`, "
             "`quality --problems svc-digits --seeds 10`, `quality --problems categorical-4 categorical-12 --variants "
             "jbo-sampler tpe --seeds 30`, `overhead --rounds 15`.", ""]
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
            mean, se = _common.mean_se(best)
            per_trial = [s for r in seeds.values() for s in r.get("trial_seconds", [])[20:]]
            cost = f"{statistics.median(per_trial):.3f}" if per_trial else "—"
            lines.append(f"| {variant} | {len(best)} | {mean:.4f} ± {se:.4f} | {np.median(best):.4f} | {cost} |")
        lines.append("")
    if "overhead" in results:
        o = results["overhead"]
        lines.append(f"Steady overhead at N = {o['n'][0]}..{o['n'][1]} (Hartmann6, slice-sampled GP): a trial through "
                     f"JboSampler {o['steady']['jbo-sampler']:.3f} s, jbo's ask + tell {o['steady']['jbo-ask']:.3f} s: "
                     f"**{o['ratio']:.2f}×** (bar ≤ {OVERHEAD_BAR}×).")
        lines.append("")
    lines.append("Summary verdicts: JboSampler is ahead of GPSampler when its mean best is lower, `partly` when higher by"
                 " less than two standard errors of the difference; the overhead meets the bar at ≤ 1.2×.")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parts = ["quality", "overhead"]
    _common.add_parts_argument(parser, parts, default=["quality"])
    _common.add_grid_arguments(parser, VARIANTS, seeds=10, problems=BUDGETS)
    parser.add_argument("--rounds", type=int, default=15)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, parts=parts)
    if args is None:
        return
    path = os.path.join(_common.RESULTS, "optuna_sampler.json")
    if "quality" in args.parts:
        variants = [v for v in args.variants if v != "jbo-minimize" or "hartmann6" in args.problems]
        for problem in args.problems:
            todo = [v for v in variants if v != "jbo-minimize" or problem == "hartmann6"]
            _common.run_grid(path, [problem], todo, args.seeds, run, lambda r: "")
    if "overhead" in args.parts:
        _common.merge_result(path, ["overhead"], overhead(args.rounds))
    _common.record_provenance("optuna_sampler", accumulates=True)
    _common.regenerate()


if __name__ == "__main__":
    main()
