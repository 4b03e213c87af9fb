"""A scaled-down version of BOCK's Fig. 5 (Oh et al. 2018, §4.2): Bayesian optimisation of the output weights
W2 of a two-layer network, the other weights trained by Adam; BOCK vs the paper's Matérn baseline vs random search.

The paper trains ``784 → N_hidden → 10`` (ReLU) on MNIST with W2 (10 × N_hidden = 100, 200, 500 entries)
chosen by BO and W1, b1, b2 trained by Adam on the training set for each suggested W2; the validation loss is
the objective. Here the data are scikit-learn's bundled digits (8 × 8 images, 1 797 samples, no download):
``64 → N_hidden → 10``, pixels scaled to [0, 1], a fixed split into 1 000 training, 400 validation and 397
test images. W2 lives in ``[-1, 1]^{10 × N_hidden}`` (the reference code passes BOCK's ``[-1, 1]`` coordinates
to the network as the weights). Given W2, W1 (Glorot-normal), b1 and b2 (zeros) start from one fixed draw and
are trained by full-batch Adam (``--train-steps``, step size 0.01) on the training images; the objective is the
validation cross-entropy. Everything is a JAX function, so ``jbo.minimize_many`` runs all seeds of a method in
one compiled program. Reported beside the best validation loss: the validation and test error of the network
at the best W2 (the same training), and ``‖W2‖_F`` (the paper's Table 4: BOCK's optimum lies near the centre).
A reference row trains every weight, W2 included, with the same Adam from the same start (the paper's
"Adam-SGD").

Each (N_hidden, method) runs its missing seeds in one :func:`jbo.study` call of one arm (the methods are
different models: they would not share a program). Results go to ``experiments/results/bock_mlp_weights.json``;
the run's provenance is recorded and BENCHMARKS.md regenerated from the stored results (``report()``,
``claims()``); ``--report-only`` only regenerates.

    python experiments/bock_mlp_weights.py [--hidden 10] [--budget 200] [--seeds 3] [--methods bock matern random]
        [--report-only] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

RESULTS_FILE = "bock_mlp_weights.json"
SECTION = "bock_mlp_weights"
#: The commit that made BOCK's default the paper's model (the objective's units, the centre start): ``bock`` rows
#: stored before it ran on standardised targets under jbo's priors from the Sobol start.
UNITS_CHANGE = "d49dc7a"
#: Oh et al. 2018, Table 3 (test loss) and Table 4 (‖W2‖_F), mean ± std over 5 runs, by W2's entries.
PAPER_TEST_LOSS = {"bock": {100: "0.2847 ± 0.0314", 200: "0.1778 ± 0.0156", 500: "0.0993 ± 0.0034"},
                   "matern": {100: "0.3189 ± 0.0334", 200: "0.2350 ± 0.0130", 500: "0.2012 ± 0.0183"}}
PAPER_NORM = {"bock": {100: "2.8805 ± 1.1378", 200: "3.3917 ± 1.6424", 500: "1.9467 ± 0.2183"},
              "matern": {100: "6.0120 ± 0.2843", 200: "8.6870 ± 0.2014", 500: "13.1189 ± 0.3077"}}
METHODS = ("bock", "matern", "random")
SPLIT = (1000, 400)  # training and validation images; the rest (397) is the test set
LEARNING_RATE = 0.01


def digits():
    """``{"train", "valid", "test"}``: ``(x (n, 64) in [0, 1], labels (n,))`` under a fixed permutation."""
    import numpy as np
    from sklearn.datasets import load_digits

    data = load_digits()
    order = np.random.default_rng(0).permutation(len(data.target))
    x, y = data.data[order] / 16.0, data.target[order]
    a, b = SPLIT[0], SPLIT[0] + SPLIT[1]
    return {"train": (x[:a], y[:a]), "valid": (x[a:b], y[a:b]), "test": (x[b:], y[b:])}


def network(hidden: int, train_steps: int):
    """``(train, evaluate, init)``: ``train(w2, params) -> params`` (W1, b1, b2 by Adam, W2 fixed unless it is
    in ``params``), ``evaluate(params, w2, split) -> (loss, error)``, ``init`` the fixed start."""
    import jax
    import jax.numpy as jnp
    import optax

    sets = {k: (jnp.asarray(x), jnp.asarray(y)) for k, (x, y) in digits().items()}
    k1, _ = jax.random.split(jax.random.key(0))
    init = {"w1": jax.nn.initializers.glorot_normal()(k1, (64, hidden), jnp.float64),
            "b1": jnp.zeros(hidden), "b2": jnp.zeros(10)}

    def loss_and_error(params, w2, split):
        x, y = sets[split]
        logits = jax.nn.relu(x @ params["w1"] + params["b1"]) @ w2.T + params["b2"]
        loss = jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, y))
        return loss, jnp.mean(jnp.argmax(logits, axis=-1) != y)

    optimizer = optax.adam(LEARNING_RATE)

    def train(w2, params):
        """Full-batch Adam on the training images; ``params`` may hold ``"w2"`` (then it is trained too)."""

        def objective(p):
            return loss_and_error(p, p.get("w2", w2), "train")[0]

        def step(carry, _):
            p, state = carry
            grads = jax.grad(objective)(p)
            updates, state = optimizer.update(grads, state, p)
            return (optax.apply_updates(p, updates), state), None

        (params, _), _ = jax.lax.scan(step, (params, optimizer.init(params)), None, length=train_steps)
        return params

    return train, loss_and_error, init


def names(hidden: int) -> list[str]:
    return [f"w{i:03d}" for i in range(10 * hidden)]


def space(hidden: int):
    import jbo

    return jbo.Space({n: jbo.Real(-1.0, 1.0) for n in names(hidden)})


def objective(hidden: int, train_steps: int):
    """The BO objective: validation cross-entropy after training W1, b1, b2 for the given W2 (a JAX function
    of a configuration, as ``jbo.minimize_many`` wants)."""
    import jax.numpy as jnp

    train, loss_and_error, init = network(hidden, train_steps)
    keys = names(hidden)

    def fn(config):
        w2 = jnp.stack([jnp.asarray(config[k], jnp.float64) for k in keys]).reshape(10, hidden)
        return loss_and_error(train(w2, init), w2, "valid")[0]

    return fn


def assess(hidden: int, train_steps: int, w2):
    """Validation / test loss and error of the network trained for ``w2`` ``(10, hidden)``, and ``‖W2‖_F``."""
    import jax
    import numpy as np

    train, loss_and_error, init = network(hidden, train_steps)
    params = jax.jit(train)(jax.numpy.asarray(w2), init)
    out = {"w2_norm": float(np.linalg.norm(w2))}
    for split in ("valid", "test"):
        loss, error = loss_and_error(params, jax.numpy.asarray(w2), split)
        out[f"{split}_loss"], out[f"{split}_error"] = float(loss), float(error)
    return out


def adam_reference(hidden: int, train_steps: int):
    """Every weight trained by the same Adam from the same start (W2 Glorot-normal): the paper's "Adam-SGD"."""
    import jax
    import numpy as np

    train, loss_and_error, init = network(hidden, train_steps)
    w2 = jax.nn.initializers.glorot_normal()(jax.random.split(jax.random.key(0))[1], (10, hidden), np.float64)
    params = jax.jit(train)(w2, dict(init, w2=w2))
    out = {"w2_norm": float(np.linalg.norm(params["w2"]))}
    for split in ("valid", "test"):
        loss, error = loss_and_error(params, params["w2"], split)
        out[f"{split}_loss"], out[f"{split}_error"] = float(loss), float(error)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, nargs="+", default=[10], help="N_hidden (W2 has 10 × N_hidden entries)")
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-init", type=int, default=2)
    parser.add_argument("--train-steps", type=int, default=100)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--maximize", type=json.loads, default=None, help="JSON dict of search sizes (smoke tests)")
    parser.add_argument("--results", default=None, help=f"results JSON (default experiments/results/{RESULTS_FILE});"
                        " runs stored elsewhere record no provenance and are not in the report")
    _common.add_output_arguments(parser)
    parser.add_argument("--no-report", action="store_true", help="leave BENCHMARKS.md alone")
    # --report-only is handled below, where --no-report can still skip the report
    args = _common.start(parser, argv, handle_report_only=False)
    import numpy as np

    import jbo

    path = args.results or os.path.join(_common.RESULTS, RESULTS_FILE)
    results = _common.read_json(path, {})
    before = json.dumps(results, sort_keys=True)
    if not args.report_only:
        for hidden in args.hidden:
            dim = 10 * hidden
            ref_key = f"{dim}/adam/{args.train_steps}"
            if ref_key not in results:
                results = _common.merge_result(path, [ref_key], adam_reference(hidden, args.train_steps))
            fn, sp = objective(hidden, args.train_steps), space(hidden)
            for method in args.methods:
                key = f"{dim}/{method}/{args.budget}/init{args.n_init}/steps{args.train_steps}"
                done = results.get(key, {}).get("seeds", {})
                todo = [s for s in range(args.seeds) if str(s) not in done]
                if not todo:
                    continue
                options = {} if method == "random" else {"n_init": args.n_init}
                if method == "bock":
                    options["units"] = "objective"  # the paper's model (jbo's default bock is scale-free)
                if args.maximize and method != "random":
                    options["maximize"] = args.maximize
                # one jbo.study of one arm: the methods are different models and would not share a program
                result = jbo.study(fn, sp, args.budget, todo, {method: {"model": method, **options}})
                records = []
                for seed, values, x in zip(todo, result.values[0], result.x[0]):
                    best = int(np.nanargmin(values))
                    w2 = (2.0 * x[best] - 1.0).reshape(10, hidden)  # the unit cube to [-1, 1]
                    record = {"values": [float(v) for v in values], **assess(hidden, args.train_steps, w2)}
                    records.append(([key, "seeds", str(seed)], record))
                call = {"seeds": todo, "options": options, "seconds": result.seconds,
                        "compile_seconds": result.compile_seconds, "date": datetime.date.today().isoformat(),
                        "commit": _common.git_revision()}
                results = _common.merge_results(path, records + [([key, "calls", ",".join(map(str, todo))], call)])
                print(f"{key} seeds {todo}: best validation loss {result.best_values[0].mean():.4f} "
                      f"({result.seconds:.0f} s, compile {result.compile_seconds:.0f} s)", flush=True)
        if args.results is None and json.dumps(results, sort_keys=True) != before:
            _common.record_provenance(SECTION)
    if not args.no_report:
        _common.regenerate()


