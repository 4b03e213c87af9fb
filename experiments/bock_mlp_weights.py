"""A scaled-down BOCK Fig. 5 (Oh et al. 2018, §4.2): BO of the output weights W2 ∈ [-1, 1]^{10 × N_hidden} of a
``64 → N_hidden → 10`` ReLU network on scikit-learn's digits (the paper's: MNIST), whose other weights full-batch Adam
trains for each W2; BOCK (the paper's model) vs the paper's Matérn baseline vs random search. Runs are stored under
``"entries/method/budget/initN/stepsS"``, the all-Adam reference (the paper's "Adam-SGD") under ``"entries/adam/S"``.

    python experiments/bock_mlp_weights.py [--hidden 10] [--budget 200] [--seeds 3] [--methods bock matern random]
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import bock_table1 as t1  # noqa: E402

RESULTS_FILE, SECTION = "bock_mlp_weights.json", "bock_mlp_weights"
TRAIN_STEPS = 100  # Adam's steps on the other weights, for each W2
#: method -> options (``bock``: the paper's model).
OPTIONS = {"bock": {"n_init": 2, "units": "objective"}, "matern": {"n_init": 2}, "random": {}}
#: Oh et al. 2018, Table 3 (test loss) and Table 4 (‖W2‖_F), mean ± std over 5 runs, by W2's entries.
PAPER_TEST_LOSS = {"bock": {100: "0.2847 ± 0.0314", 200: "0.1778 ± 0.0156", 500: "0.0993 ± 0.0034"},
                   "matern": {100: "0.3189 ± 0.0334", 200: "0.2350 ± 0.0130", 500: "0.2012 ± 0.0183"}}
PAPER_NORM = {"bock": {100: "2.8805 ± 1.1378", 200: "3.3917 ± 1.6424", 500: "1.9467 ± 0.2183"},
              "matern": {100: "6.0120 ± 0.2843", 200: "8.6870 ± 0.2014", 500: "13.1189 ± 0.3077"}}


def network(hidden: int, train_steps: int):
    """``(train, loss_and_error, init)``: ``train(w2, params)`` runs full-batch Adam (step 0.01) on the training images
    from ``params`` (W1 Glorot-normal, b1, b2 zeros; W2 is trained too where ``params`` holds it),
    ``loss_and_error(params, w2, split)``; a fixed split of the digits into 1 000 / 400 / 397 images."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
    from sklearn.datasets import load_digits

    data = load_digits()
    order = np.random.default_rng(0).permutation(len(data.target))
    x, y = jnp.asarray(data.data[order] / 16.0), jnp.asarray(data.target[order])
    sets = {"train": (x[:1000], y[:1000]), "valid": (x[1000:1400], y[1000:1400]), "test": (x[1400:], y[1400:])}
    init = {"w1": jax.nn.initializers.glorot_normal()(jax.random.split(jax.random.key(0))[0], (64, hidden), jnp.float64),
            "b1": jnp.zeros(hidden), "b2": jnp.zeros(10)}
    optimizer = optax.adam(0.01)

    def loss_and_error(params, w2, split):
        x, y = sets[split]
        logits = jax.nn.relu(x @ params["w1"] + params["b1"]) @ w2.T + params["b2"]
        return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, y)), jnp.mean(logits.argmax(-1) != y)

    def train(w2, params):
        def step(carry, _):
            p, state = carry
            grads = jax.grad(lambda p: loss_and_error(p, p.get("w2", w2), "train")[0])(p)
            updates, state = optimizer.update(grads, state, p)
            return (optax.apply_updates(p, updates), state), None

        return jax.lax.scan(step, (params, optimizer.init(params)), None, length=train_steps)[0][0]

    return train, loss_and_error, init


