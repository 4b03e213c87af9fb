"""Compilation and the compiled path, measured side by side (issue 16's bars), on Hartmann6.

Parts: ``many``: 10 seeds at 60 evaluations (MAP), ``jbo.minimize_many`` against ``jbo.minimize`` seed after seed,
each in a fresh process without the persistent cache; ``fresh``: a fresh process's whole run at 100 evaluations with
an empty and a warm cache, against Optuna's GPSampler (``--peers-python``: an interpreter with optuna); ``step``:
the guide's "write your own BO step" loop against ``jbo.Optimizer``; ``parity``: the two paths' mean best.

    python experiments/bench_compiled.py many fresh step --repeats 3 --peers-python /work/peers-venv/bin/python
    python experiments/bench_compiled.py parity --seeds 30
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import _speed  # noqa: E402


def process(options: dict | None) -> dict:
    """A fresh process's whole run (:func:`_speed.fresh`), Hartmann6 at 100 evaluations, seed 0: jbo with ``options``,
    or (``None``) Optuna's GPSampler (``peers.py``)."""
    start = time.perf_counter()
    if options is None:
        import peers

        return {"seconds": time.perf_counter() - start, "best": min(peers.run_optuna_gp("hartmann6", 100, 0))}
    import jbo
    from jbo.benchmarks import get_problem

    p = get_problem("hartmann6")
    best = jbo.minimize(p.evaluate, p.space(), budget=100, seed=0, **options).best_value
    return {"seconds": time.perf_counter() - start, "best": best}


def part_many(args) -> dict:
    off = {"JBO_NO_CACHE": "1"}
    runs = [(_speed.fresh(_speed.hartmann6, 60, 10, {"inference": "map"}, env=off),
             _speed.fresh(_speed.hartmann6, 60, 10, {"inference": "map"}, False, env=off)) for _ in range(args.repeats)]
    return {"minimize_many": [m for m, _ in runs], "minimize": [s for _, s in runs]}


