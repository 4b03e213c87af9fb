"""The ``jbo`` command line: ``jbo run``, ``jbo problems``, ``jbo plot``, ``jbo study``.

``jbo run`` with no arguments optimises Branin with the GP, slice-sampled hyperparameters and UCB in a trust
region for 30 evaluations and writes ``runs/branin-gp-slice-s0/{journal.jsonl,results.json,convergence.png}``.
Run ``jbo <command> -h`` for the options.

Environment:
  ``OPENBLAS_NUM_THREADS``: defaults to 1 (see :func:`limit_blas_threads`).
  ``JBO_NO_CACHE``: set (non-empty) to store no compiled program (:mod:`jbo.cache`).
  ``JBO_CACHE_DIR``: where jbo stores them (default ``~/.cache/jbo``).
"""

from __future__ import annotations

import os

# Before numpy/jax load OpenBLAS where possible (``python jbo/cli.py``); when jbo is imported first
# (the ``jbo`` console script imports the package) the libraries are already loaded and
# ``limit_blas_threads`` sets their thread count at run time instead.
_USER_SET_BLAS_THREADS = "OPENBLAS_NUM_THREADS" in os.environ
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import ctypes  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402

from jbo import __version__, cache, inference, loop, metrics, models, plotting, records, studies, warping  # noqa: E402
from jbo import journal as journal_io  # noqa: E402
from jbo.benchmarks import get_problem, list_problems  # noqa: E402
from jbo.optimizer import minimize, setting_of  # noqa: E402

__all__ = ["main", "build_parser", "limit_blas_threads"]

DEFAULT_PROBLEM = "branin"
DEFAULTS = {"model": "gp", "inference": None, "acquisition": None, "seed": 0}
JOURNAL, RESULTS, FIGURE = "journal.jsonl", "results.json", "convergence.png"


# ------------------------------------------------------------------------------------------------
# process setup
# ------------------------------------------------------------------------------------------------
def limit_blas_threads(user_set: bool) -> list[str]:
    """Run OpenBLAS single-threaded unless the user chose a thread count.

    A multi-threaded OpenBLAS makes JAX's CPU Cholesky of the small matrices BO factorises many
    times slower on a busy machine (README, Design). ``OPENBLAS_NUM_THREADS`` is read when the
    library loads, which has usually happened by the time the CLI runs (``import jbo`` loads numpy,
    scipy and jax), so the thread count of every OpenBLAS already in the process is also set
    through its C API (Linux; elsewhere only the environment variable applies).

    Args:
      user_set: ``OPENBLAS_NUM_THREADS`` was set before jbo started: leave the libraries alone.
    Returns:
      the libraries changed (file names).
    """
    if user_set or not os.path.exists("/proc/self/maps"):
        return []
    changed, seen = [], set()
    try:
        with open("/proc/self/maps") as f:
            paths = [line.split()[-1] for line in f if "openblas" in line.lower()]
    except OSError:
        return []
    for path in paths:
        if path in seen or not os.path.isfile(path):
            continue
        seen.add(path)
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for symbol in ("openblas_set_num_threads", "scipy_openblas_set_num_threads",
                       "scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_"):
            fn = getattr(lib, symbol, None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int]
                fn(1)
                changed.append(os.path.basename(path))
                break
    return changed


# ------------------------------------------------------------------------------------------------
# parser
# ------------------------------------------------------------------------------------------------
def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


#: The ``jbo run`` options that are not a model's (a model field of the same name is set by them).
RUN_OPTIONS = ("problem", "dim", "model", "inference", "acquisition", "budget", "seed", "n_init", "design",
               "output_warping", "trust_region", "out",
               "resume", "quiet", "cpu_devices")
MODEL_OPTION = "model_option:"  # argparse dest prefix of the model options


