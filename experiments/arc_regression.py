"""Swersky et al. (2014), Table 1: NMSE of regression models on Bayesian-optimisation data of a conditional space.

The data (Sec. 3.1: "We generated data by performing 10 independent runs of Bayesian optimization
... and then treat this as a regression problem"): (configuration, validation error) pairs of jbo's
MLP tuning problem (``jbo.benchmarks.mlp``, 0-4 hidden layers = 5 architectures, 14 parameters),
collected from a few short ``jbo.minimize(model="gp")`` runs (inactive columns filled randomly, the
paper's baseline optimiser) and one random-search run, so that every architecture is represented.
The default data set is ``digits`` (10 classes, the closest of scikit-learn's shipped data sets to
the paper's MNIST). The pairs are cached in ``experiments/results/arc_regression_data.json`` run by
run; a rerun only adds the runs that are missing (``--regenerate`` starts over).

The models, 10-fold cross-validated (``sklearn.model_selection.KFold``, shuffled, seeded):

* **Linear**: ridge regression (``lambda = 1e-3`` on standardised targets, unpenalised intercept; the
  tiny penalty only resolves the collinearity of one-hot blocks) on the unit-cube encoding with the
  inactive columns **filled randomly** (uniform noise, seeded), as the paper does for its baselines.
* **GP**: exact GP, ARD Matérn-5/2, on the same randomly filled vectors (the paper's GP baseline).
* **Arc GP**: exact GP with the arc kernel (Matérn-5/2 profile) over ``Space.relevance`` (inactive
  columns then never matter).
* **Separate** versions: one model per architecture (number of hidden layers), fitted on that
  architecture's training rows only. Their inputs fill inactive columns with the constant 0.5, which
  is constant within an architecture, so each separate model effectively sees only its own
  architecture's parameters. An architecture with fewer than 3 training rows in a fold is predicted
  by the mean of its training rows (or of all training rows when it has none).

GP hyperparameters: MAP (``jbo.inference.infer(..., "map")``, L-BFGS from 4 prior draws) by
default, or slice sampling (``--inference slice``, the paper's choice; 10 samples after 50 burn-in
sweeps, predictions averaged over samples). Predictions are the posterior mean, on targets
standardised within the training fold.

NMSE (``jbo.metrics.nmse``) = mean squared error on the test fold / population variance of the test
fold's targets (the paper says only "normalized mean squared error"; this is its usual definition,
1 = predicting the test mean). "Log outputs" model and score ``log(max(y, floor))``, the floor being
half the smallest positive error in the data (a validation error can be exactly 0). The table gives
mean ± standard deviation over the folds (the paper does not say which spread its ± is).

The section ``arc_regression`` and the summary's rows (``claims()``: the paper's orderings) are written
from the stored NMSE and data set alone (``--report-only``, or ``python experiments/report.py``).

    python experiments/arc_regression.py [--dataset digits] [--bo-runs 5 --bo-budget 40 --random 80]
        [--results-dir DIR] [--report-only]
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

SECTION = "arc_regression"
DATA_FILE = "arc_regression_data.json"
RESULTS_FILE = "arc_regression.json"
METHODS = ("Separate Linear", "Separate GP", "Separate Arc GP", "Linear", "GP", "Arc GP")
OUTPUTS = ("original", "log")
PAPER = {  # Swersky et al. 2014, Table 1 (MNIST BO data, 10-fold, mean ± std)
    "Separate Linear": ("0.812 ± 0.045", "0.737 ± 0.049"), "Separate GP": ("0.546 ± 0.038", "0.446 ± 0.041"),
    "Separate Arc GP": ("0.535 ± 0.030", "0.440 ± 0.031"), "Linear": ("0.876 ± 0.043", "0.834 ± 0.047"),
    "GP": ("0.481 ± 0.031", "0.401 ± 0.028"), "Arc GP": ("0.421 ± 0.033", "0.335 ± 0.028"),
}
# The paper's orderings the summary checks (Swersky et al. 2014, Table 1; /work/shared/paper-tables.md).
ORDERING = ("Arc GP", "GP", "Linear")
JOINT = (("GP", "Separate GP"), ("Arc GP", "Separate Arc GP"))  # (one model for all architectures, one per architecture)
RIDGE = 1e-3
MIN_ROWS = 3  # fewest training rows a separate model is fitted on


def load_results(name: str) -> dict:
    """The results JSON ``name`` under the results directory (empty dict when absent)."""
    return _common.load_results(name, {})


def save_results(name: str, results: dict) -> None:
    """Write the results JSON atomically (a killed run never leaves a truncated file)."""
    _common.write_json(os.path.join(_common.RESULTS, name), results)


# ------------------------------------------------------------------------------- data generation
def generation_plan(args) -> list[tuple[str, int, int]]:
    """``(model, seed, budget)`` of every run that builds the data set."""
    plan = [("gp", seed, args.bo_budget) for seed in range(args.bo_runs)]
    return plan + ([("random", 0, args.random)] if args.random > 0 else [])


def generate(args) -> dict:
    """Run (or load from the cache) every run of :func:`generation_plan`; returns the cached dict (its
    ``"ran"`` counts the runs made now)."""
    import jbo
    from jbo.benchmarks import get_problem

    meta = {"problem": args.problem, "dataset": args.dataset, "inference": args.bo_inference}
    cache = {} if args.regenerate else load_results(DATA_FILE)
    if cache.get("meta") != meta:
        cache = {"meta": meta, "runs": {}}
    problem = get_problem(args.problem, dataset=args.dataset)
    space = problem.space()
    ran = 0
    for model, seed, budget in generation_plan(args):
        key = f"{model}/{seed}/{budget}"
        if key in cache["runs"]:
            continue
        start = time.perf_counter()
        options = {"inference": args.bo_inference} if model != "random" else {}  # random search takes none
        result = jbo.minimize(problem.evaluate, space, budget=budget, model=model, seed=seed,
                              n_init=len(space.leaves()), **options)
        cache["runs"][key] = {"configs": [h["config"] for h in result.history],
                              "values": [h["value"] for h in result.history],
                              "seconds": time.perf_counter() - start}
        print(f"data: {key} done in {cache['runs'][key]['seconds']:.0f} s (best {result.best_value:.4f})", flush=True)
        save_results(DATA_FILE, cache)
        ran += 1
    return {**cache, "ran": ran}


def regression_set(cache: dict, plan_keys: list[str]):
    """``(configs, y, architecture)`` of the successful evaluations of the planned runs."""
    import numpy as np

    configs, values = [], []
    for key in plan_keys:
        run = cache["runs"][key]
        for c, v in zip(run["configs"], run["values"]):
            if v is not None and np.isfinite(v):
                configs.append(c)
                values.append(float(v))
    arch = np.array([int(c["layers"]) for c in configs])
    return configs, np.array(values), arch


# ------------------------------------------------------------------------------------------ models
def fit_predict_linear(x_train, y_train, x_test, ridge: float = RIDGE):
    """Ridge regression with an unpenalised intercept, on standardised targets."""
    import numpy as np

    mu, sd = y_train.mean(), y_train.std() or 1.0
    xm = x_train.mean(axis=0)
    a, b = x_train - xm, (y_train - mu) / sd
    w = np.linalg.solve(a.T @ a + ridge * len(b) * np.eye(a.shape[1]), a.T @ b)
    return mu + sd * ((x_test - xm) @ w)


@functools.lru_cache(maxsize=None)
def surrogate(kind: str, kernel: str, space):
    """The exact-GP surrogate (``kind`` ``"gp"`` or ``"arc"``), cached so jitted programs are reused."""
    from jbo.kernels import make_arc_kernel, make_kernel
    from jbo.surrogates import exact_gp

    return exact_gp(make_arc_kernel(kernel, space.relevance) if kind == "arc" else make_kernel(kernel))


@functools.lru_cache(maxsize=None)
def posterior_mean_fn(model):
    """Jitted ``(params, data, x) ->`` posterior mean at ``x``, averaged over the stacked samples of ``params``."""
    import jax

    @jax.jit
    def posterior_mean(params, data, x):
        means = jax.vmap(lambda p: model.predict(model.condition(p, data), x)[0])(params)
        return means.mean(axis=0)

    return posterior_mean


def fit_predict_gp(model, inference: str, key, x_train, y_train, x_test):
    """Hyperparameters by ``inference`` (MAP or slice), then the GP posterior mean at ``x_test``."""
    import numpy as np

    from jbo import inference as inf
    from jbo.data import Standardizer, bucket_size, pad_data

    standardizer = Standardizer.fit(y_train)
    data = pad_data(x_train, standardizer.forward(y_train))
    options = dict(num_restarts=4) if inference == "map" else dict(num_samples=10, num_warmup=50)
    samples = inf.infer(key, model, data, inference, **options)
    size = bucket_size(len(x_test), minimum=8)
    x = np.full((size, x_test.shape[1]), 0.5)
    x[: len(x_test)] = x_test
    mean = np.asarray(posterior_mean_fn(model)(samples.params, data, x))[: len(x_test)]
    return standardizer.inverse(mean)


def separate(fit_predict, x_train, y_train, a_train, x_test, a_test):
    """One model per architecture: ``fit_predict`` on each architecture's rows (see the module docstring)."""
    import numpy as np

    out = np.empty(len(x_test))
    for a in np.unique(a_test):
        rows, test = a_train == a, a_test == a
        if rows.sum() >= MIN_ROWS and np.ptp(y_train[rows]) > 0:
            out[test] = fit_predict(x_train[rows], y_train[rows], x_test[test])
        else:
            out[test] = y_train[rows].mean() if rows.any() else y_train.mean()
    return out


