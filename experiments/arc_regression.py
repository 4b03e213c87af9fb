"""Swersky et al. (2014), Table 1: NMSE of regression models on Bayesian-optimisation data of a conditional space.

The data (Sec. 3.1): (configuration, validation error) pairs of jbo's MLP problem from BO and random-search runs
(:data:`PLAN`, cached run by run). Cross-validated: ridge regression (Linear) and an ARD GP with inactive columns filled
randomly (the paper's baselines), the arc-kernel GP over ``Space.relevance``, and "Separate" models per architecture
(under 3 rows: their mean). NMSE = test MSE / test-target variance, of the errors and of their logs.

    python experiments/arc_regression.py [--inference map]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

SECTION, DATA_FILE, RESULTS_FILE = "arc_regression", "arc_regression_data.json", "arc_regression.json"
PAPER = {  # Swersky et al. 2014, Table 1 (MNIST BO data, 10-fold, mean ± std): original and log outputs
    "Separate Linear": ("0.812 ± 0.045", "0.737 ± 0.049"), "Separate GP": ("0.546 ± 0.038", "0.446 ± 0.041"),
    "Separate Arc GP": ("0.535 ± 0.030", "0.440 ± 0.031"), "Linear": ("0.876 ± 0.043", "0.834 ± 0.047"),
    "GP": ("0.481 ± 0.031", "0.401 ± 0.028"), "Arc GP": ("0.421 ± 0.033", "0.335 ± 0.028")}
OUTPUTS, ORDERING = ("original", "log"), ("Arc GP", "GP", "Linear")  # the paper's ordering the summary checks
JOINT = (("GP", "Separate GP"), ("Arc GP", "Separate Arc GP"))  # (one model for all architectures, one per one)
RIDGE, MIN_ROWS, KERNEL, SEED = 1e-3, 3, "matern52", 0  # SEED: of the folds, the random fill and the fits
DATASET, FOLDS = "digits", 10
PLAN = [("gp", seed, 40) for seed in range(5)] + [("random", 0, 80)]  # the data's runs: (model, seed, evaluations)


def regression_set(runs):
    """``(configs, errors, architectures)`` of the runs' successful evaluations."""
    pairs = [(c, float(v)) for run in runs for c, v in zip(run["configs"], run["values"])
             if v is not None and np.isfinite(v)]
    return [c for c, _ in pairs], np.array([v for _, v in pairs]), np.array([int(c["layers"]) for c, _ in pairs])


def linear(x_train, y_train, x_test):
    """Ridge regression, unpenalised intercept, standardised targets (the penalty only resolves one-hot blocks)."""
    mu, sd, xm = y_train.mean(), y_train.std() or 1.0, x_train.mean(axis=0)
    a, b = x_train - xm, (y_train - mu) / sd
    return mu + sd * ((x_test - xm) @ np.linalg.solve(a.T @ a + RIDGE * len(b) * np.eye(a.shape[1]), a.T @ b))


def gp(model, inference: str, key):
    """``fit_predict`` of an exact GP: hyperparameters by ``inference``, posterior mean averaged over the samples."""
    import jax

    from jbo.data import Standardizer, bucket_size, pad_data
    from jbo.inference import infer

    mean = jax.jit(lambda ps, data, x: jax.vmap(lambda p: model.predict(model.condition(p, data), x)[0])(ps).mean(0))

    def fit_predict(x_train, y_train, x_test):
        standardizer = Standardizer.fit(y_train)
        data = pad_data(x_train, standardizer.forward(y_train))
        options = dict(num_restarts=4) if inference == "map" else dict(num_samples=10, num_warmup=50)
        params = infer(key, model, data, inference, **options).params
        x = np.full((bucket_size(len(x_test), minimum=8), x_test.shape[1]), 0.5)  # padded: one program per size
        x[: len(x_test)] = x_test
        return standardizer.inverse(np.asarray(mean(params, data, x))[: len(x_test)])

    return fit_predict


def separate(fit_predict):
    """One model per architecture, on its training rows (too few, or constant targets: their mean)."""
    def predict(xt, yt, at, xs, as_):
        out = np.empty(len(xs))
        for a in np.unique(as_):
            rows, test = at == a, as_ == a
            out[test] = fit_predict(xt[rows], yt[rows], xs[test]) if rows.sum() >= MIN_ROWS and np.ptp(yt[rows]) > 0 \
                else yt[rows].mean() if rows.any() else yt.mean()
        return out

    return predict