def model_options() -> dict[str, tuple[models.CliOption, list[str]]]:
    """Every model's command-line options (:meth:`jbo.models.ModelConfig.cli_options`): flag -> the option
    and the model names that have it."""
    table: dict = {}
    for name in models.names():
        cls = models.SHORTCUTS[name][0]
        for option in cls.cli_options():
            if option.field.split(".")[0] in RUN_OPTIONS:
                continue
            known = table.setdefault(option.flag, (option, []))
            if (known[0].field, known[0].type, known[0].nargs) != (option.field, option.type, option.nargs):
                raise ValueError(f"models define {option.flag} differently: {known[0]} and {option} ({cls.__name__})")
            known[1].append(name)
    return table


def _which(names: list[str]) -> str:
    everyone = models.names()
    if len(names) == len(everyone):
        return "every model"
    if len(names) > len(everyone) / 2:
        return "every model but " + ", ".join(n for n in everyone if n not in names)
    return ", ".join(names)


def _add_model_options(run) -> None:
    group = run.add_argument_group("model options", "each sets the field of the same name of the models listed "
                                                    "(jbo.models; errors name the field)")
    for flag, (option, names) in model_options().items():
        kwargs = dict(dest=MODEL_OPTION + option.field, default=None, help=f"{option.help} [{_which(names)}]")
        if option.type is bool:  # a flag takes no value, so no metavar (which Python 3.14 refuses here)
            group.add_argument(flag, action=argparse.BooleanOptionalAction, **kwargs)
        else:
            group.add_argument(flag, type=_parser(option.type), nargs=option.nargs,
                               metavar=option.field.rpartition(".")[2].upper(), **kwargs)


def _parser(kind):
    def parse(text: str):
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind.__name__}, got {text!r}") from None

    parse.__name__ = kind.__name__
    return parse