def report() -> None:
    """Rewrite the ``bock_mlp_weights`` section from the stored results (no runs)."""
    write_report(_common.load_results(RESULTS_FILE, {}))


def before_units_change(commit: str) -> bool | None:
    """Whether ``commit`` precedes :data:`UNITS_CHANGE` (``None`` where git cannot tell)."""
    import subprocess

    def git(*args):
        return subprocess.run(["git", *args], cwd=_common.ROOT, capture_output=True, text=True, check=False)

    ancestor, same = git("merge-base", "--is-ancestor", commit, UNITS_CHANGE), git("rev-parse", commit, UNITS_CHANGE)
    if ancestor.returncode not in (0, 1) or same.returncode:
        return None
    return ancestor.returncode == 0 and len(set(same.stdout.split())) == 2


def old_bock(entry: dict) -> bool:
    """Whether a ``bock`` entry's runs took BOCK's defaults of before :data:`UNITS_CHANGE` (no explicit units)."""
    return any("units" not in c.get("options", {}) and before_units_change(c.get("commit", "")) is True
               for c in entry.get("calls", {}).values())


def entries_by_dim(results: dict) -> dict:
    """``{W2 entries: {method: entry}}`` of the stored BO runs (per method the entry with the most seeds)."""
    out = {}
    for key, entry in results.items():
        parts = key.split("/")
        if parts[1] == "adam" or not entry.get("seeds"):
            continue
        current = out.setdefault(int(parts[0]), {}).get(parts[1])
        if current is None or len(entry["seeds"]) > len(current["seeds"]):
            out[int(parts[0])][parts[1]] = entry
    return out


