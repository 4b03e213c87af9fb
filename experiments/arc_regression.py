"""Swersky et al. (2014), Table 1: NMSE of regression models on Bayesian-optimisation data of a conditional space.

The data (Sec. 3.1): (configuration, validation error) pairs of jbo's MLP problem from the runs of :data:`PLAN`.
Cross-validated: ridge (Linear) and an ARD GP with inactive columns filled randomly, the arc-kernel GP over
``Space.relevance``, and "Separate" models per architecture; GP hyperparameters by MAP (the paper: slice sampling).

    python experiments/arc_regression.py
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

SECTION, DATA_FILE, RESULTS_FILE = "arc_regression", "arc_regression_data.json", "arc_regression.json"
PAPER = {  # Swersky et al. 2014, Table 1 (MNIST BO data, 10-fold): NMSE (mean, std) of the original and log outputs
    "Separate Linear": ((0.812, 0.045), (0.737, 0.049)), "Separate GP": ((0.546, 0.038), (0.446, 0.041)),
    "Separate Arc GP": ((0.535, 0.030), (0.440, 0.031)), "Linear": ((0.876, 0.043), (0.834, 0.047)),
    "GP": ((0.481, 0.031), (0.401, 0.028)), "Arc GP": ((0.421, 0.033), (0.335, 0.028))}
OUTPUTS, ORDERING = ("original", "log"), ("Arc GP", "GP", "Linear")  # the paper's ordering the summary checks
JOINT = (("GP", "Separate GP"), ("Arc GP", "Separate Arc GP"))  # (one model for all architectures, one per one)
RIDGE, MIN_ROWS, KERNEL, SEED = 1e-3, 3, "matern52", 0  # SEED: of the folds, the random fill and the fits
DATASET, FOLDS = "digits", 10
PLAN = [("gp", seed, 40) for seed in range(5)] + [("random", 0, 80)]  # the data's runs: (model, seed, evaluations)
claim = functools.partial(_common.claim, "Swersky et al. 2014, Table 1", section=SECTION)


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


def gp(model, key):
    """``fit_predict`` of an exact GP, its hyperparameters by MAP."""
    import jax

    from jbo.data import Standardizer, bucket_size, pad_data
    from jbo.inference import infer

    mean = jax.jit(lambda ps, data, x: jax.vmap(lambda p: model.predict(model.condition(p, data), x)[0])(ps).mean(0))

    def fit_predict(x_train, y_train, x_test):
        standardizer = Standardizer.fit(y_train)
        data = pad_data(x_train, standardizer.forward(y_train))
        params = infer(key, model, data, "map", num_restarts=4).params
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
            if rows.sum() >= MIN_ROWS and np.ptp(yt[rows]) > 0:
                out[test] = fit_predict(xt[rows], yt[rows], xs[test])
            else:
                out[test] = yt[rows].mean() if rows.any() else yt.mean()
        return out

    return predict


def predictors(space) -> dict:
    """``method -> (inactive columns "random" or "constant", fit_predict(x_train, y_train, a_train, x_test, a_test))``."""
    import jax

    from jbo.kernels import make_arc_kernel, make_kernel
    from jbo.surrogates import exact_gp

    plain, arc = exact_gp(make_kernel(KERNEL)), exact_gp(make_arc_kernel(KERNEL, space.relevance))
    k = jax.random.split(jax.random.key(SEED), 4)
    joint = lambda f: lambda xt, yt, at, xs, as_: f(xt, yt, xs)  # noqa: E731
    return {"Separate Linear": ("constant", separate(linear)),
            "Separate GP": ("constant", separate(gp(plain, k[0]))),
            "Separate Arc GP": ("constant", separate(gp(arc, k[1]))),
            "Linear": ("random", joint(linear)),
            "GP": ("random", joint(gp(plain, k[2]))),
            "Arc GP": ("random", joint(gp(arc, k[3])))}


def data_runs(problem, space, keys) -> tuple[dict, bool]:
    """The cached runs of :data:`PLAN` (``keys``), those missing run first (one initial point per architecture)."""
    import jbo

    meta = {"problem": "mlp", "dataset": DATASET, "inference": "map"}
    cache, ran = _common.load_results(DATA_FILE, {}), False
    cache = cache if cache.get("meta") == meta else {"meta": meta, "runs": {}}
    for key, (model, seed, budget) in zip(keys, PLAN):
        if key in cache["runs"]:
            continue
        start, ran = time.perf_counter(), True
        options = {} if model == "random" else {"inference": "map"}
        history = jbo.minimize(problem.evaluate, space, budget=budget, model=model, seed=seed,
                               n_init=len(space.leaves()), **options).history
        cache["runs"][key] = {"configs": [h["config"] for h in history], "values": [h["value"] for h in history],
                              "seconds": time.perf_counter() - start}
        _common.write_json(os.path.join(_common.RESULTS, DATA_FILE), cache)
    return cache, ran


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _common.add_output_arguments(parser)
    if _common.start(parser, argv) is None:
        return
    from sklearn.model_selection import KFold

    from jbo.benchmarks import get_problem
    from jbo.metrics import nmse

    problem, keys = get_problem("mlp", dataset=DATASET), [f"{m}/{s}/{b}" for m, s, b in PLAN]
    space = problem.space()
    cache, ran = data_runs(problem, space, keys)
    configs, y, arch = regression_set(cache["runs"][k] for k in keys)
    meta = {"n": len(y), "folds": FOLDS, "inference": "map", "kernel": KERNEL, "seed": SEED, "data": DATA_FILE}
    results = _common.load_results(RESULTS_FILE, {})
    if results.get("meta") != meta:
        results = {"meta": meta, "nmse": {}, "seconds": {}}
    results["data_runs"] = keys  # the cached runs the NMSE are of
    inputs = {"random": space.encode_many(configs, fill=np.random.default_rng(SEED)),
              "constant": space.encode_many(configs, fill=0.5)}
    folds = list(KFold(FOLDS, shuffle=True, random_state=SEED).split(y))
    for method, (encoding, fit_predict) in predictors(space).items():
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
    """``{(method, output): (mean, std)}`` of jbo's NMSE over the folds."""
    return {tuple(k.split("/")): (float(np.mean(v)), float(np.std(v))) for k, v in results.get("nmse", {}).items()}