def objective(hidden: int, train_steps: int):
    """``(fn, space)``: the validation loss after training for the W2 of a configuration (a JAX function)."""
    import jax.numpy as jnp

    import jbo

    train, loss_and_error, init = network(hidden, train_steps)
    names = [f"w{i:03d}" for i in range(10 * hidden)]

    def fn(config):
        w2 = jnp.stack([jnp.asarray(config[k], jnp.float64) for k in names]).reshape(10, hidden)
        return loss_and_error(train(w2, init), w2, "valid")[0]

    return fn, jbo.Space({k: jbo.Real(-1.0, 1.0) for k in names})


def assess(hidden: int, train_steps: int, w2, train_w2: bool = False) -> dict:
    """Validation / test loss and error of the network trained for ``w2`` ``(10, hidden)`` (``train_w2``: W2 trained
    too, from ``w2``), and its ‖W2‖_F."""
    import jax
    import numpy as np

    train, loss_and_error, init = network(hidden, train_steps)
    params = jax.jit(train)(jax.numpy.asarray(w2), dict(init, w2=w2) if train_w2 else init)
    w2 = params.get("w2", jax.numpy.asarray(w2))
    out = {"w2_norm": float(np.linalg.norm(w2))}
    for split in ("valid", "test"):
        loss, error = loss_and_error(params, w2, split)
        out[f"{split}_loss"], out[f"{split}_error"] = float(loss), float(error)
    return out