def claims() -> list[dict]:
    """Oh et al.'s §4.2 at each size of W2 where BOCK and Matérn both ran: Fig. 5 / Table 3, BOCK's best
    validation loss and the test loss at its W2 below Matérn's (``yes`` for both, ``partly`` for one, ``no``);
    Table 4, BOCK's ‖W2‖_F below Matérn's (``yes`` / ``no``). Sizes of the paper not run: one ``not run`` row."""
    import numpy as np

    results = _common.load_results(RESULTS_FILE, {})
    by_dim = entries_by_dim(results)
    rows = []
    for dim in sorted(set(PAPER_TEST_LOSS["bock"]) | set(by_dim)):
        bock, matern = by_dim.get(dim, {}).get("bock"), by_dim.get(dim, {}).get("matern")
        if bock is None or matern is None:
            continue
        recs = {m: [e["seeds"][s] for s in sorted(e["seeds"], key=int)] for m, e in (("bock", bock), ("matern", matern))}
        valid = {m: float(np.mean([np.nanmin(r["values"]) for r in rs])) for m, rs in recs.items()}
        test = {m: float(np.mean([r["test_loss"] for r in rs])) for m, rs in recs.items()}
        norm = {m: [r["w2_norm"] for r in rs] for m, rs in recs.items()}
        scope = (f"digits, {len(recs['bock'])} seeds, {len(recs['bock'][0]['values'])} evaluations"
                 + ("; BOCK of before d49dc7a: standardised targets, Sobol start" if old_bock(bock) else ""))
        wins = (valid["bock"] < valid["matern"]) + (test["bock"] < test["matern"])
        rows.append(_common.claim(
            "Oh et al. 2018, Fig. 5 / Table 3", f"BO of a network's output weights W2 ({dim} entries): BOCK's validation"
            " and test loss below the Matérn baseline's", f"test loss {PAPER_TEST_LOSS['bock'].get(dim, '–')} vs"
            f" {PAPER_TEST_LOSS['matern'].get(dim, '–')} (MNIST, 5 runs; validation loss plotted)",
            f"validation {valid['bock']:.4f} vs {valid['matern']:.4f}, test {test['bock']:.4f} vs {test['matern']:.4f}"
            f" ({scope})", "yes" if wins == 2 else "partly" if wins else "no", SECTION))
        rows.append(_common.claim(
            "Oh et al. 2018, Table 4", f"BOCK's optimum W2 ({dim} entries) nearer the centre: ‖W2‖_F below Matérn's",
            f"{PAPER_NORM['bock'].get(dim, '–')} vs {PAPER_NORM['matern'].get(dim, '–')}",
            f"{np.mean(norm['bock']):.2f} ± {np.std(norm['bock'], ddof=1):.2f} vs {np.mean(norm['matern']):.2f} ±"
            f" {np.std(norm['matern'], ddof=1):.2f}", "yes" if np.mean(norm["bock"]) < np.mean(norm["matern"]) else "no",
            SECTION))
    missing = [d for d in PAPER_TEST_LOSS["bock"] if not ({"bock", "matern"} <= set(by_dim.get(d, {})))]
    if missing:
        rows.append(_common.claim(
            "Oh et al. 2018, Tables 3–4", "BOCK ahead of Matérn on W2 with " + ", ".join(map(str, missing)) + " entries",
            "; ".join(f"{d}: test loss {PAPER_TEST_LOSS['bock'][d]} vs {PAPER_TEST_LOSS['matern'][d]}" for d in missing),
            "–", "not run", SECTION))
    return rows


