"""Pieces of one's own cost what jbo's own cost: steady suggestion times side by side, and a warm second process.

Parts (each stores its result, with the provenance of its run, in experiments/results/bench_byo.json, from
which BENCHMARKS.md is regenerated: ``experiments/report.py``; ``--report-only``: only that):

* ``steady``: Hartmann6, N observations (random points) padded to one size, seconds per steady suggestion
  (the third model suggestion on: the first ones compile) of the built-in GP (``kernel="matern52"``) and the
  same maths as pieces of one's own: the kernel object ``Matern52()``, a Matérn-5/2 kernel class written
  outside jbo, the exact GP passed as a surrogate (``SurrogateModel``), UCB written as a function; and a
  composed kernel (Matérn + linear) for scale. Interleaved rounds, medians.
* ``warm``: a fresh Python process making its first model suggestion with a composed kernel
  (Matérn + linear), with an empty cache and then with the cache the first process left (the stored
  suggestion program is loaded without tracing).

    python experiments/bench_byo.py steady warm --rounds 5
    python experiments/bench_byo.py --report-only

Single suggestions and fresh processes, not grids of runs: no ``jbo.study``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jbo  # noqa: E402
from jbo.benchmarks import get_problem  # noqa: E402

BAR = 1.2  # issue: a piece of one's own costs at most 1.2× the built-in of the same maths


def results_path() -> str:
    """The results JSON (under ``--results-dir`` when given)."""
    return os.path.join(_common.RESULTS, "bench_byo.json")


@dataclasses.dataclass(frozen=True)
class OwnMatern(jbo.kernels.Stationary):
    """Matérn-5/2 written as a user would, outside jbo."""

    def profile(self, params, r2):
        r = jnp.sqrt(5.0) * jbo.kernels.safe_sqrt(r2)
        return (1.0 + r + r**2 / 3.0) * jnp.exp(-r)


def own_ucb(mean, var, best):
    return -(mean - jnp.sqrt(2.0 * var))


# EI in every arm but the UCB ones, and no trust region, so that each piece of one's own runs the built-in's maths
# and search (SurrogateModel's defaults are EI over the whole box, the GP's UCB in a trust region).
SEARCH = dict(trust_region=False)
ARMS = {
    "built-in GP (kernel=\"matern52\")": dict(model=jbo.models.GP(), acquisition="ei", **SEARCH),
    "kernel object Matern52()": dict(model=jbo.models.GP(kernel=jbo.kernels.Matern52()), acquisition="ei", **SEARCH),
    "kernel class of one's own": dict(model=jbo.models.GP(kernel=OwnMatern()), acquisition="ei", **SEARCH),
    "exact GP as a SurrogateModel": dict(model=jbo.models.SurrogateModel(
        surrogate=jbo.surrogates.exact_gp(jbo.kernels.Matern52())), acquisition="ei", **SEARCH),
    "built-in UCB": dict(model=jbo.models.GP(), acquisition="ucb", **SEARCH),
    "UCB as a function": dict(model=jbo.models.GP(), acquisition=own_ucb, **SEARCH),
    "Matern52() + Linear()": dict(model=jbo.models.GP(kernel=jbo.kernels.Matern52() + jbo.kernels.Linear()),
                                  acquisition="ei", **SEARCH),
}


def part_steady(args) -> dict:
    problem = get_problem("hartmann6")
    space = problem.space()
    rng = np.random.default_rng(0)
    configs = space.decode_many(rng.random((args.n, space.dim)))
    values = [problem.evaluate(c) for c in configs]
    optimizers = {}
    for name, options in ARMS.items():
        # the SurrogateModel is a StepConfig: as the GP's (continued chain) its warm fits take 0 warm-up sweeps
        extra = {"num_warmup": 0} if isinstance(options["model"], jbo.models.SurrogateModel) else {}
        options = {**options, "model": options["model"].replace(inference=args.inference, **extra)}
        opt = jbo.Optimizer(space, seed=1, **options)
        for c, v in zip(configs, values):
            opt.tell(c, v)
        compile_start = time.perf_counter()
        for _ in range(2):  # cold and warm fit: each compiles
            opt.ask(size=args.size)
            opt.state = opt.state._replace(pending=opt.state.pending[:0])
        optimizers[name] = (opt, time.perf_counter() - compile_start)
    times = {name: [] for name in ARMS}
    for _ in range(args.rounds):
        for name, (opt, _) in optimizers.items():
            start = time.perf_counter()
            opt.ask(size=args.size)
            times[name].append(time.perf_counter() - start)
            opt.state = opt.state._replace(pending=opt.state.pending[:0])
    return {"n": args.n, "size": args.size, "inference": args.inference, "rounds": args.rounds,
            "times": times, "first_two": {name: t for name, (_, t) in optimizers.items()}}


WARM = r"""
import json, sys, time
start = time.perf_counter()
import jbo
from jbo import loop
from jbo.benchmarks import get_problem
problem = get_problem("hartmann6")
opt = jbo.Optimizer(problem.space(), seed=0, n_init=7, inference="map", acquisition="ei", trust_region=False,
                    model=jbo.models.GP(kernel=jbo.kernels.Matern52() + jbo.kernels.Linear()))