def predictors(space, args, key):
    """``method -> (inputs, fit_predict(x_train, y_train, a_train, x_test, a_test))``.

    ``inputs`` names the encoding the method sees: ``"random"`` (inactive columns uniform noise) or
    ``"constant"`` (inactive columns 0.5).
    """
    import jax

    gp, arc = surrogate("gp", args.kernel, space), surrogate("arc", args.kernel, space)
    keys = iter(jax.random.split(key, 4))
    gp_fit = lambda m, k: lambda xt, yt, xs: fit_predict_gp(m, args.inference, k, xt, yt, xs)  # noqa: E731
    joint = lambda f: lambda xt, yt, at, xs, as_: f(xt, yt, xs)  # noqa: E731
    split = lambda f: lambda xt, yt, at, xs, as_: separate(f, xt, yt, at, xs, as_)  # noqa: E731
    return {
        "Separate Linear": ("constant", split(fit_predict_linear)),
        "Separate GP": ("constant", split(gp_fit(gp, next(keys)))),
        "Separate Arc GP": ("constant", split(gp_fit(arc, next(keys)))),
        "Linear": ("random", joint(fit_predict_linear)),
        "GP": ("random", joint(gp_fit(gp, next(keys)))),
        "Arc GP": ("random", joint(gp_fit(arc, next(keys)))),
    }


