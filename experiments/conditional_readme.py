"""The README's conditional example at a small budget: which leaf each model ends in, and how good its best is.

The README's conditional space (``optimizer`` in {sgd, adam}; ``momentum`` only with sgd; a shared log-scale
``lr``) and its loss ``|lr − 0.003| + (|momentum − 0.9| if sgd else 0.1)``: the sgd leaf holds the optimum (0,
at lr = 0.003 and momentum = 0.9), the adam leaf's best is 0.1, so a run whose best is below 0.1 has found the
better leaf and used its extra parameter. Each model runs the README's options (``model=...,
inference="map"``) at ``--budget`` evaluations (default 12) with ``--n-init`` initial points (default 2; ``0``:
jbo's default design size), every seed of every method in one ``jbo.study`` on the loss written in JAX
(:func:`loss_jax`; each run is the ``jbo.minimize(loss, space, ..., seed=s)`` of the README's Python loss,
the same values).

Methods: ``tree`` (the default tree GP, EI), ``gp`` (a GP blind to the structure, its default: UCB in a trust
region), ``random`` search, and (named with ``--methods``) ``tree-ucb`` (the tree with UCB), ``gp-global`` (UCB on
the whole box) and ``gp-ei`` (EI on the whole box: the GP's default before issue #28's measurements). Results go to
the resumable ``experiments/results/conditional_readme.json`` (``{"<budget>/<n_init>": {method: {seed:
record}}}``), from which the ``conditional_readme`` section and its claim are written.

    python experiments/conditional_readme.py [--seeds 30] [--budget 12] [--n-init 2] [--methods tree gp random
        tree-ucb gp-global gp-ei] [--reverse]
    python experiments/conditional_readme.py --report-only
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

SECTION = "conditional_readme"
RESULTS_FILE = "conditional_readme.json"
#: method -> options: the README's models with their defaults, and the GP's and the tree's defaults before issue
#: #28's measurements (exploration, item 2).
METHODS = {"tree": {"model": "tree"}, "gp": {"model": "gp"}, "random": {"model": "random"},
           "tree-ucb": {"model": "tree", "acquisition": "ucb"}, "gp-global": {"model": "gp", "trust_region": False},
           "gp-ei": {"model": "gp", "acquisition": "ei", "trust_region": False}}
#: The methods a plain run measures.
DEFAULT_METHODS = ("tree", "gp", "random")
ADAM_FLOOR = 0.1  # the adam leaf's best value: a best below it lies in the sgd leaf


def space(reverse: bool = False):
    """The README's conditional space (``reverse``: its categories listed the other way round, adam first)."""
    import jbo

    return jbo.Space({"optimizer": jbo.Categorical(["adam", "sgd"] if reverse else ["sgd", "adam"]),
                      "momentum": jbo.Real(0.0, 0.99, when={"optimizer": ["sgd"]}),
                      "lr": jbo.Real(1e-4, 1e-1, log=True)})


def loss_jax(config: dict):
    """The README's loss on the values ``jbo.study`` passes (``optimizer`` as its index: 0 is sgd); 0 at sgd
    with lr = 0.003 and momentum = 0.9, at least 0.1 with adam (tests/test_readme.py checks it against the
    README's Python loss)."""
    import jax.numpy as jnp

    momentum_term = jnp.where(config["optimizer"] == 0, jnp.abs(config["momentum"] - 0.9), ADAM_FLOOR)
    return jnp.abs(config["lr"] - 0.003) + momentum_term


def loss_jax_reversed(config: dict):
    """:func:`loss_jax` on the space with its categories reversed (``optimizer`` 1 is sgd)."""
    return loss_jax({**config, "optimizer": 1 - config["optimizer"]})


def arms(methods, n_init: int) -> dict:
    """``method -> options`` of the README's call (MAP for the models), with ``n_init`` when given."""
    return {m: {**METHODS[m], **({} if m == "random" else {"inference": "map"}), **({"n_init": n_init} if n_init else {})}
            for m in methods}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--budget", type=int, default=12)
    parser.add_argument("--n-init", type=int, default=2, help="initial design size; 0: jbo's default")
    parser.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS), choices=list(METHODS))
    parser.add_argument("--reverse", action="store_true",
                        help="list the categories the other way round (adam, sgd): the better leaf second")
    _common.add_chunk_argument(parser)
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv)
    if args is None:
        return
    path = os.path.join(_common.RESULTS, RESULTS_FILE)
    _common.record_provenance(SECTION, accumulates=True)
    key = f"{args.budget}/{args.n_init}" + ("/reversed" if args.reverse else "")
    stored = _common.load_results(RESULTS_FILE, {}).get(key, {})
    missing = {m: [s for s in range(args.seeds) if str(s) not in stored.get(m, {})] for m in args.methods}
    seeds = sorted({s for m in missing.values() for s in m})
    todo = [m for m in args.methods if missing[m]]
    if todo:  # a method with missing seeds: their union runs once, each method keeps its own
        calls = _common.run_arms(loss_jax_reversed if args.reverse else loss_jax, space(args.reverse), args.budget,
                                 seeds, arms(todo, args.n_init), args.chunk)
        for method, part, values, call in calls:
            records = _common.seed_records(part, values, call)
            _common.merge_results(path, [([key, method, s], r) for s, r in records.items() if int(s) in missing[method]])
            best = [min(v) for v in values]
            print(f"{method}: mean best {sum(best) / len(best):.4f}, {sum(b < ADAM_FLOOR for b in best)}/{len(best)} "
                  f"in the sgd leaf ({call['seconds']:.1f} s, compiling {call['compile_seconds']:.1f} s)", flush=True)
    _common.regenerate()