for _ in range(7):
    config = opt.ask(size=16)
    opt.tell(config, problem.evaluate(config))
before = time.perf_counter()
opt.ask(size=16)
print(json.dumps({"first_model_suggestion": time.perf_counter() - before, "process": time.perf_counter() - start,
                  "stats": dict(loop.compiled_suggestion.__wrapped__.stats)}))
"""


def part_warm(args) -> dict:
    runs = []
    with tempfile.TemporaryDirectory() as cache_dir:
        env = dict(os.environ, JBO_CACHE_DIR=cache_dir)
        env.pop("JBO_NO_CACHE", None)
        for label in ("empty cache", "warm cache"):
            out = subprocess.run([sys.executable, "-c", WARM], capture_output=True, text=True, env=env, check=True)
            runs.append({"label": label, **json.loads(out.stdout.strip().splitlines()[-1])})
    return {"runs": runs}


#: The built-in model each arm has the maths of (the ratio the issue's bar is about); None: other maths.
SAME_MATHS = {"kernel object Matern52()": "built-in GP (kernel=\"matern52\")",
              "kernel class of one's own": "built-in GP (kernel=\"matern52\")",
              "exact GP as a SurrogateModel": "built-in GP (kernel=\"matern52\")",
              "UCB as a function": "built-in UCB"}


def _ratios(steady: dict) -> dict:
    """``{arm: its steady median / that of the built-in of the same maths}`` (:data:`SAME_MATHS`)."""
    median = {name: statistics.median(times) for name, times in steady["times"].items()}
    return {name: median[name] / median[ref] for name, ref in SAME_MATHS.items()
            if name in median and ref in median}


def claims() -> list[dict]:
    """Pieces of one's own (a kernel object, a kernel class, the exact GP as a SurrogateModel, UCB as a function)
    against the built-in of the same maths, steady seconds per suggestion: ``yes`` when every ratio is ≤ 1.2
    (the bar), else ``no``."""
    results = _common.load_results("bench_byo.json", {})
    what = "Steady suggestion with a kernel, surrogate or acquisition of one's own vs the same maths built in (Hartmann6)"
    if "steady" not in results:
        return [_common.claim("jbo", what, f"≤ {BAR}×", "–", "not run", "bench_byo")]
    ratios = _ratios(results["steady"])
    return [_common.claim("jbo", what, f"≤ {BAR}× each", f"{min(ratios.values()):.2f}–{max(ratios.values()):.2f}×",
                          "yes" if max(ratios.values()) <= BAR else "no", "bench_byo")]


def report() -> None:
    _common.update_section("bench_byo", write_report(_common.load_results("bench_byo.json", {})))


def write_report(results: dict) -> str:
    lines = ["## Pieces of one's own: the cost of a kernel, acquisition or surrogate passed as a value (bench_byo)"]
    if "steady" in results:
        r = results["steady"]
        median = {name: statistics.median(times) for name, times in r["times"].items()}
        ratios = _ratios(r)
        lines += ["", results["steady_header"].rstrip(), "",
                  f"Hartmann6, N = {r['n']} observations padded to {r['size']}, {r['inference']} inference; "
                  f"seconds per steady suggestion, median of {r['rounds']} interleaved rounds (bar: ≤ {BAR}× the same"
                  " maths built in):", "",
                  "| model | s / suggestion | vs the same maths built in | first two suggestions [s] |",
                  "|---|---|---|---|"]
        for name, seconds in median.items():
            ratio = (f"{ratios[name]:.2f}" if name in ratios else
                     "reference" if name in SAME_MATHS.values() else "(other maths)")
            lines.append(f"| {name} | {seconds:.3f} | {ratio} | {r['first_two'][name]:.1f} |")
        lines += ["", "The first two suggestions compile (cold and warm fit); a program whose lowered form equals one "
                      "compiled before is served by JAX's persistent cache (the SurrogateModel of the exact GP)."]
    if "warm" in results:
        lines += ["", results["warm_header"].rstrip(), "",
                  "A fresh process's first model suggestion with `GP(kernel=Matern52() + Linear())` (MAP, Hartmann6):",
                  "", "| cache | first model suggestion [s] | whole process [s] | suggestion program |", "|---|---|---|---|"]
        for run in results["warm"]["runs"]:
            stats = ", ".join(f"{k} {v}" for k, v in sorted(run["stats"].items()))
            lines.append(f"| {run['label']} | {run['first_model_suggestion']:.2f} | {run['process']:.1f} | {stats} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = ["steady", "warm"]
    _common.add_parts_argument(parser, parts)
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--inference", default="slice")
    _common.add_output_arguments(parser)
    args = _common.start(parser, argv, parts=parts)
    if args is None:
        return
    for part in args.parts:
        print(f"running {part} ...", flush=True)
        result = {"steady": part_steady, "warm": part_warm}[part](args)
        _common.record_provenance("bench_byo")
        _common.merge_results(results_path(), [([part], result), ([part + "_header"], _common.header("bench_byo"))])
    _common.regenerate()


if __name__ == "__main__":
    main()