def _paper(method: str, output: str) -> float:
    """The paper's mean NMSE."""
    return PAPER[method][OUTPUTS.index(output)][0]


def report() -> dict:
    """jbo's NMSE next to the paper's, and the data they are of."""
    results, cache = _common.load_results(RESULTS_FILE, {}), _common.load_results(DATA_FILE, {"runs": {}})
    runs = {k: cache["runs"][k] for k in results.get("data_runs") or cache["runs"] if k in cache["runs"]}
    lines = ["## Arc-kernel regression study (Swersky et al. 2014, Table 1)", "", _common.header(SECTION)]
    if not results.get("nmse") or not runs:
        return {SECTION: "\n".join(lines + ["Not run."])}
    _, y, arch = regression_set(runs.values())
    meta, data, stat = results["meta"], cache["meta"], _stats(results)
    size = f"{len(y)}" + (f" (the NMSE were computed on {meta['n']})" if len(y) != meta["n"] else "")
    made = ", ".join(f"{k} ({len(r['values'])} evaluations)" for k, r in runs.items())
    counts = ", ".join(f"{a} layers: {(arch == a).sum()}" for a in range(arch.max() + 1))
    lines += [f"{size} (configuration, validation error) pairs of `{data['problem']}` on `{data['dataset']}` from BO"
              f" runs (`model=\"gp\"`, hyperparameters by `{data['inference']}`) and random search: {made}; per"
              f" architecture: {counts}. The paper: 10 BO runs on MNIST (23 hyperparameters, 6 architectures).",
              f"{meta['folds']}-fold NMSE, mean ± std over folds; Linear: ridge ({RIDGE:g}), GP: ARD {meta['kernel']},"
              f" both with inactive columns filled randomly; Arc GP: the arc kernel; separate: one model per number of"
              f" layers. GP hyperparameters by `{meta['inference']}` (the paper: slice sampling); posterior mean.", "",
              "| method | jbo original | jbo log outputs | paper original | paper log outputs | s (both outputs) |",
              "|---|---|---|---|---|---|"]
    for method, paper in PAPER.items():
        ours = ["%.3f ± %.3f" % stat[method, o] if (method, o) in stat else "not run" for o in OUTPUTS]
        seconds = sum(results["seconds"].get(f"{method}/{o}", 0.0) for o in OUTPUTS)
        cells = [method, *ours, *("%.3f ± %.3f" % p for p in paper), f"{seconds:.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return {SECTION: "\n".join(lines)}


def claims() -> list[dict]:
    """Table 1's orderings Arc GP < GP < Linear (per output), and one model over all architectures beating one per
    architecture (``yes``: in all four pairs, ``partly``: some)."""
    results = _common.load_results(RESULTS_FILE, {})
    stat, data = _stats(results), _common.load_results(DATA_FILE, {}).get("meta", {})
    on = f" ({results['meta']['folds']}-fold, {data.get('dataset', '?')})" if stat else ""
    rows = []
    for output in OUTPUTS:
        what = f"NMSE ordering {' < '.join(ORDERING)} ({output} outputs; cross-validated on BO data of a conditional space)"
        paper = " < ".join(f"{_paper(m, output):.3f}" for m in ORDERING) + " (10-fold, MNIST)"
        if not all((m, output) in stat for m in ORDERING):
            rows.append(claim(what, paper, "–", "not run"))
            continue
        means = [stat[m, output][0] for m in ORDERING]
        holds = all(a < b for a, b in zip(means, means[1:]))
        rows.append(claim(what, paper, (" < " if holds else " vs ").join(f"{v:.3f}" for v in means) + on,
                          "yes" if holds else "no"))
    pairs = [(joint, sep, output) for output in OUTPUTS for joint, sep in JOINT]
    what = "one model over all architectures has lower NMSE than one per architecture (GP, Arc GP; both outputs)"
    paper = ", ".join(f"{j} {_paper(j, o):.3f} vs {_paper(s, o):.3f} ({o})" for j, s, o in pairs)
    if not all((m, o) in stat for j, s, o in pairs for m in (j, s)):
        return rows + [claim(what, paper, "–", "not run")]
    better = [stat[j, o][0] < stat[s, o][0] for j, s, o in pairs]
    figure = ", ".join(f"{j} {stat[j, o][0]:.3f} vs {stat[s, o][0]:.3f} ({o})" for j, s, o in pairs)
    verdict = "yes" if all(better) else "partly" if any(better) else "no"
    return rows + [claim(what, paper, f"{figure}: {sum(better)} of {len(pairs)}{on}", verdict)]


if __name__ == "__main__":
    main()