def run_method(path: str, hidden: int, method: str, budget: int, seeds) -> None:
    """Run ``method``'s missing seeds in one :func:`jbo.study` call; each seed's record holds the objective's values
    and :func:`assess` of its best W2."""
    import numpy as np

    import jbo

    key = f"{10 * hidden}/{method}/{budget}/init2/steps{TRAIN_STEPS}"
    todo = [s for s in seeds if str(s) not in _common.read_json(path, {}).get(key, {}).get("seeds", {})]
    if not todo:
        return
    fn, space = objective(hidden, TRAIN_STEPS)
    result = jbo.study(fn, space, budget, todo, {method: {"model": method, **OPTIONS[method]}})
    records = []
    for seed, values, x in zip(todo, result.values[0], result.x[0]):
        w2 = (2.0 * x[int(np.nanargmin(values))] - 1.0).reshape(10, hidden)  # the unit cube to [-1, 1]
        record = {"values": [float(v) for v in values], **assess(hidden, TRAIN_STEPS, w2)}
        records.append(([key, "seeds", str(seed)], record))
    call = {"seeds": todo, "options": OPTIONS[method], "seconds": result.seconds,
            "compile_seconds": result.compile_seconds, "date": datetime.date.today().isoformat(),
            "commit": _common.git_revision()}
    _common.merge_results(path, records + [([key, "calls", ",".join(map(str, todo))], call)])
    print(f"{key} seeds {todo}: best validation loss {result.best_values[0].mean():.4f}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, nargs="+", default=[10], help="N_hidden (W2 has 10 × N_hidden entries)")
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--methods", nargs="+", default=list(OPTIONS), choices=list(OPTIONS))
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    import jax
    import numpy as np

    path = os.path.join(_common.RESULTS, RESULTS_FILE)
    for hidden in args.hidden:
        adam = f"{10 * hidden}/adam/{TRAIN_STEPS}"  # every weight trained by Adam, W2 from Glorot-normal
        if adam not in _common.read_json(path, {}):
            w2 = jax.nn.initializers.glorot_normal()(jax.random.split(jax.random.key(0))[1], (10, hidden), np.float64)
            _common.merge_result(path, [adam], assess(hidden, TRAIN_STEPS, w2, train_w2=True))
        for method in args.methods:
            run_method(path, hidden, method, args.budget, range(args.seeds))
    _common.record_provenance(SECTION)
    _common.regenerate()


def old_bock(entry: dict) -> bool:
    """Whether a ``bock`` entry ran BOCK's defaults of before d49dc7a (standardised targets, Sobol start): its calls
    name no units (the script has asked for the paper's model, ``units="objective"``, since)."""
    return any("units" not in c.get("options", {}) for c in entry.get("calls", {}).values())


def entries_by_dim(results: dict) -> dict:
    """``{W2 entries: {method: entry}}`` of the stored BO runs (per method the entry with the most seeds)."""
    out = {}
    for key, entry in results.items():
        parts = key.split("/")
        if parts[1] != "adam" and entry.get("seeds"):
            current = out.setdefault(int(parts[0]), {}).get(parts[1])
            if current is None or len(entry["seeds"]) > len(current["seeds"]):
                out[int(parts[0])][parts[1]] = entry
    return out


def mean_std(values, digits: int = 4) -> str:
    import numpy as np

    values = np.asarray(values, float)
    return f"{values.mean():.{digits}f}" + (f" ± {values.std(ddof=1):.{digits}f}" if len(values) > 1 else "")


def row(key: str, entry: dict) -> list:
    """The table's row of a stored entry: the all-Adam reference, or a method's seeds."""
    import numpy as np

    parts = key.split("/")
    if parts[1] == "adam":
        scores = [f"{entry[k]:.4f}" for k in ("valid_loss", "valid_error", "test_loss", "test_error")]
        return [parts[0], "Adam (all weights)", "–", "–", parts[2], *scores, f"{entry['w2_norm']:.2f}", "–"]
    dim, method, budget, init, steps = parts
    recs = [entry["seeds"][s] for s in sorted(entry["seeds"], key=int)]
    calls = list(entry.get("calls", {}).values())
    per_seed = sum(c["seconds"] - c["compile_seconds"] for c in calls) / len(recs)
    compile_seconds = ", ".join(f"{c['compile_seconds']:.0f}" for c in calls)
    n_init = "–" if method == "random" else init.removeprefix("init")
    return [dim, method, f"{budget} ({n_init})", len(recs), steps.removeprefix("steps"),
            mean_std([np.nanmin(r["values"]) for r in recs]),
            *(mean_std([r[k] for r in recs]) for k in ("valid_error", "test_loss", "test_error")),
            mean_std([r["w2_norm"] for r in recs], 2), f"{per_seed:.0f} ({compile_seconds})"]


def report() -> dict:
    results = _common.load_results(RESULTS_FILE, {})
    keys = [k for k in sorted(results, key=lambda k: (int(k.split("/")[0]), k))
            if k.split("/")[1] == "adam" or results[k].get("seeds")]
    lines = ["## BOCK Fig. 5, scaled down: BO of a network's output weights W2 (digits)", "", _common.header(SECTION),
             "`64 → N_hidden → 10` ReLU network on scikit-learn's digits; W2 ∈ [-1, 1]^{10 × N_hidden} chosen by BO, the"
             " other weights trained by Adam for each W2; objective: validation cross-entropy. Mean ± std over seeds;"
             " \"Adam (all weights)\": W2 trained too (the paper's Adam-SGD). Paper (MNIST, 5 runs): BOCK's validation"
             " and test loss below Matérn's at 100, 200 and 500 entries, with a much smaller ‖W2‖_F.", ""]
    lines += t1.table(["W2 entries", "method", "evaluations (n_init)", "seeds", "Adam steps", "best validation loss",
                       "validation error", "test loss", "test error", "‖W2‖_F", "s / run (compile)"],
                      [row(k, results[k]) for k in keys])
    old = [k.split("/")[0] for k in keys if k.split("/")[1] == "bock" and old_bock(results[k])]
    if old:
        lines += ["", f"The `bock` rows with {', '.join(old)} entries ran before d49dc7a: standardised targets from the"
                  " Sobol start, not the paper's model."]
    lines += ["", "BOCK is ahead of Matérn where its mean best validation loss and the mean test loss at its W2 are both"
              " lower (one of the two: partly), nearer the centre where its mean ‖W2‖_F is lower. Figures:"
              " `experiments/figures/bock_mlp_weights_<entries>.png`."]
    return {SECTION: "\n".join(lines)}


def figures() -> None:
    """Per size of W2, the best validation loss so far of each method, mean ± standard error over seeds."""
    import numpy as np

    from jbo.plotting import plot_convergence

    for dim, entries in entries_by_dim(_common.load_results(RESULTS_FILE, {})).items():
        curves = {m: np.stack([np.asarray(r["values"], float) for r in e["seeds"].values()])
                  for m, e in entries.items()}
        plot_convergence(curves, optimum=None, log=False, title=f"W2 with {dim} entries: best validation loss",
                         path=os.path.join(_common.FIGURES, f"bock_mlp_weights_{dim}.png"))


def versus(table: dict, dim: int) -> str:
    """The paper's BOCK figure vs its Matérn figure at ``dim`` entries."""
    return f"{table['bock'].get(dim, '–')} vs {table['matern'].get(dim, '–')}"


def claims() -> list[dict]:
    """Per size of W2 where BOCK and Matérn both ran: Fig. 5 / Table 3 (BOCK's best validation loss and the test
    loss at its W2 below Matérn's: ``yes`` for both, ``partly`` for one) and Table 4 (BOCK's ‖W2‖_F the lower);
    the paper's sizes not run, in one ``not run`` row."""
    import numpy as np

    by_dim, rows = entries_by_dim(_common.load_results(RESULTS_FILE, {})), []
    ran = [dim for dim, entries in sorted(by_dim.items()) if {"bock", "matern"} <= set(entries)]
    for dim in ran:
        recs = {m: [e["seeds"][s] for s in sorted(e["seeds"], key=int)] for m, e in by_dim[dim].items()}
        valid = {m: np.mean([np.nanmin(r["values"]) for r in recs[m]]) for m in ("bock", "matern")}
        test = {m: np.mean([r["test_loss"] for r in recs[m]]) for m in ("bock", "matern")}
        norm = {m: np.array([r["w2_norm"] for r in recs[m]]) for m in ("bock", "matern")}
        scope = f"digits, {len(recs['bock'])} seeds, {len(recs['bock'][0]['values'])} evaluations"
        if old_bock(by_dim[dim]["bock"]):
            scope += "; BOCK of before d49dc7a: standardised targets, Sobol start"
        figure = (f"validation {valid['bock']:.4f} vs {valid['matern']:.4f}, test {test['bock']:.4f} vs"
                  f" {test['matern']:.4f} ({scope})")
        wins = (valid["bock"] < valid["matern"]) + (test["bock"] < test["matern"])
        rows.append(_common.claim(
            "Oh et al. 2018, Fig. 5 / Table 3", f"BO of a network's output weights W2 ({dim} entries): BOCK's"
            " validation and test loss below the Matérn baseline's",
            f"test loss {versus(PAPER_TEST_LOSS, dim)} (MNIST, 5 runs; validation loss plotted)", figure,
            "yes" if wins == 2 else "partly" if wins else "no", SECTION))
        norms = " vs ".join(f"{norm[m].mean():.2f} ± {norm[m].std(ddof=1):.2f}" for m in ("bock", "matern"))
        rows.append(_common.claim(
            "Oh et al. 2018, Table 4", f"BOCK's optimum W2 ({dim} entries) nearer the centre: ‖W2‖_F below Matérn's",
            versus(PAPER_NORM, dim), norms, "yes" if norm["bock"].mean() < norm["matern"].mean() else "no", SECTION))
    missing = [d for d in PAPER_TEST_LOSS["bock"] if d not in ran]
    if missing:
        rows.append(_common.claim(
            "Oh et al. 2018, Tables 3–4", f"BOCK ahead of Matérn on W2 with {', '.join(map(str, missing))} entries",
            "; ".join(f"{d}: test loss {versus(PAPER_TEST_LOSS, d)}" for d in missing), "–", "not run", SECTION))
    return rows


if __name__ == "__main__":
    main()