# ------------------------------------------------------------------------------ cross-validation
def transform(y, output: str):
    """Targets on the ``"original"`` or ``"log"`` scale (log of ``max(y, floor)``; see the docstring)."""
    import numpy as np

    if output == "original":
        return y
    floor = 0.5 * y[y > 0].min()
    return np.log(np.maximum(y, floor))


def cross_validate(space, configs, y, arch, args, results: dict) -> dict:
    """10-fold NMSE of every method on both outputs; finished (method, output) pairs are kept."""
    import jax
    import numpy as np
    from sklearn.model_selection import KFold

    from jbo.metrics import nmse

    meta = {"n": len(y), "folds": args.folds, "inference": args.inference, "kernel": args.kernel, "seed": args.seed,
            "data": DATA_FILE}
    if results.get("meta") != meta:
        results = {"meta": meta, "nmse": {}, "seconds": {}}
    inputs = {"random": space.encode_many(configs, fill=np.random.default_rng(args.seed)),
              "constant": space.encode_many(configs, fill=0.5)}
    folds = list(KFold(args.folds, shuffle=True, random_state=args.seed).split(y))
    for method, (encoding, fit_predict) in predictors(space, args, jax.random.key(args.seed)).items():
        if method not in args.methods:
            continue
        x = inputs[encoding]
        for output in OUTPUTS:
            key = f"{method}/{output}"
            if key in results["nmse"]:
                continue
            target, scores, start = transform(y, output), [], time.perf_counter()
            for train, test in folds:
                pred = fit_predict(x[train], target[train], arch[train], x[test], arch[test])
                scores.append(nmse(target[test], pred))
            results["nmse"][key] = scores
            results["seconds"][key] = time.perf_counter() - start
            results["ran"] = results.get("ran", 0) + 1
            print(f"{key}: NMSE {np.mean(scores):.3f} ± {np.std(scores):.3f} ({results['seconds'][key]:.0f} s)",
                  flush=True)
            save_results(RESULTS_FILE, {k: v for k, v in results.items() if k != "ran"})
    return results