# ----------------------------------------------------------------------------------------------
# The report
# ----------------------------------------------------------------------------------------------
def summary(runs: dict) -> dict:
    """Mean best (and its standard error), seeds whose best lies in the sgd leaf (below the adam leaf's floor),
    seeds, and the time per run (:func:`_common.timing`: compilation apart for compiled runs)."""
    best = [min(r["values"]) for r in runs.values()]
    mean, se = _common.mean_se(best)
    return {"mean": mean, "se": se, "sgd": sum(b < ADAM_FLOOR for b in best), "seeds": len(best),
            "timing": _common.timing(_common.calls_of(runs))}


def _label(key: str) -> str:
    budget, n_init, *order = key.split("/")
    label = f"{budget} evaluations, n_init = {n_init if n_init != '0' else 'default'}"
    return label + (", categories listed adam first" if order else "")


def section(results: dict) -> str:
    lines = ["## The README's conditional example at a small budget", "", _common.header(SECTION),
             "Best value per run (mean ± standard error over seeds; lower is better), and the seeds whose best lies "
             "in the sgd leaf, the one holding the optimum (a best below 0.1, the adam leaf's floor). "
             "Budgets include the initial design.", ""]
    for key, methods in sorted(results.items()):
        lines += [f"**{_label(key)}**", "", "| method | seeds | mean best | best in the sgd leaf | s per run | compiling [s] |",
                  "|---|---|---|---|---|---|"]
        for method in (m for m in METHODS if m in methods):
            s = summary(methods[method])
            lines.append(f"| {method} | {s['seeds']} | {s['mean']:.4f} ± {s['se']:.4f} | {s['sgd']}/{s['seeds']} "
                         f"| {_common.seconds_text(s['timing']['per_seed'])} | {_common.compile_text(s['timing'])} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def report() -> None:
    results = _common.load_results(RESULTS_FILE)
    if results:
        _common.update_section(SECTION, section(results))


def claims() -> list[dict]:
    """Issue #28's bar per stored (budget, n_init): ``tree`` ends in the better leaf at least as often as ``gp``,
    and its mean best is below random search's."""
    rows = []
    for key, methods in sorted((_common.load_results(RESULTS_FILE) or {}).items()):
        if not all(m in methods for m in DEFAULT_METHODS):
            continue
        tree, gp, rand = (summary(methods[m]) for m in DEFAULT_METHODS)
        held = tree["sgd"] >= gp["sgd"] and tree["mean"] < rand["mean"]
        rows.append(_common.claim(
            "jbo", f"README's conditional example, {_label(key)}: tree vs gp vs random",
            "tree in the better leaf as often as gp; mean below random's",
            f"sgd leaf: tree {tree['sgd']}/{tree['seeds']}, gp {gp['sgd']}/{gp['seeds']}; mean best: tree "
            f"{tree['mean']:.3f}, gp {gp['mean']:.3f}, random {rand['mean']:.3f}",
            "yes" if held else "no", SECTION))
        original = methods if key.endswith("/reversed") else None
        base = (_common.load_results(RESULTS_FILE) or {}).get(key.rsplit("/", 1)[0], {}).get("tree") if original else None
        if base:  # issue #57: the order the categories are listed in changes nothing beyond noise
            a, b = summary(base), tree
            p = (a["sgd"] + b["sgd"]) / (a["seeds"] + b["seeds"])
            noise = 2 * (p * (1 - p) * (1 / a["seeds"] + 1 / b["seeds"])) ** 0.5 + 1 / min(a["seeds"], b["seeds"])
            same = abs(a["sgd"] / a["seeds"] - b["sgd"] / b["seeds"]) <= noise
            rows.append(_common.claim(
                "jbo", f"README's conditional example, {_label(key)}: tree with either category order",
                "the same share in the better leaf within two standard errors",
                f"sgd first {a['sgd']}/{a['seeds']}, adam first {b['sgd']}/{b['seeds']}", "yes" if same else "no",
                SECTION))
    return rows


if __name__ == "__main__":
    main()
