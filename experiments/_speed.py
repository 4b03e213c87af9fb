"""Plumbing of the speed benchmarks (``bench_*.py``): calls timed in fresh processes, sections of parts whose results
are stored with the provenance of their run, markdown tables."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import _common


def fresh(function, *args, python: str = sys.executable, env: dict | None = None) -> dict:
    """``function(*args)`` (a script's, returning a JSON dict) in a fresh interpreter with a new, empty compilation
    cache (``env`` may change that): what it returns, and the process's wall time seen from here (``wall``)."""
    here, module = os.path.split(os.path.splitext(os.path.abspath(sys.modules[function.__module__].__file__))[0])
    code = (f"import json, sys; sys.path.insert(0, {here!r}); from {module} import {function.__name__} as f;"
            f" print(json.dumps(f(*{args!r})))")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "JBO_CACHE_DIR": cache, "JBO_NO_CACHE": "", **(env or {})}
        start = time.perf_counter()
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, cwd=_common.ROOT)
        wall = time.perf_counter() - start
    if out.returncode:
        raise RuntimeError(f"subprocess failed:\n{out.stderr[-3000:]}")
    return {"wall": wall, **json.loads(out.stdout.strip().splitlines()[-1])}


def median(runs, key: str = "wall") -> float:
    return statistics.median(r[key] for r in runs)


def table(header, *rows) -> list[str]:
    """A markdown table of ``header``'s cells and ``rows`` of cells."""
    return [f"| {' | '.join(header)} |", "|" + "---|" * len(header), *(f"| {' | '.join(map(str, r))} |" for r in rows)]


@dataclasses.dataclass(frozen=True)
class Parts:
    """A section of parts, each stored in ``<name>.json`` beside the provenance of its run: ``blocks`` render the
    stored results (``{part: result -> lines}``, in order), ``runners`` make them (``{part: args -> result}``; a part
    without one is retired), ``options`` are the command line's (``{flag: default}``); ``cache``: the compilation
    cache stays on in this process; ``own_provenance``: each part's provenance apart (``<name>_<part>``)."""

    name: str
    title: str
    blocks: dict
    runners: dict
    options: dict = dataclasses.field(default_factory=dict)
    cache: bool = True
    own_provenance: bool = False

    def results(self) -> dict:
        return _common.load_results(f"{self.name}.json", {})

    def main(self, argv=None) -> None:
        """Run the parts named on the command line, store each with its provenance, regenerate BENCHMARKS.md."""
        parser = argparse.ArgumentParser(description=self.title)
        for flag, default in self.options.items():
            parser.add_argument(flag, type=str if default is None else type(default), default=default)
        _common.add_parts_argument(parser, self.runners)
        _common.add_output_arguments(parser)
        args = _common.start(parser, argv, parts=list(self.runners), cache=self.cache)
        if args is None:
            return
        for part in args.parts:
            print(f"running {part} ...", flush=True)
            result = self.runners[part](args)
            provenance = f"{self.name}_{part}" if self.own_provenance else self.name
            _common.record_provenance(provenance)
            _common.merge_results(os.path.join(_common.RESULTS, f"{self.name}.json"),
                                  [([part], result), ([f"{part}_header"], _common.header(provenance))])
        _common.regenerate()

    def report(self) -> dict:
        """The section: each stored part's provenance, then its block (a retired part's says so)."""
        results = self.results()
        lines = [f"## {self.title}"] + ([] if results else ["", "Not run."])
        for part, block in self.blocks.items():
            if part not in results:
                continue
            header = results[f"{part}_header"].rstrip()
            text = block(results[part])
            if part not in self.runners:
                commit = re.search(r"commit: (\w+)", header).group(1)
                text[0] = f"Runner retired; the command ran at commit {commit}. {text[0]}"
            lines += ["", header, "", *text]
        return {self.name: "\n".join(lines)}

    def claim(self, part: str, what: str, bar: str, decide) -> dict:
        """The summary row of ``part``'s bar, ``decide(stored result) -> (figure, verdict)``; ``not run`` without it."""
        results = self.results()
        figure, verdict = decide(results[part]) if part in results else ("–", "not run")
        return _common.claim("jbo", what, bar, figure, verdict, self.name)