# -------------------------------------------------------------------------------------- report
def _stats(results: dict) -> dict:
    """``{"method/output": (mean, std)}`` of the NMSE over the folds."""
    import numpy as np

    return {k: (float(np.mean(v)), float(np.std(v))) for k, v in results.get("nmse", {}).items()}


def _paper_mean(method: str, output: str) -> float:
    return float(PAPER[method][OUTPUTS.index(output)].split(" ± ")[0])


def report() -> None:
    """The section from the stored NMSE (``arc_regression.json``) and data set (``arc_regression_data.json``)."""
    results, cache = load_results(RESULTS_FILE), load_results(DATA_FILE)
    keys = results.get("data_runs") or list(cache.get("runs", {}))
    cache = {**cache, "runs": {k: cache["runs"][k] for k in keys if k in cache.get("runs", {})}}
    if not results.get("nmse") or not cache["runs"]:
        _common.update_section(SECTION, "## Arc-kernel regression study (Swersky et al. 2014, Table 1)\n\n"
                               + _common.header(SECTION) + "\nNot run.")
        return
    _, y, arch = regression_set(cache, list(cache["runs"]))
    write_report(results, y, arch, cache)


def write_report(results: dict, y, arch, cache: dict) -> None:
    """The BENCHMARKS.md section: jbo's NMSE next to the paper's, the ordering, the data set."""
    meta, data = results["meta"], cache["meta"]
    stat = _stats(results)
    fmt = lambda k: f"{stat[k][0]:.3f} ± {stat[k][1]:.3f}" if k in stat else "not run"  # noqa: E731
    counts = ", ".join(f"{a} layers: {(arch == a).sum()}" for a in range(int(arch.max()) + 1))
    runs = ", ".join(f"{k} ({len(r['values'])} evaluations)" for k, r in cache["runs"].items())
    size = f"{len(y)}" if len(y) == meta["n"] else f"{len(y)} (the NMSE were computed on {meta['n']})"
    lines = ["## Arc-kernel regression study (Swersky et al. 2014, Table 1)", "", _common.header(SECTION),
             f"{size} (configuration, validation error) pairs of `{data['problem']}` on `{data['dataset']}` from BO"
             f" runs (`model=\"gp\"`, hyperparameters by `{data['inference']}`, one initial point per architecture)"
             f" and random search: {runs}; per architecture: {counts}. The paper used 10 BO runs on MNIST"
             " (23 hyperparameters, 6 architectures); this data set is smaller and easier.",
             f"{meta['folds']}-fold NMSE{'' if meta['folds'] == 10 else ' (paper: 10-fold)'} (test MSE / test-target"
             f" variance), mean ± std over folds. Linear: ridge ({RIDGE:g}) on the encoding with inactive columns"
             f" filled randomly; GP: ARD {meta['kernel']} on the same; Arc GP: arc kernel ({meta['kernel']} profile)"
             " with `space.relevance`; separate: one model per number of layers (inactive columns constant). GP"
             f" hyperparameters by `{meta['inference']}`"
             + (" (the paper: slice sampling)" if meta["inference"] != "slice" else "") + "; posterior mean.",
             "Verdicts (summary table): an ordering of the paper holds when jbo's mean NMSE are in the same order;"
             " joint vs separate models: `yes` when every joint model (GP, Arc GP; both outputs) has the lower mean"
             " NMSE, `partly` when some do.",
             "", "| method | jbo original | jbo log outputs | paper original | paper log outputs | s (both outputs) |",
             "|---|---|---|---|---|---|"]
    for method in METHODS:
        seconds = sum(results["seconds"].get(f"{method}/{o}", 0.0) for o in OUTPUTS)
        lines.append(f"| {method} | {fmt(method + '/original')} | {fmt(method + '/log')} | {PAPER[method][0]}"
                     f" | {PAPER[method][1]} | {seconds:.0f} |")
    lines.append("")
    for output in OUTPUTS:
        ranked = sorted((stat[f"{m}/{output}"][0], m) for m in METHODS if f"{m}/{output}" in stat)
        order = " < ".join(f"{m} ({v:.3f})" for v, m in ranked)
        paper = " < ".join(f"{m} ({_paper_mean(m, output):.3f})" for m in sorted(METHODS, key=lambda m: _paper_mean(m, output)))
        lines.append(f"- ordering, {output}: jbo {order}; paper {paper}.")
    _common.update_section(SECTION, "\n".join(lines))


