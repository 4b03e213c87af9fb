"""Pieces of one's own cost what jbo's own cost: seconds per steady suggestion of the built-in GP and of the same
maths as a kernel, surrogate or acquisition of one's own, on the same Hartmann6 data, in interleaved rounds.

    python experiments/bench_byo.py steady --rounds 7
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _speed  # noqa: E402

BAR = 1.2  # a piece of one's own costs at most 1.2× the built-in of the same maths
BUILT_IN = "built-in GP (kernel=\"matern52\")"
#: The built-in each arm of one's own has the maths of (the ratio the bar is about).
SAME_MATHS = {"kernel object Matern52()": BUILT_IN, "kernel class of one's own": BUILT_IN,
              "exact GP as a SurrogateModel": BUILT_IN, "UCB as a function": "built-in UCB"}


def arms() -> dict:
    """``{arm: options}``: EI (but for UCB) over the whole box, so that each piece runs its built-in's maths and
    search (a SurrogateModel's defaults; the GP's are UCB in a trust region)."""
    import jax.numpy as jnp

    import jbo
    from jbo import kernels, models

    @dataclasses.dataclass(frozen=True)
    class OwnMatern(kernels.Stationary):
        """Matérn-5/2 written as a user would, outside jbo."""

        def profile(self, params, r2):
            r = jnp.sqrt(5.0) * kernels.safe_sqrt(r2)
            return (1.0 + r + r**2 / 3.0) * jnp.exp(-r)

    def own_ucb(mean, var, best):
        return -(mean - jnp.sqrt(2.0 * var))

    def ei(model):
        return {"model": model, "acquisition": "ei", "trust_region": False}

    exact_gp = models.SurrogateModel(surrogate=jbo.surrogates.exact_gp(kernels.Matern52()))
    return {BUILT_IN: ei(models.GP()), "kernel object Matern52()": ei(models.GP(kernel=kernels.Matern52())),
            "kernel class of one's own": ei(models.GP(kernel=OwnMatern())),
            "exact GP as a SurrogateModel": ei(exact_gp),
            "built-in UCB": {**ei(models.GP()), "acquisition": "ucb"},
            "UCB as a function": {**ei(models.GP()), "acquisition": own_ucb},
            "Matern52() + Linear()": ei(models.GP(kernel=kernels.Matern52() + kernels.Linear()))}


def part_steady(args) -> dict:
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem

    problem = get_problem("hartmann6")
    space = problem.space()
    configs = space.decode_many(np.random.default_rng(0).random((args.n, space.dim)))
    values = [problem.evaluate(c) for c in configs]

    def ask(opt):  # a suggestion at the same N: the pending point is forgotten
        opt.ask(size=args.size)
        opt.state = opt.state._replace(pending=opt.state.pending[:0])

    optimizers, first_two, times = {}, {}, {}
    for name, options in arms().items():
        # the SurrogateModel is a StepConfig: as the GP's (continued chain) its warm fits take 0 warm-up sweeps
        extra = {"num_warmup": 0} if isinstance(options["model"], jbo.models.SurrogateModel) else {}
        model = options["model"].replace(inference=args.inference, **extra)
        opt = optimizers[name] = jbo.Optimizer(space, seed=1, **{**options, "model": model})
        for c, v in zip(configs, values):
            opt.tell(c, v)
        start = time.perf_counter()
        for _ in range(2):  # cold and warm fit: each compiles
            ask(opt)
        first_two[name] = time.perf_counter() - start
    for _ in range(args.rounds):
        for name, opt in optimizers.items():
            start = time.perf_counter()
            ask(opt)
            times.setdefault(name, []).append(time.perf_counter() - start)
    return {"n": args.n, "size": args.size, "inference": args.inference, "rounds": args.rounds, "times": times,
            "first_two": first_two}


def _ratios(steady: dict) -> dict:
    """``{arm: its steady median / that of the built-in of the same maths}`` (:data:`SAME_MATHS`)."""
    median = {name: statistics.median(times) for name, times in steady["times"].items()}
    return {name: median[name] / median[ref] for name, ref in SAME_MATHS.items() if name in median and ref in median}


def _steady(r):
    ratios = _ratios(r)

    def ratio(name):
        if name in ratios:
            return f"{ratios[name]:.2f}"
        return "reference" if name in SAME_MATHS.values() else "(other maths)"

    return [f"Hartmann6, N = {r['n']} observations padded to {r['size']}, {r['inference']} inference; seconds per"
            f" steady suggestion, median of {r['rounds']} interleaved rounds (bar: ≤ {BAR}× the same maths built in):",
            "",
            *_speed.table(["model", "s / suggestion", "vs the same maths built in", "first two suggestions [s]"],
                          *([name, f"{statistics.median(t):.3f}", ratio(name), f"{r['first_two'][name]:.1f}"]
                            for name, t in r["times"].items())),
            "", "The first two suggestions compile (cold and warm fit); a program whose lowered form equals one"
            " compiled before is served by JAX's persistent cache (the SurrogateModel of the exact GP)."]


def _warm(r):  # a retired part: no runner, its stored result renders
    return ["A fresh process's first model suggestion with `GP(kernel=Matern52() + Linear())` (MAP, Hartmann6):", "",
            *_speed.table(["cache", "first model suggestion [s]", "whole process [s]", "suggestion program"],
                          *([run["label"], f"{run['first_model_suggestion']:.2f}", f"{run['process']:.1f}",
                             ", ".join(f"{k} {v}" for k, v in sorted(run["stats"].items()))] for run in r["runs"]))]


SECTION = _speed.Parts("bench_byo", "Pieces of one's own: the cost of a kernel, acquisition or surrogate passed as a"
                       " value (bench_byo)", blocks={"steady": _steady, "warm": _warm}, runners={"steady": part_steady},
                       options={"--n": 50, "--size": 64, "--rounds": 5, "--inference": "slice"})
report = SECTION.report


def claims() -> list[dict]:
    """Pieces of one's own against the built-in of the same maths: ``yes`` when every steady ratio is within the bar."""

    def decide(r):
        ratios = _ratios(r).values()
        return f"{min(ratios):.2f}–{max(ratios):.2f}×", "yes" if max(ratios) <= BAR else "no"

    what = ("Steady suggestion with a kernel, surrogate or acquisition of one's own vs the same maths built in"
            " (Hartmann6)")
    return [SECTION.claim("steady", what, f"≤ {BAR}× each", decide)]


if __name__ == "__main__":
    SECTION.main()