def predictors(space, inference: str) -> dict:
    """``method -> (inputs, fit_predict(x_train, y_train, a_train, x_test, a_test))``; ``inputs``: inactive columns
    ``"random"`` (uniform noise) or ``"constant"`` (0.5)."""
    import jax

    from jbo.kernels import make_arc_kernel, make_kernel
    from jbo.surrogates import exact_gp

    plain, arc = exact_gp(make_kernel(KERNEL)), exact_gp(make_arc_kernel(KERNEL, space.relevance))
    k = jax.random.split(jax.random.key(SEED), 4)
    joint = lambda f: lambda xt, yt, at, xs, as_: f(xt, yt, xs)  # noqa: E731
    return {"Separate Linear": ("constant", separate(linear)),
            "Separate GP": ("constant", separate(gp(plain, inference, k[0]))),
            "Separate Arc GP": ("constant", separate(gp(arc, inference, k[1]))),
            "Linear": ("random", joint(linear)), "GP": ("random", joint(gp(plain, inference, k[2]))),
            "Arc GP": ("random", joint(gp(arc, inference, k[3])))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inference", default="map", choices=["map", "slice"], help="of the GPs' hyperparameters")
    _common.add_output_arguments(parser)
    if (args := _common.start(parser, argv)) is None:
        return
    from sklearn.model_selection import KFold

    import jbo
    from jbo.benchmarks import get_problem
    from jbo.metrics import nmse

    problem, keys, ran = get_problem("mlp", dataset=DATASET), [f"{m}/{s}/{b}" for m, s, b in PLAN], False
    space, meta = problem.space(), {"problem": "mlp", "dataset": DATASET, "inference": "map"}
    cache = _common.load_results(DATA_FILE, {})
    cache = cache if cache.get("meta") == meta else {"meta": meta, "runs": {}}
    for key, (model, seed, budget) in zip(keys, PLAN):  # the data's runs the cache lacks
        if key not in cache["runs"]:
            start, ran, options = time.perf_counter(), True, {} if model == "random" else {"inference": "map"}
            history = jbo.minimize(problem.evaluate, space, budget=budget, model=model, seed=seed,
                                   n_init=len(space.leaves()), **options).history  # a point per architecture
            cache["runs"][key] = {"configs": [h["config"] for h in history], "values": [h["value"] for h in history],
                                  "seconds": time.perf_counter() - start}
            _common.write_json(os.path.join(_common.RESULTS, DATA_FILE), cache)
    configs, y, arch = regression_set(cache["runs"][k] for k in keys)
    meta = {"n": len(y), "folds": FOLDS, "inference": args.inference, "kernel": KERNEL, "seed": SEED, "data": DATA_FILE}
    results = _common.load_results(RESULTS_FILE, {})
    results = {**results, "data_runs": keys} if results.get("meta") == meta else \
        {"meta": meta, "nmse": {}, "seconds": {}, "data_runs": keys}  # data_runs: the cached runs the NMSE are of
    inputs = {"random": space.encode_many(configs, fill=np.random.default_rng(SEED)),
              "constant": space.encode_many(configs, fill=0.5)}
    folds = list(KFold(FOLDS, shuffle=True, random_state=SEED).split(y))
    for method, (encoding, fit_predict) in predictors(space, args.inference).items():
        for output in (o for o in OUTPUTS if f"{method}/{o}" not in results["nmse"]):
            target = y if output == "original" else np.log(np.maximum(y, 0.5 * y[y > 0].min()))  # an error can be 0
            x, start, ran = inputs[encoding], time.perf_counter(), True
            scores = [nmse(target[test], fit_predict(x[train], target[train], arch[train], x[test], arch[test]))
                      for train, test in folds]
            results["nmse"][f"{method}/{output}"] = scores
            results["seconds"][f"{method}/{output}"] = time.perf_counter() - start
            print(f"{method}/{output}: NMSE {np.mean(scores):.3f} ± {np.std(scores):.3f}", flush=True)
            _common.write_json(os.path.join(_common.RESULTS, RESULTS_FILE), results)
    _common.write_json(os.path.join(_common.RESULTS, RESULTS_FILE), results)
    if ran:
        _common.record_provenance(SECTION)
    _common.regenerate()


def _stats(results: dict) -> dict:
    """``{"method/output": (mean, std)}`` of the NMSE over the folds."""
    return {k: (float(np.mean(v)), float(np.std(v))) for k, v in results.get("nmse", {}).items()}


def _paper_mean(method: str, output: str) -> float:
    return float(PAPER[method][OUTPUTS.index(output)].split(" ± ")[0])


def report() -> dict:
    """jbo's NMSE next to the paper's, the orderings, the data set (from the stored NMSE and data)."""
    results, cache = _common.load_results(RESULTS_FILE, {}), _common.load_results(DATA_FILE, {"runs": {}})
    runs = {k: cache["runs"][k] for k in results.get("data_runs") or cache["runs"] if k in cache["runs"]}
    lines = ["## Arc-kernel regression study (Swersky et al. 2014, Table 1)", "", _common.header(SECTION)]
    if not results.get("nmse") or not runs:
        return {SECTION: "\n".join(lines + ["Not run."])}
    _, y, arch = regression_set(runs.values())
    meta, data, stat = results["meta"], cache["meta"], _stats(results)
    fmt = lambda k: f"{stat[k][0]:.3f} ± {stat[k][1]:.3f}" if k in stat else "not run"  # noqa: E731
    size = f"{len(y)}" + (f" (the NMSE were computed on {meta['n']})" if len(y) != meta["n"] else "")
    made = ", ".join(f"{k} ({len(r['values'])} evaluations)" for k, r in runs.items())
    counts = ", ".join(f"{a} layers: {(arch == a).sum()}" for a in range(arch.max() + 1))
    lines += [f"{size} (configuration, validation error) pairs of `{data['problem']}` on `{data['dataset']}` from BO"
              f" runs (`model=\"gp\"`, hyperparameters by `{data['inference']}`) and random search: {made}; per"
              f" architecture: {counts}. The paper: 10 BO runs on MNIST (23 hyperparameters, 6 architectures).",
              f"{meta['folds']}-fold NMSE, mean ± std over folds; Linear: ridge ({RIDGE:g}), GP: ARD {meta['kernel']},"
              f" both with inactive columns filled randomly; Arc GP: the arc kernel; separate: one model per number of"
              f" layers. GP hyperparameters by `{meta['inference']}`"
              + (" (the paper: slice sampling)" if meta["inference"] != "slice" else "") + "; posterior mean.", "",
              "| method | jbo original | jbo log outputs | paper original | paper log outputs | s (both outputs) |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {m} | {fmt(m + '/original')} | {fmt(m + '/log')} | {PAPER[m][0]} | {PAPER[m][1]} |"
              f" {sum(results['seconds'].get(f'{m}/{o}', 0.0) for o in OUTPUTS):.0f} |" for m in PAPER]
    lines.append("")
    for output in OUTPUTS:
        ranked = sorted((stat[f"{m}/{output}"][0], m) for m in PAPER if f"{m}/{output}" in stat)
        paper = sorted(PAPER, key=lambda m: _paper_mean(m, output))
        lines.append(f"Ordering, {output}: jbo " + " < ".join(f"{m} ({v:.3f})" for v, m in ranked) + "; paper "
                     + " < ".join(f"{m} ({_paper_mean(m, output):.3f})" for m in paper) + ".")
    return {SECTION: "\n".join(lines)}


def claims() -> list[dict]:
    """Table 1's orderings (Arc GP < GP < Linear, per output: ``yes`` when jbo's mean NMSE are in that order), and
    joint beats separate models (the four pairs: ``yes`` when every one does, ``partly`` some)."""
    results = _common.load_results(RESULTS_FILE, {})
    stat, data = _stats(results), _common.load_results(DATA_FILE, {}).get("meta", {})
    on = f" ({results['meta']['folds']}-fold, {data.get('dataset', '?')})" if stat else ""
    paper, rows = "Swersky et al. 2014, Table 1", []
    for output in OUTPUTS:
        what = f"NMSE ordering {' < '.join(ORDERING)} ({output} outputs; cross-validated on BO data of a conditional space)"
        paper_figure = " < ".join(f"{_paper_mean(m, output):.3f}" for m in ORDERING) + " (10-fold, MNIST)"
        if not all(f"{m}/{output}" in stat for m in ORDERING):
            rows.append(_common.claim(paper, what, paper_figure, "–", "not run", SECTION))
            continue
        means = [stat[f"{m}/{output}"][0] for m in ORDERING]
        holds = all(a < b for a, b in zip(means, means[1:]))
        rows.append(_common.claim(paper, what, paper_figure, (" < " if holds else " vs ").join(f"{v:.3f}" for v in means)
                                  + on, "yes" if holds else "no", SECTION))
    pairs = [(joint, sep, output) for output in OUTPUTS for joint, sep in JOINT]
    what = "one model over all architectures has lower NMSE than one per architecture (GP, Arc GP; both outputs)"
    paper_figure = ", ".join(f"{j} {_paper_mean(j, o):.3f} vs {_paper_mean(s, o):.3f} ({o})" for j, s, o in pairs)
    if not all(f"{m}/{o}" in stat for j, s, o in pairs for m in (j, s)):
        return rows + [_common.claim(paper, what, paper_figure, "–", "not run", SECTION)]
    better = [stat[f"{j}/{o}"][0] < stat[f"{s}/{o}"][0] for j, s, o in pairs]
    return rows + [_common.claim(paper, what, paper_figure, ", ".join(
        f"{j} {stat[f'{j}/{o}'][0]:.3f} vs {stat[f'{s}/{o}'][0]:.3f} ({o})" for j, s, o in pairs)
        + f": {sum(better)} of {len(pairs)}{on}", "yes" if all(better) else "partly" if any(better) else "no", SECTION)]


if __name__ == "__main__":
    main()