def write_report(results: dict) -> None:
    import numpy as np

    from jbo.plotting import plot_convergence

    def ms(values, digits=4):
        values = np.asarray(values, float)
        return f"{values.mean():.{digits}f} ± {values.std(ddof=1):.{digits}f}" if len(values) > 1 else \
            f"{values.mean():.{digits}f}"

    lines = ["## BOCK Fig. 5, scaled down: BO of a network's output weights W2 (digits)", "", _common.header(SECTION),
             "`64 → N_hidden → 10` ReLU network on scikit-learn's digits (1 000 train / 400 validation / 397 test"
             " images); W2 ∈ [-1, 1]^{10 × N_hidden} chosen by BO, W1, b1, b2 trained by full-batch Adam"
             " (step 0.01) from one fixed start for each W2; objective: validation cross-entropy. Mean ± std over"
             " seeds of the best validation loss, and of the validation / test error and ‖W2‖_F at that W2."
             " \"Adam (all weights)\": W2 trained too, same Adam, same start (the paper's Adam-SGD row). Paper"
             " (MNIST, 784 inputs, 5 runs; Fig. 5 / Tables 3–4): BOCK reaches lower validation and test loss than"
             " Matérn and Spearmint at 100, 200 and 500 dimensions, with a much smaller ‖W2‖_F (e.g. 500-d test"
             " loss BOCK 0.0993 ± 0.0034, Matérn 0.2012 ± 0.0183, Adam-SGD 0.1199 ± 0.0071).", "",
             "| W2 entries | method | evaluations (n_init) | seeds | Adam steps | best validation loss |"
             " validation error | test loss | test error | ‖W2‖_F | s / run (compile) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    curves, old = {}, []
    for key in sorted(results, key=lambda k: (int(k.split("/")[0]), k)):
        entry, parts = results[key], key.split("/")
        if parts[1] == "adam":
            e = entry
            lines.append(f"| {parts[0]} | Adam (all weights) | – | – | {parts[2]} | {e['valid_loss']:.4f} |"
                         f" {e['valid_error']:.4f} | {e['test_loss']:.4f} | {e['test_error']:.4f} | {e['w2_norm']:.2f} | – |")
            continue
        dim, method, budget, init, steps = parts
        seeds = sorted(entry.get("seeds", {}), key=int)
        if not seeds:
            continue
        recs = [entry["seeds"][s] for s in seeds]
        best = [np.nanmin(r["values"]) for r in recs]
        calls = list(entry.get("calls", {}).values())
        per_seed = sum(c["seconds"] - c["compile_seconds"] for c in calls) / len(seeds)
        searched = any(c.get("options", {}).get("maximize") for c in calls)
        compile_text = ", ".join(f"{c['compile_seconds']:.0f}" for c in calls)
        n_init = "–" if method == "random" else init.removeprefix("init")
        lines.append(f"| {dim} | {method}{' (smaller search)' if searched else ''} | {budget} ({n_init})"
                     f" | {len(seeds)} | {steps.removeprefix('steps')} | {ms(best)} | {ms([r['valid_error'] for r in recs])} |"
                     f" {ms([r['test_loss'] for r in recs])} | {ms([r['test_error'] for r in recs])} |"
                     f" {ms([r['w2_norm'] for r in recs], 2)} | {per_seed:.0f} ({compile_text}) |")
        curves.setdefault((dim, budget, steps), {})[method] = np.stack([np.asarray(r["values"], float) for r in recs])
        if method == "bock" and old_bock(entry):
            old.append(dim)
    if old:
        lines += ["", f"The `bock` rows with {', '.join(old)} entries were run before {UNITS_CHANGE}: their BOCK is today's"
                  " `units=\"standardised\"` from the Sobol start, not today's default (the objective's units, the"
                  " centre start)."]
    lines += ["", "Summary verdicts: BOCK is ahead of Matérn where its mean best validation loss and the mean test loss"
              " at its W2 are both lower (one of the two: partly), and nearer the centre where its mean ‖W2‖_F is"
              " lower."]
    figures = []
    for (dim, budget, steps), by_method in sorted(curves.items()):
        path = os.path.join(_common.FIGURES, f"bock_mlp_weights_{dim}.png")
        if _common.PLOTS:
            os.makedirs(_common.FIGURES, exist_ok=True)
            plot_convergence(by_method, optimum=None, log=False, path=path,
                             title=f"W2 with {dim} entries: best validation loss ({budget} evaluations)")
        figures.append(f"`{_common.display_path(path)}`")
    if figures:
        lines += ["", "Figures (best validation loss so far, mean ± standard error over seeds): "
                  + ", ".join(figures) + "."]
    _common.update_section(SECTION, "\n".join(lines))


if __name__ == "__main__":
    main()