def part_fresh(args) -> dict:
    rows = {}
    for _ in range(args.repeats):
        for label, options in (("jbo", {}), ("jbo (MAP)", {"inference": "map"})):
            with tempfile.TemporaryDirectory() as cache:  # the second process finds what the first stored
                for state in ("empty", "warm"):
                    rows.setdefault(f"{label}, {state} cache", []).append(
                        _speed.fresh(process, options, env={"JBO_CACHE_DIR": cache}))
        if args.peers_python:
            rows.setdefault("optuna", []).append(_speed.fresh(process, None, python=args.peers_python, env={
                "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}))
    return rows


def part_step(args) -> dict:
    """The guide's loop against ``jbo.Optimizer`` suggestions at the same N and padded size, in this process."""
    import numpy as np

    import jbo
    from jbo.benchmarks import get_problem

    guide = open(os.path.join(_common.ROOT, "docs", "guide.md"), encoding="utf-8").read()
    block = re.search(r"```python\n(.*?)```", guide[guide.index("## Write your own BO step"):], re.S).group(1)
    timed = block.replace("for i in range(20):\n", "times = []\nfor i in range(20):\n    t0 = time.perf_counter()\n")
    timed = timed.replace("    y = np.append(", "    times.append(time.perf_counter() - t0)\n    y = np.append(")
    assert "times = []" in timed and "times.append" in timed, "the guide's loop changed: adapt the timing"
    namespace = {}
    exec(compile("import time\n" + timed, "guide", "exec"), namespace)
    own = namespace["times"][2:]  # the first two iterations compile
    problem = get_problem("hartmann6")
    opt, times = jbo.Optimizer(problem.space(), inference="map", n_init=8, seed=0), []
    for _ in range(28):
        t0 = time.perf_counter()
        config = opt.ask(size=32)
        times.append((opt.last_info["phase"], time.perf_counter() - t0))
        opt.tell(config, problem.evaluate(config))
    steady = [t for phase, t in times if phase == "model"][2:]  # the first model suggestions compile
    return {"own_step": own, "optimizer": steady, "n": [8, 28],
            "own_median": float(np.median(own)), "optimizer_median": float(np.median(steady))}


def part_parity(args) -> dict:
    import jbo
    from jbo.benchmarks import get_problem

    p, start = get_problem("hartmann6"), time.perf_counter()
    many = jbo.minimize_many(p.evaluate, p.space(), budget=100, seeds=range(args.seeds))
    many_seconds, start = time.perf_counter() - start, time.perf_counter()
    ask_tell = [jbo.minimize(p.evaluate, p.space(), budget=100, seed=s).best_value for s in range(args.seeds)]
    return {"minimize_many": [float(v) for v in many.best_values], "minimize": [float(v) for v in ask_tell],
            "many_seconds": many_seconds, "many_compile": many.compile_seconds,
            "minimize_seconds": time.perf_counter() - start}


def _parity(r: dict):
    """``((many mean, se), (minimize mean, se), difference, two standard errors of the difference)``."""
    (mm, ms), (am, ase) = _common.mean_se(r["minimize_many"]), _common.mean_se(r["minimize"])
    return (mm, ms), (am, ase), mm - am, 2 * (ms ** 2 + ase ** 2) ** 0.5


def claims() -> list[dict]:
    """The compiled path's quality parity: ``yes`` when minimize_many's and minimize's mean best over the same seeds
    differ by at most two standard errors of the difference. (Its speed bars are bench_study's.)"""
    results = _common.load_results("bench_compiled.json", {})
    what = "Hartmann6 at 100 evaluations, defaults: minimize_many's mean best equals minimize's (same seeds)"
    bar = "difference within 2 s.e. of the difference"
    if "parity" not in results:
        return [_common.claim("jbo", what, bar, "–", "not run", "bench_compiled")]
    (mm, _), (am, _), diff, two_se = _parity(results["parity"])
    n = len(results["parity"]["minimize"])
    return [_common.claim("jbo", what, bar, f"{mm:.4f} vs {am:.4f} ({n} seeds; 2 s.e. {two_se:.4f})",
                          "yes" if abs(diff) <= two_se else "no", "bench_compiled")]


def _many(r):
    many, seq = _speed.median(r["minimize_many"]), _speed.median(r["minimize"])
    best = lambda runs: f"{statistics.mean(runs[0]['best']):.4f}"
    return [f"10 seeds, 60 evaluations, GP (MAP), each side a fresh process without the persistent cache (compiling"
            f" included); medians of {len(r['minimize'])} runs; ratio minimize_many / minimize **{many / seq:.2f}**:",
            "",
            *_speed.table(["path", "wall time [s]", "of which compiling [s]", "mean best"],
                          ["`jbo.minimize_many` (one program, 10 seeds)", f"{many:.1f}",
                           f"{_speed.median(r['minimize_many'], 'compile'):.1f}", best(r["minimize_many"])],
                          ["`jbo.minimize`, seed after seed", f"{seq:.1f}",
                           f"first seed {_speed.median(r['minimize'], 'first_seed'):.1f}", best(r["minimize"])])]


def _fresh(r):
    ratio = "" if "optuna" not in r else "; jbo / Optuna: " + ", ".join(
        f"{state} cache **{_speed.median(r[f'jbo, {state} cache']) / _speed.median(r['optuna']):.2f}**"
        for state in ("empty", "warm"))
    return [f"A fresh process's whole run, 100 evaluations, defaults (jbo: GP, 10 slice samples, EI; Optuna: GPSampler,"
            f" MAP), and jbo with MAP; a warm cache holds JAX's and jbo's stored programs{ratio}:", "",
            *_speed.table(["run", "median [s]", "runs [s]", "best"],
                          *([k, f"{_speed.median(v):.1f}", ", ".join(f"{x['wall']:.1f}" for x in v),
                             f"{v[0]['best']:.4f}"] for k, v in r.items()))]


def _step(r):
    return [f"The guide's \"write your own BO step\" loop (Matérn + RQ, MAP, N = {r['n'][0]}–{r['n'][1]}, padded to"
            f" 32) against `jbo.Optimizer` (Matérn, MAP, same N and padding), steady iterations; ratio"
            f" **{r['own_median'] / r['optimizer_median']:.2f}**:", "",
            *_speed.table(["loop", "median per iteration [ms]"], ["guide's step", f"{1000 * r['own_median']:.1f}"],
                          ["`jbo.Optimizer.ask`", f"{1000 * r['optimizer_median']:.1f}"])]


def _parity_block(r):
    (mm, ms), (am, ase), diff, two_se = _parity(r)
    return [f"Quality parity, 100 evaluations, defaults, {len(r['minimize'])} seeds: difference {diff:+.4f}, two"
            f" standard errors of it {two_se:.4f} (`yes` when within):", "",
            *_speed.table(["path", "mean best ± s.e.", "wall time [s]"],
                          ["`jbo.minimize_many`", f"{mm:.4f} ± {ms:.4f}",
                           f"{r['many_seconds']:.0f} (compiling {r['many_compile']:.0f})"],
                          ["`jbo.minimize`", f"{am:.4f} ± {ase:.4f}", f"{r['minimize_seconds']:.0f}"])]


def report() -> dict:
    return {"bench_compiled": _speed.render_parts(
        "Compilation and the compiled path (bench_compiled)", _common.load_results("bench_compiled.json", {}),
        {"many": _many, "fresh": _fresh, "step": _step, "parity": _parity_block})}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--peers-python", default=None, help="an interpreter with optuna installed")
    _speed.run_parts(parser, {"many": part_many, "fresh": part_fresh, "step": part_step, "parity": part_parity},
                     "bench_compiled", argv)


if __name__ == "__main__":
    main()