def build_parser() -> argparse.ArgumentParser:
    """The ``jbo`` argument parser (valid names come from the library's registries)."""
    parser = argparse.ArgumentParser(
        prog="jbo", description="jbo: Bayesian optimisation as composable JAX functions.",
        epilog="`jbo run` with no arguments optimises Branin with a GP (30 evaluations).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser(
        "run", help="optimise a benchmark problem",
        description="Optimise a benchmark problem and write journal.jsonl, results.json and "
                    "convergence.png into --out. Defaults: Branin, GP, slice sampling, UCB in a trust region, "
                    "30 evaluations.")
    run.add_argument("--problem", choices=list_problems(), default=None, metavar="NAME",
                     help=f"benchmark problem (default {DEFAULT_PROBLEM}); one of: {', '.join(list_problems())}")
    run.add_argument("--dim", type=_positive_int, default=None, help="dimension of a scalable problem")
    run.add_argument("--model", choices=models.names(), default=None,
                     help=f"surrogate (default {DEFAULTS['model']})")
    run.add_argument("--inference", choices=inference.METHODS, default=None,
                     help=f"hyperparameter inference (default {DEFAULTS['inference']})")
    run.add_argument("--acquisition", choices=loop.ACQUISITIONS, default=None,
                     help="acquisition function (default: the model's own: ucb for gp, ei under constraints and "
                          "for the other models)")
    run.add_argument("--budget", type=_positive_int, default=30,
                     help="total number of evaluations, initial design included (default 30)")
    run.add_argument("--seed", type=_int, default=None, help="random seed (default 0)")
    run.add_argument("--n-init", type=_positive_int, default=None,
                     help="size of the Sobol initial design (default max(5, dim + 1))")
    run.add_argument("--design", choices=loop.DESIGNS, default=None,
                     help="initial design: sobol or centre (the box's centre first, then Sobol points); "
                          "default: the model's (centre for bock, bock-w and bock-b, sobol for the others)")
    run.add_argument("--output-warping", choices=warping.NAMES, default=None,
                     help="monotone transform of the standardised values before the model sees them (jbo.warping): "
                          "none, rank, yeo-johnson or shifted-log; default: the model's (yeo-johnson for gp, dngo "
                          "and ensemble; none for the BOCK models, which choose the warp by their evidence "
                          "(--evidence-warp), and the others)")
    run.add_argument("--trust-region", action=argparse.BooleanOptionalAction, default=None,
                     help="keep the acquisition search to TuRBO-1's trust region around the best point (jbo.trust); "
                          "default: the model's (on for gp, dngo and ensemble, off for the others)")
    run.add_argument("--cpu-devices", type=_positive_int, default=None,
                     help="split the host CPU into this many JAX devices (jax_num_cpu_devices) so that a model's "
                          "independent members train in parallel, one device per core (default: one per core, at "
                          "most the model's members, e.g. --n-networks of --model ensemble; otherwise one device)")
    _add_model_options(run)
    run.add_argument("--out", default=None,
                     help="output directory (default runs/<problem>-<model>-<inference>-s<seed>)")
    run.add_argument("--resume", action="store_true",
                     help="continue the run in --out from its journal up to --budget evaluations")
    run.add_argument("--quiet", action="store_true", help="no progress bar or notes, only the summary")
    run.set_defaults(func=cmd_run, subparser=run)

    problems = sub.add_parser("problems", help="list the benchmark problems",
                              description="List the registered benchmark problems.")
    problems.set_defaults(func=cmd_problems, subparser=problems)

    plot = sub.add_parser(
        "plot", help="plot convergence of runs",
        description="Plot mean +- standard error over seeds of the simple regret (best value so far if "
                    "an optimum is unknown) of run directories, grouped by model/inference.")
    plot.add_argument("dirs", nargs="+", metavar="DIR", help="run directories (each with journal.jsonl)")
    plot.add_argument("--out", default="jbo-convergence.png", help="figure to write (default jbo-convergence.png)")
    plot.add_argument("--linear", action="store_true", help="linear instead of log y axis")
    plot.set_defaults(func=cmd_plot, subparser=plot)

    study = sub.add_parser(
        "study", help="run (or continue) a study in a store",
        description="Run the study a script or module declares (a dict of jbo.study's arguments: fn, space, budget, "
                    "seeds, arms; or a function returning one) in --store, continuing what is stored there; print "
                    "its table.")
    study.add_argument("target", metavar="SCRIPT_OR_MODULE:NAME",
                       help="e.g. studies.py:ABLATION or mypackage.studies:ablation")
    study.add_argument("--store", required=True, help="the study's store (a directory)")
    study.add_argument("--processes", type=_positive_int, default=None,
                       help="make the runs in this many worker processes (a process pool) instead of here")
    study.add_argument("--dask", default=None, metavar="ADDRESS",
                       help="make the runs on the Dask cluster at ADDRESS (e.g. tcp://scheduler:8786)")
    study.add_argument("--jax-cache", action="store_true",
                       help="turn on JAX's persistent compilation cache (workers then load the whole runs)")
    study.set_defaults(func=cmd_study, subparser=study)
    return parser


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
def _note(args, message: str) -> None:
    if not getattr(args, "quiet", False):
        print(message, file=sys.stderr)


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def _fmt(value, digits: int = 6) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return f"{value:.{digits}g}"