def claims() -> list[dict]:
    """Swersky et al. 2014, Table 1, from the stored NMSE (means over the folds).

    * Arc GP < GP < Linear, on the original outputs and on the log outputs (one row each): ``yes`` when
      jbo's mean NMSE are in that order, ``no`` otherwise.
    * One model over all architectures beats one per architecture (GP vs Separate GP, Arc GP vs Separate
      Arc GP, both outputs: the paper's four pairs): ``yes`` when every joint model has the lower mean
      NMSE, ``partly`` when some do, ``no`` when none.
    ``not run`` where a model's NMSE is missing.
    """
    results = load_results(RESULTS_FILE)
    stat = _stats(results)
    data = load_results(DATA_FILE).get("meta", {})
    on = f" ({results['meta']['folds']}-fold, {data.get('dataset', '?')})" if stat else ""
    paper = "Swersky et al. 2014, Table 1"
    rows = []
    for output in OUTPUTS:
        keys = [f"{m}/{output}" for m in ORDERING]
        what = f"NMSE ordering {' < '.join(ORDERING)} ({output} outputs; cross-validated on BO data of a conditional space)"
        paper_figure = " < ".join(f"{_paper_mean(m, output):.3f}" for m in ORDERING) + " (10-fold, MNIST)"
        if not all(k in stat for k in keys):
            rows.append(_common.claim(paper, what, paper_figure, "–", "not run", SECTION))
            continue
        means = [stat[k][0] for k in keys]
        holds = all(a < b for a, b in zip(means, means[1:]))
        rows.append(_common.claim(paper, what, paper_figure, (" < " if holds else " vs ").join(f"{v:.3f}" for v in means)
                                  + on, "yes" if holds else "no", SECTION))
    pairs = [(joint, sep, output) for output in OUTPUTS for joint, sep in JOINT]
    what = "one model over all architectures has lower NMSE than one per architecture (GP, Arc GP; both outputs)"
    paper_figure = ", ".join(f"{j} {_paper_mean(j, o):.3f} vs {_paper_mean(s, o):.3f} ({o})" for j, s, o in pairs)
    if not all(f"{m}/{o}" in stat for j, s, o in pairs for m in (j, s)):
        rows.append(_common.claim(paper, what, paper_figure, "–", "not run", SECTION))
    else:
        better = [stat[f"{j}/{o}"][0] < stat[f"{s}/{o}"][0] for j, s, o in pairs]
        verdict = "yes" if all(better) else "partly" if any(better) else "no"
        rows.append(_common.claim(paper, what, paper_figure, ", ".join(
            f"{j} {stat[f'{j}/{o}'][0]:.3f} vs {stat[f'{s}/{o}'][0]:.3f} ({o})" for j, s, o in pairs)
            + f": {sum(better)} of {len(pairs)}{on}", verdict, SECTION))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="mlp", choices=["mlp", "mlp_fast"])
    parser.add_argument("--dataset", default="digits", choices=["breast_cancer", "wine", "iris", "digits"])
    parser.add_argument("--bo-runs", type=int, default=5, help="number of model='gp' BO runs (seeds 0..)")
    parser.add_argument("--bo-budget", type=int, default=40, help="evaluations per BO run")
    parser.add_argument("--bo-inference", default="map", choices=["map", "slice"])
    parser.add_argument("--random", type=int, default=80, help="random-search evaluations (0: none)")
    parser.add_argument("--regenerate", action="store_true", help="ignore the cached data set")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--inference", default="map", choices=["map", "slice"])
    parser.add_argument("--kernel", default="matern52", choices=["matern52", "se", "rq"])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--seed", type=int, default=0, help="seed of the folds, the random fill and the fits")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    from jbo.benchmarks import get_problem

    cache = generate(args)
    plan_keys = [f"{m}/{s}/{b}" for m, s, b in generation_plan(args)]
    configs, y, arch = regression_set(cache, plan_keys)
    space = get_problem(args.problem, dataset=args.dataset).space()
    results = cross_validate(space, configs, y, arch, args, load_results(RESULTS_FILE))
    ran = cache["ran"] + results.pop("ran", 0)
    if results.get("data_runs") != plan_keys:  # which of the cached runs the NMSE were computed on
        save_results(RESULTS_FILE, {**results, "data_runs": plan_keys})
    if ran:
        _common.record_provenance(SECTION)
    _common.regenerate()


if __name__ == "__main__":
    main()
