"""The README's conditional example at a small budget: which leaf each model ends in, and how good its best is.

The README's space and loss ``|lr − 0.003| + (|momentum − 0.9| if sgd else 0.1)``, written in JAX (:func:`loss_jax`):
a best below 0.1 lies in the sgd leaf, which holds the optimum (0). Each setting ``"12/<n_init>[/reversed]"`` is a
problem of the driver; the models run the README's options, hyperparameters by MAP.

    python experiments/conditional_readme.py [--seeds 30] [--n-init 2] [--methods ...] [--reverse]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import driver  # noqa: E402

SECTION, BUDGET, ADAM_FLOOR = "conditional_readme", 12, 0.1  # ADAM_FLOOR: the adam leaf's best value
METHODS = {"tree": {"model": "tree"}, "gp": {"model": "gp"}, "random": {"model": "random"}}  # the README's models
RETIRED = ("tree-ucb", "gp-global", "gp-ei")  # stored arms of the options before issue #28, rendered only


def space(reverse: bool = False):
    """The README's conditional space (``reverse``: its categories listed the other way round, adam first)."""
    import jbo

    return jbo.Space({"optimizer": jbo.Categorical(["adam", "sgd"] if reverse else ["sgd", "adam"]),
                      "momentum": jbo.Real(0.0, 0.99, when={"optimizer": ["sgd"]}),
                      "lr": jbo.Real(1e-4, 1e-1, log=True)})


def loss_jax(config: dict, sgd: int = 0):
    """The README's loss on the values ``jbo.study`` passes (``optimizer`` as its index; ``sgd``'s index)."""
    import jax.numpy as jnp

    momentum = jnp.abs(config["momentum"] - 0.9)
    return jnp.abs(config["lr"] - 0.003) + jnp.where(config["optimizer"] == sgd, momentum, ADAM_FLOOR)


def experiment(setting: str) -> driver.Experiment:
    """The declaration of one setting ``"<budget>/<n_init>[/reversed]"`` (``n_init`` 0: jbo's default)."""
    budget, n_init, *order = setting.split("/")
    sgd = int(bool(order))  # sgd's index: listed second when reversed
    problem = driver.Problem(budget=int(budget), make=lambda: (lambda c: loss_jax(c, sgd), space(bool(sgd)), 0.0))
    design = {"n_init": int(n_init)} if n_init != "0" else {}
    arms = {m: {**o, **design} if m == "random" else {**o, "inference": "map", **design} for m, o in METHODS.items()}
    arms |= dict.fromkeys(RETIRED, {})
    return driver.Experiment(name=SECTION, title="The README's conditional example at a small budget", arms=arms,
                             problems={setting: problem},
                             columns={"best in the sgd leaf": lambda runs, _: f"{_summary(runs)['sgd']}/{len(runs)}"})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--n-init", type=int, default=2, help="initial design size; 0: jbo's default")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--reverse", action="store_true", help="list the categories adam first: the better leaf second")
    driver.add_store_argument(parser)
    _common.add_chunk_argument(parser)
    _common.add_output_arguments(parser)
    if (args := _common.start(parser, argv)) is None:
        return
    setting = f"{BUDGET}/{args.n_init}" + "/reversed" * args.reverse
    _common.record_provenance(SECTION, accumulates=True)
    driver.run(experiment(setting), [setting], args.methods, range(args.seeds), args.chunk, args.store)
    _common.regenerate()


def _summary(runs: dict) -> dict:
    best = [min(r["values"]) for r in runs.values()]
    return {"mean": _common.mean_se(best)[0], "sgd": sum(b < ADAM_FLOOR for b in best), "seeds": len(best)}


def _label(setting: str) -> str:
    budget, n_init, *order = setting.split("/")
    design = n_init if n_init != "0" else "default"
    return f"{budget} evaluations, n_init = {design}" + (", categories listed adam first" if order else "")


def report() -> dict:
    results = _common.load_results(f"{SECTION}.json", {})
    lines = ["## The README's conditional example at a small budget", "", _common.header(SECTION),
             "Best value per run (lower is better) and the seeds whose best lies in the sgd leaf, the one holding the"
             " optimum (a best below 0.1, the adam leaf's floor), per setting: `<budget>/<n_init>` (0: jbo's default"
             " design size), `/reversed`: categories listed adam first. `tree-ucb`, `gp-global` (UCB on the whole box)"
             " and `gp-ei`: the options before issue #28 (55a6a09, 2c0080b); runner retired, see the note.", ""]
    for setting in sorted(results):
        lines += [f"**{_label(setting)}**", "", *driver.table(experiment(setting), results), ""]
    return {SECTION: "\n".join(lines).rstrip()}


def claims() -> list[dict]:
    """Issue #28's bar per setting: ``tree`` ends in the better leaf at least as often as ``gp``, its mean best below
    random search's; and issue #57's: the category order changes ``tree``'s share by no more than noise."""
    rows, results = [], _common.load_results(f"{SECTION}.json", {})
    for setting, methods in sorted(results.items()):
        if not all(m in methods for m in ("tree", "gp", "random")):
            continue
        tree, gp, rand = (_summary(methods[m]) for m in ("tree", "gp", "random"))
        rows.append(_common.claim(
            "jbo", f"README's conditional example, {_label(setting)}: tree vs gp vs random",
            "tree in the better leaf as often as gp; mean below random's",
            f"sgd leaf: tree {tree['sgd']}/{tree['seeds']}, gp {gp['sgd']}/{gp['seeds']}; mean best: tree "
            f"{tree['mean']:.3f}, gp {gp['mean']:.3f}, random {rand['mean']:.3f}",
            "yes" if tree["sgd"] >= gp["sgd"] and tree["mean"] < rand["mean"] else "no", SECTION))
        forward = setting.removesuffix("/reversed")
        if setting != forward and "tree" in results.get(forward, {}):
            a, b = _summary(results[forward]["tree"]), tree
            p = (a["sgd"] + b["sgd"]) / (a["seeds"] + b["seeds"])
            noise = 2 * (p * (1 - p) * (1 / a["seeds"] + 1 / b["seeds"])) ** 0.5 + 1 / min(a["seeds"], b["seeds"])
            rows.append(_common.claim(
                "jbo", f"README's conditional example, {_label(setting)}: tree with either category order",
                "the same share in the better leaf within two standard errors",
                f"sgd first {a['sgd']}/{a['seeds']}, adam first {b['sgd']}/{b['seeds']}",
                "yes" if abs(a["sgd"] / a["seeds"] - b["sgd"] / b["seeds"]) <= noise else "no", SECTION))
    return rows


if __name__ == "__main__":
    main()