def _read_json(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _write_json(path: str, payload: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(payload, f, indent=2, allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)


def _finite_or_none(value):
    return value if value is not None and math.isfinite(value) else None


def _given_model_options(args) -> dict:
    """The model options given on the command line: ``{flag: (field, value)}``."""
    given = {}
    for flag, (option, _) in model_options().items():
        value = getattr(args, MODEL_OPTION + option.field, None)
        if value is not None:
            given[flag] = (option.field, list(value) if isinstance(value, list) else value)
    return given


def _nest(given: dict) -> dict:
    """``{field: value}`` with dotted fields (``network.hidden``) as nested dicts."""
    options: dict = {}
    for field, value in given.values():
        *parents, last = field.split(".")
        target = options
        for parent in parents:
            target = target.setdefault(parent, {})
        target[last] = value
    return options


def _describe(settings: dict) -> dict:
    """``model``, ``inference``, ``acquisition`` and ``seed`` of a journal's settings record (either format)."""
    model = settings.get("model", "?")
    inference = settings.get("inference", "?")
    if isinstance(model, dict):
        model, inference = model.get("name", "?"), model.get("inference", "-")
    return {"model": model, "inference": inference, "acquisition": _acquisition_name(settings.get("acquisition", "?")),
            "seed": settings.get("seed", 0)}


def _acquisition_name(record) -> str:
    """The name of a journal's acquisition record without importing anything it names: a built-in's name, the
    function's name of one of the user's (a recorded ``Pointwise``), a Choice's or Mixture's options."""
    if not isinstance(record, dict):
        return str(record)
    if "free" in record and "constrained" in record:  # a ConstraintAware
        return f"{_acquisition_name(record['free'])} ({_acquisition_name(record['constrained'])} under constraints)"
    if isinstance(record.get("options"), list):
        names = "|".join(_acquisition_name(option) for option in record["options"])
        return f"mixture({names})" if str(record.get(records.TYPE, "")).endswith(":Mixture") else names
    fn = record.get("fn") if isinstance(record.get("fn"), dict) else {}
    return str(fn.get(records.IMPORT) or fn.get(records.UNRECORDED) or "custom").rpartition(":")[2]


def _has_journal(path: str) -> bool:
    return os.path.isfile(path) and os.path.getsize(path) > 0


# ------------------------------------------------------------------------------------------------
# jbo run
# ------------------------------------------------------------------------------------------------
def cmd_run(args) -> int:
    run_parser = args.subparser
    given = {k: getattr(args, k) for k in DEFAULTS if getattr(args, k) is not None}
    settings = {**DEFAULTS, **given}
    problem_name = args.problem or DEFAULT_PROBLEM
    if args.out is None:
        dim_tag = f"-d{args.dim}" if args.dim is not None else ""
        args.out = os.path.join("runs", f"{problem_name}{dim_tag}-{settings['model']}-"
                                        f"{settings['inference'] or 'slice'}-s{settings['seed']}")
    out = args.out
    journal_path, results_path, figure_path = (os.path.join(out, n) for n in (JOURNAL, RESULTS, FIGURE))
    resuming = args.resume and _has_journal(journal_path)
    previous = _read_json(results_path) if resuming else None

    if _has_journal(journal_path) and not args.resume:
        run_parser.error(f"{out} already holds a run ({journal_path}); pass --resume to continue it "
                         f"or choose another --out")
    if os.path.exists(out) and not os.path.isdir(out):
        run_parser.error(f"--out {out} exists and is not a directory")

    if resuming:
        try:
            header, observations = journal_io.read(journal_path)
        except (OSError, ValueError) as err:
            print(f"jbo run: error: cannot resume from {journal_path}: {err}", file=sys.stderr)
            return 1
        try:
            recorded = loop.Settings.from_dict(header["settings"])
        except ValueError as err:
            print(f"jbo run: error: cannot resume from {journal_path}: {err}", file=sys.stderr)
            return 1
        conflicts = [f"--{k.replace('_', '-')} {v!r} (journal: {setting_of(recorded, k)!r})"
                     for k, v in {**given, "n_init": args.n_init, "design": args.design,
                                   "output_warping": args.output_warping, "trust_region": args.trust_region}.items()
                     if v is not None and setting_of(recorded, k) != v]
        if previous:
            if args.problem is not None and args.problem != previous.get("problem"):
                conflicts.append(f"--problem {args.problem!r} (journal: {previous.get('problem')!r})")
            if args.dim is not None and args.dim != previous.get("dim"):
                conflicts.append(f"--dim {args.dim} (journal: {previous.get('dim')})")
            problem_name = previous.get("problem", problem_name)
            dim = previous.get("dim") if args.dim is None else args.dim
        else:
            dim = args.dim
        if conflicts:
            run_parser.error("--resume continues the run with the journal's settings; these differ: "
                             + "; ".join(conflicts))
        settings = _describe(recorded.to_dict())
    else:
        dim = args.dim
        observations = []

    try:
        problem = get_problem(problem_name, dim=dim)
    except (ValueError, TypeError) as err:
        run_parser.error(str(err))
    space = problem.space()
    if resuming and header["space"] != space.to_dict():
        run_parser.error(f"the journal's search space does not match problem {problem.name} (dim {problem.dim}); "
                         f"pass --problem/--dim of the original run")

    options = {} if resuming else {k: v for k, v in (("n_init", args.n_init), ("design", args.design),
                                                     ("output_warping", args.output_warping),
                                                     ("trust_region", args.trust_region)) if v is not None}
    given = _given_model_options(args)
    if given and resuming:
        run_parser.error("--resume continues the run with the journal's settings; drop the model options "
                         f"({', '.join(sorted(given))})")
    fields = models.option_names(settings["model"]) if given else ()
    foreign = sorted(f"{flag} ({field})" for flag, (field, _) in given.items() if field.split(".")[0] not in fields)
    if foreign:
        run_parser.error(f"{', '.join(foreign)}: not option(s) of --model {settings['model']} (its options: "
                         f"{', '.join(fields)})")
    options.update(_nest(given))
    explicit = {} if resuming else {k: settings[k] for k in ("model", "acquisition", "seed")}
    if not resuming and settings["inference"] is not None:
        explicit["inference"] = settings["inference"]
    try:
        if not resuming:
            settings = _describe(loop.Settings.create(**explicit, **options).to_dict())
    except ValueError as err:
        run_parser.error(str(err))
    os.makedirs(out, exist_ok=True)
    if resuming:
        _note(args, f"resuming {journal_path}: {len(observations)} evaluations recorded, budget {args.budget}")
    elif args.resume:
        _note(args, f"no journal in {out} yet: starting a new run")
    base = {
        "problem": problem.name, "dim": problem.dim, "optimum": float(problem.optimum),
        "model": settings["model"], "inference": settings["inference"],
        "acquisition": settings["acquisition"], "seed": settings["seed"], "budget": args.budget,
        "jbo_version": __version__,
    }
    _write_json(results_path, {**base, "status": "running"})

    timings: list[dict] = list(previous.get("suggestions", [])) if previous else []
    clock = [time.perf_counter()]

    def record_timing(opt):
        now = time.perf_counter()
        info, last = opt.last_info, opt.history[-1]
        timings.append({
            "n": int(info.get("n", len(opt.history) - 1)), "phase": info.get("phase"),
            "suggest_seconds": max(0.0, now - clock[0] - (last.get("seconds") or 0.0)),
            "n_pad": info.get("n_pad"),
        })
        clock[0] = now

    try:
        result = minimize(problem.evaluate, space, budget=args.budget, journal=journal_path,
                              resume=args.resume, progress=not args.quiet, callback=record_timing,
                              **explicit, **options)
    except KeyboardInterrupt:
        done = len(journal_io.read(journal_path)[1]) if _has_journal(journal_path) else 0
        print(f"\ninterrupted after {done} evaluations; they are saved in {journal_path}.\n"
              f"continue with: jbo run --out {out} --resume --budget {args.budget}", file=sys.stderr)
        _write_json(results_path, {**base, "status": "interrupted", "n_evaluations": done})
        return 130

    header, _ = journal_io.read(journal_path)
    values = result.values
    failures = int(np.isnan(values).sum())
    best = _finite_or_none(result.best_value)
    regret = None if best is None else best - float(problem.optimum)
    seconds = result.seconds + (float(previous.get("seconds", 0.0)) if previous else 0.0)
    label = "/".join(v for v in (settings["model"], settings["inference"], settings["acquisition"]) if v != "-")
    plotting.plot_convergence({label: values[None]}, optimum=float(problem.optimum), path=figure_path,
                              title=f"{problem.name} (seed {settings['seed']})")
    model_times = [t["suggest_seconds"] for t in timings if t.get("phase") == "model"]
    payload = {
        **base, "status": "complete", "n_evaluations": int(len(values)), "failures": failures,
        "best_config": result.best_config, "best_value": best, "simple_regret": regret,
        "log10_regret": None if regret is None else float(metrics.log10_distance([best], problem.optimum)[0]),
        "seconds": seconds,
        "mean_model_suggest_seconds": float(np.mean(model_times)) if model_times else None,
        "settings": header["settings"],
        "files": {"journal": JOURNAL, "figure": FIGURE},
        "suggestions": timings,
    }
    _write_json(results_path, payload)

    print(_table(
        ["problem", "model", "inference", "budget", "best value", "optimum", "simple regret", "time [s]", "failures"],
        [[problem.name if problem.dim == get_problem(problem.name).dim else f"{problem.name} (d={problem.dim})",
          settings["model"],
          settings["inference"], str(len(values)), _fmt(best), _fmt(float(problem.optimum)),
          _fmt(regret, 3), f"{seconds:.1f}", str(failures)]]))
    print(f"journal: {journal_path}\nresults: {results_path}\nplot:    {figure_path}")
    return 0


# ------------------------------------------------------------------------------------------------
# jbo problems
# ------------------------------------------------------------------------------------------------
def _bounds_summary(bounds) -> str:
    def interval(row):
        return f"[{row[0]:g}, {row[1]:g}]"

    d = len(bounds)
    for period in range(1, d + 1):
        if d % period == 0 and np.array_equal(bounds, np.tile(bounds[:period], (d // period, 1))):
            block = " x ".join(interval(r) for r in bounds[:period])
            if period == d:
                return block
            return f"{block}^{d // period}" if period == 1 else f"({block})^{d // period}"
    return " x ".join(interval(r) for r in bounds)  # pragma: no cover - the loop ends at period == d


def cmd_problems(args) -> int:
    rows = []
    for name in list_problems():
        p = get_problem(name)
        try:
            get_problem(name, dim=2 * p.dim)
            scalable = "yes"
        except (ValueError, TypeError):
            scalable = "no"
        # a conditional (tree-structured) problem has no box: describe its tree instead
        domain = _bounds_summary(p.bounds) if hasattr(p, "bounds") else f"conditional, {p.n_leaves} leaves"
        rows.append([name, str(p.dim), scalable, _fmt(float(p.optimum), 10), domain])
    print(_table(["name", "dim", "scalable (--dim)", "optimum", "bounds"], rows))
    return 0


# ------------------------------------------------------------------------------------------------
# jbo plot
# ------------------------------------------------------------------------------------------------
def cmd_plot(args) -> int:
    plot_parser = args.subparser
    runs = []
    for directory in args.dirs:
        path = os.path.join(directory, JOURNAL)
        if not os.path.isfile(path):
            plot_parser.error(f"{directory}: no {JOURNAL} there")
        try:
            header, observations = journal_io.read(path)
        except ValueError as err:
            plot_parser.error(str(err))
        if not observations:
            _note(args, f"skipping {directory}: no evaluations yet")
            continue
        values = np.array([np.nan if o.get("value") is None else float(o["value"]) for o in observations])
        results = _read_json(os.path.join(directory, RESULTS)) or {}
        name, optimum = results.get("problem"), results.get("optimum")
        if name is not None and optimum is None:
            try:
                optimum = float(get_problem(name, dim=results.get("dim")).optimum)
            except (ValueError, TypeError):
                optimum = None
        runs.append({"dir": directory, "values": values, "problem": name, "optimum": optimum,
                     **_describe(header.get("settings", {}))})
    if not runs:
        plot_parser.error("none of the directories holds any evaluation")

    problems = sorted({str(r["problem"]) for r in runs})
    with_acq = len({r["acquisition"] for r in runs}) > 1
    regret = all(r["optimum"] is not None for r in runs)
    if not regret and len(problems) > 1:
        _note(args, "note: some runs have no known optimum; plotting raw best values of different problems")
    groups: dict[str, list] = {}
    for r in runs:
        label = "/".join([r["model"]] + ([r["inference"]] if r["inference"] != "-" else [])
                         + ([r["acquisition"]] if with_acq else []))
        if len(problems) > 1:
            label = f"{r['problem']}: {label}"
        # Regret per run (its own optimum), so runs of different problems share one axis.
        groups.setdefault(label, []).append(r["values"] - r["optimum"] if regret else r["values"])
    for label, curves in groups.items():
        lengths = {len(c) for c in curves}
        if len(lengths) > 1:
            _note(args, f"note: {label}: runs of {sorted(lengths)} evaluations; cut to {min(lengths)}")
    title = ", ".join(p for p in problems if p != "None") or None
    path = plotting.plot_convergence(groups, optimum=0.0 if regret else None, log=not args.linear,
                                     path=args.out, title=title)
    print(_table(["label", "runs", "evaluations"],
                 [[k, str(len(v)), str(min(len(c) for c in v))] for k, v in groups.items()]))
    print(path)
    return 0


def load_study(target: str) -> dict:
    """The study ``SCRIPT_OR_MODULE:NAME`` declares: a dict of :func:`jbo.study`'s arguments, or a function
    returning one."""
    import importlib
    import importlib.util

    where, _, name = target.rpartition(":")
    if not where or not name:
        raise SystemExit(f"study {target!r}: give SCRIPT_OR_MODULE:NAME, e.g. studies.py:ABLATION")
    if where.endswith(".py"):
        if not os.path.exists(where):
            raise SystemExit(f"study {target!r}: no script {where!r}")
        sys.path.insert(0, os.path.dirname(os.path.abspath(where)))
        spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(where))[0], where)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # so that its functions pickle by reference for worker processes
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    if not hasattr(module, name):
        raise SystemExit(f"study {target!r}: {where} defines no {name!r}")
    declared = getattr(module, name)
    declared = declared() if callable(declared) else declared
    missing = {"fn", "space", "budget", "seeds", "arms"} - set(declared)
    if not isinstance(declared, dict) or missing:
        raise SystemExit(f"study {target!r}: expected a dict of jbo.study's arguments; missing {sorted(missing)}")
    return declared


def cmd_study(args) -> int:
    declared = load_study(args.target)
    if args.jax_cache:
        cache.enable_jax_cache()
    executor = None
    if args.processes and args.dask:
        raise SystemExit("give --processes or --dask, not both")
    if args.processes:
        import concurrent.futures
        import multiprocessing

        executor = concurrent.futures.ProcessPoolExecutor(args.processes,
                                                          mp_context=multiprocessing.get_context("spawn"))
    elif args.dask:
        import distributed

        executor = distributed.Client(args.dask)
    try:
        result = studies.study(**declared, store=args.store, executor=executor)
    finally:
        if executor is not None:
            (executor.close if args.dask else executor.shutdown)()
    print(result.table())
    return 0


def use_cpu_devices(count: int, strict: bool = True) -> None:
    """Ask JAX for ``count`` host CPU devices; only possible before JAX starts its CPU backend.

    Args:
      count: number of CPU devices.
      strict: exit with a message if JAX already runs with another count (else keep what it has).
    """
    try:
        jax.config.update("jax_num_cpu_devices", count)
    except RuntimeError as error:  # the backend already runs in this process
        if strict and len(jax.devices("cpu")) != count:
            raise SystemExit(f"--cpu-devices {count}: JAX's CPU backend is already initialised with "
                             f"{len(jax.devices('cpu'))} device(s) in this process ({error})") from None


# ------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``jbo`` command; returns the exit status (argparse errors exit with 2)."""
    limit_blas_threads(_USER_SET_BLAS_THREADS)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "run":
        if args.cpu_devices:
            use_cpu_devices(args.cpu_devices)
        else:
            try:
                members = models.create(args.model or DEFAULTS["model"], **_nest(_given_model_options(args))).members
            except ValueError:  # cmd_run reports it
                members = 1
            if members > 1:
                use_cpu_devices(max(1, min(os.cpu_count() or 1, members)), strict=False)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
