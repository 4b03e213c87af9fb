"""Compilation and the compiled path on Hartmann6 at 100 evaluations: a fresh process's whole run against Optuna's
GPSampler (``fresh``, issue #56); ``minimize_many`` against ``minimize``, same seeds (``parity``).

    python experiments/bench_compiled.py fresh --repeats 3 --peers-python /work/peers-venv/bin/python
    python experiments/bench_compiled.py parity --seeds 30
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
import _speed  # noqa: E402


def process(options: dict | None) -> dict:
    """A fresh process's whole run (:func:`_speed.fresh`), Hartmann6 at 100 evaluations, seed 0: jbo with
    ``options``, or (``None``) Optuna's GPSampler (``peers.py``)."""
    start = time.perf_counter()
    if options is None:
        import peers

        return {"seconds": time.perf_counter() - start, "best": min(peers.run_optuna_gp("hartmann6", 100, 0))}
    import jbo
    from jbo.benchmarks import get_problem

    p = get_problem("hartmann6")
    best = jbo.minimize(p.evaluate, p.space(), budget=100, seed=0, **options).best_value
    return {"seconds": time.perf_counter() - start, "best": best}


def part_fresh(args) -> dict:
    rows = {}
    for _ in range(args.repeats):
        for label, options in (("jbo", {}), ("jbo (MAP)", {"inference": "map"})):
            with tempfile.TemporaryDirectory() as cache:  # the second process finds what the first stored
                for state in ("empty", "warm"):
                    rows.setdefault(f"{label}, {state} cache", []).append(
                        _speed.fresh(process, options, env={"JBO_CACHE_DIR": cache}))
        if args.peers_python:
            one_thread = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
            rows.setdefault("optuna", []).append(_speed.fresh(process, None, python=args.peers_python, env=one_thread))
    return rows


def part_parity(args) -> dict:
    import jbo
    from jbo.benchmarks import get_problem

    p = get_problem("hartmann6")
    start = time.perf_counter()
    many = jbo.minimize_many(p.evaluate, p.space(), budget=100, seeds=range(args.seeds))
    many_seconds = time.perf_counter() - start
    start = time.perf_counter()
    ask_tell = [jbo.minimize(p.evaluate, p.space(), budget=100, seed=s).best_value for s in range(args.seeds)]
    return {"minimize_many": [float(v) for v in many.best_values], "minimize": [float(v) for v in ask_tell],
            "many_seconds": many_seconds, "many_compile": many.compile_seconds,
            "minimize_seconds": time.perf_counter() - start}


def _parity(r: dict):
    """``((many mean, se), (minimize mean, se), difference, two standard errors of the difference)``."""
    (mm, ms), (am, ase) = _common.mean_se(r["minimize_many"]), _common.mean_se(r["minimize"])
    return (mm, ms), (am, ase), mm - am, 2 * (ms ** 2 + ase ** 2) ** 0.5


def _many(r):  # a retired part: no runner, its stored result renders
    many, seq = _speed.median(r["minimize_many"]), _speed.median(r["minimize"])
    best = lambda runs: f"{statistics.mean(runs[0]['best']):.4f}"
    return [f"10 seeds, 60 evaluations, GP (MAP), each side a fresh process without the persistent cache (compiling"
            f" included); medians of {len(r['minimize'])} runs; ratio minimize_many / minimize **{many / seq:.2f}**"
            " (bench_study's `many` measures this now):", "",
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


def _step(r):  # a retired part: no runner, its stored result renders
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


SECTION = _speed.Parts("bench_compiled", "Compilation and the compiled path (bench_compiled)",
                       blocks={"many": _many, "fresh": _fresh, "step": _step, "parity": _parity_block},
                       runners={"fresh": part_fresh, "parity": part_parity},
                       options={"--repeats": 3, "--seeds": 30, "--peers-python": None})
report = SECTION.report


def claims() -> list[dict]:
    """Quality parity: ``yes`` when the two paths' mean best differ by at most two standard errors of the difference."""

    def decide(r):
        (mm, _), (am, _), diff, two_se = _parity(r)
        figure = f"{mm:.4f} vs {am:.4f} ({len(r['minimize'])} seeds; 2 s.e. {two_se:.4f})"
        return figure, "yes" if abs(diff) <= two_se else "no"

    what = "Hartmann6 at 100 evaluations, defaults: minimize_many's mean best equals minimize's (same seeds)"
    return [SECTION.claim("parity", what, "difference within 2 s.e. of the difference", decide)]


if __name__ == "__main__":
    SECTION.main()
