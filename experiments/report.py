"""Regenerate BENCHMARKS.md, and the README's results table, from the stored results alone.

Every experiment script owns its sections: ``report()`` returns them (``{section: markdown}``) from its results
under ``experiments/results``, ``claims()`` the rows it contributes to the summary (:func:`_common.claim`: paper ·
claim · paper's figure · jbo's figure · reproduced?), each decided from the same data, and ``figures()`` (where it
has one) draws its figures. This script calls them all and writes the summary table first, one part per paper,
then the core's quality and the speed sections; scripts run it after a run (:func:`_common.regenerate`), so
BENCHMARKS.md never holds a figure that is not in the data.

    python experiments/report.py [--figures] [--check]
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

# The document's parts, in order: (heading, the scripts whose sections it holds).
PARTS = (
    ("DNGO: Snoek et al. 2015, Scalable Bayesian optimization using deep neural networks",
     ("dngo_table1", "dngo_scaling", "dngo_ablation", "dngo_boundary", "dngo_vs_tpe")),
    ("Ensembled DNGO: Pethick 2018", ("ensemble_dngo",)),
    ("The arc kernel: Swersky et al. 2014, Raiders of the lost architecture", ("arc_regression",)),
    ("Tree-structured BO: Jenatton et al. 2017, Bayesian optimization with tree-structured dependencies",
     ("tree_synthetic", "conditional_mlp", "conditional_readme", "bench_tree")),
    ("BOCK: Oh et al. 2018, Bayesian optimization with cylindrical kernels",
     ("bock_table1", "bock_table2", "bock_scaling", "bock_fit_cost", "bock_mlp_weights", "bock_rounding")),
    ("The core: quality against peers, and features",
     ("core_quality", "hartmann6_traps", "escape_ablation", "constrained", "parallel_workers", "optuna_sampler", "suite")),
    ("Speed", ("bench_suggest", "bench_chains", "bench_devices", "bench_compiled", "bench_study", "bench_byo",
               "bench_programs", "bench_store", "bench_highdim")),
)
# Measured by hand, kept as written (each row names how it was measured).
AUTHORED = {"Speed": os.path.join(os.path.dirname(os.path.abspath(__file__)), "design_choices.md")}
README = os.path.join(_common.ROOT, "README.md")
HEADLINE = ("<!-- BEGIN headline -->", "<!-- END headline -->")

INTRO = ("Every figure below is regenerated from the stored results (`experiments/results/*.json`) by"
         " `python experiments/report.py`; each section names the command, machine and commit that made its data."
         " Budgets include the initial design. The GP's default output warping became Yeo-Johnson at commit 3e052ea"
         " (section `suite`): a section or part made at an earlier commit ran the default GP unwarped"
         " (`output_warping=\"none\"`).")


def _demote(markdown: str) -> str:
    """One heading level down: a script's ``##`` section becomes a ``###`` under its part."""
    return re.sub(r"^(#{2,5}) ", lambda m: "#" + m.group(1) + " ", markdown, flags=re.M)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def summary_table(claims: list[dict]) -> str:
    rows = ["| paper | claim | paper's figure | jbo's figure | reproduced? | section |", "|---|---|---|---|---|---|"]
    for c in claims:
        rows.append("| " + " | ".join(_cell(c[k]) for k in ("paper", "claim", "paper_figure", "jbo_figure",
                                                             "reproduced")) + f" | [{c['section']}](#{c['section']}) |")
    return "\n".join(rows)


def headline_table(claims: list[dict]) -> str:
    rows = ["| result | jbo | compared with | reproduced? | section |", "|---|---|---|---|---|"]
    for c in claims:
        if c["headline"]:
            against = c["paper_figure"] if c["paper"].startswith("jbo") else f"{c['paper']}: {c['paper_figure']}"
            rows.append("| " + " | ".join(_cell(t) for t in (c["claim"], c["jbo_figure"], against, c["reproduced"]))
                        + f" | [{c['section']}](BENCHMARKS.md#{c['section']}) |")
    return "\n".join(rows)


def collect(figures: bool = False) -> tuple[dict, list[dict]]:
    """Every script's sections (``{script: {section: markdown}}``, what its ``report()`` returns) and claims.

    ``figures``: also draw each script's figures from its stored results (its ``figures()``, where it has one).
    """
    sections, claims = {}, []
    for _, scripts in PARTS:
        for name in scripts:
            module = importlib.import_module(name)
            sections[name] = module.report()
            if figures and hasattr(module, "figures"):
                module.figures()
            claims += module.claims()
    return sections, claims


#: What BENCHMARKS.md keeps of a section: notes (the rest, with every table, is in its details file) and table rows.
NOTE_LINES = 2
TABLE_ROWS = 13
DETAILS = "details"  # folder of the full sections, next to the data (under _common.RESULTS)
_PROVENANCE = ("- date:", "- machine:", "- command:", "- note:", "- provenance:")


def details_path(section: str) -> str:
    return os.path.join(_common.RESULTS, DETAILS, f"{section}.md")


def condense(section: str, text: str) -> str:
    """What BENCHMARKS.md shows of a section: its heading (anchored), where its data come from (date, commit,
    machine, command, in one line), its first table (at most :data:`TABLE_ROWS` rows), at most :data:`NOTE_LINES`
    notes, and a link to the full section (:func:`details_path`: every table, per-seed detail and long notes)."""
    lines = text.strip().splitlines()
    heading, body = lines[0], lines[1:]
    provenance = []
    for line in body:
        if line.startswith(_PROVENANCE):
            provenance.append(line[2:].strip())
        elif provenance:
            break
    table, notes, in_table, done = [], [], False, False
    for line in body:
        if line.startswith("|") and not done:
            table.append(line)
            in_table = True
            continue
        if in_table:
            done, in_table = True, False
        if line.strip() and not line.startswith(_PROVENANCE + ("|", "#", "![")) and len(notes) < NOTE_LINES:
            notes.append(line.strip().removeprefix("- "))
    rows = len(table) - 2
    if rows > TABLE_ROWS:
        table = table[:2 + TABLE_ROWS]
    link = os.path.relpath(details_path(section), os.path.dirname(_common.BENCHMARKS))
    title = heading.lstrip("#").strip()
    out = [f'{heading.split(" ")[0]} <a id="{section}"></a>{title}', ""]
    if provenance:
        out += ["Data: " + "; ".join(provenance) + ".", ""]
    if table:
        out += table + [""]
    out += [f"- {note}" for note in notes]
    more = f" ({rows - TABLE_ROWS} more table rows there)" if rows > TABLE_ROWS else ""
    out.append(f"- The full section (every table, per-seed detail, notes){more}: [{link}]({link})")
    return "\n".join(out)


def render(sections: dict, claims: list[dict]) -> tuple[str, dict]:
    """BENCHMARKS.md's text, and ``{path: text}`` of the sections' details files."""
    lines = ["# jbo benchmarks", "", INTRO, "", "## Summary", "",
             "Each paper's claims that jbo's experiments measure, and the library's own bars; `reproduced?` is"
             " decided from the data by the script that owns the section.", "", summary_table(claims), ""]
    details = {}
    for heading, scripts in PARTS:
        parts = [(section, text) for name in scripts for section, text in sections[name].items()]
        if heading in AUTHORED:
            parts.append((os.path.splitext(os.path.basename(AUTHORED[heading]))[0],
                          open(AUTHORED[heading]).read()))
        if not parts:
            continue
        lines += [f"## {heading}", ""]
        for section, text in parts:
            details[details_path(section)] = text.strip() + "\n"
            lines += [_demote(condense(section, text)), ""]
    return "\n".join(lines).rstrip() + "\n", details


def update_readme(claims: list[dict], path: str = README) -> None:
    """Replace the README's results table (between :data:`HEADLINE`'s comments) by the headline claims."""
    text = open(path).read()
    begin, end = HEADLINE
    if begin not in text or end not in text:
        raise SystemExit(f"{path} has no {begin} … {end} block for the headline results")
    text = text[: text.index(begin) + len(begin)] + "\n" + headline_table(claims) + "\n" + text[text.index(end):]
    with open(path, "w") as f:
        f.write(text)


def write(figures: bool = False, readme: bool | None = None) -> str:
    """Regenerate BENCHMARKS.md from the stored results (and the README's headline table when the
    results are the repository's own). Returns the path written."""
    sections, claims = collect(figures)
    text, details = render(sections, claims)
    with open(_common.BENCHMARKS, "w") as f:
        f.write(text)
    for path, detail in details.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(detail)
    if readme if readme is not None else _common.BENCHMARKS == os.path.join(_common.ROOT, "BENCHMARKS.md"):
        update_readme(claims)
    return _common.BENCHMARKS


def summary_of(text: str) -> list[str]:
    """The summary table's rows of a BENCHMARKS.md text."""
    body = text.split("## Summary", 1)[-1]
    return [line for line in body.split("\n## ", 1)[0].splitlines() if line.startswith("|")]


def check() -> int:
    """Render without writing and compare with BENCHMARKS.md: ``0`` when its summary table is what the data give,
    ``1`` (with the rows that differ) otherwise; sections whose text differs are listed either way."""
    import difflib

    sections, claims = collect()
    text, details = render(sections, claims)
    stored = open(_common.BENCHMARKS).read() if os.path.exists(_common.BENCHMARKS) else ""
    changed = [os.path.basename(path) for path, detail in details.items()
               if not os.path.exists(path) or open(path).read() != detail]
    print(f"BENCHMARKS.md: {len(text.splitlines())} lines rendered ({len(stored.splitlines())} stored); sections whose"
          f" text changed: {', '.join(changed) or 'none'}")
    diff = list(difflib.unified_diff(summary_of(stored), summary_of(text), "stored summary", "rendered summary",
                                     lineterm="", n=0))
    print("\n".join(diff) if diff else "summary: unchanged")
    return 1 if diff else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figures", action="store_true", help="draw every section's figures again")
    parser.add_argument("--results-dir", default=None, help="regenerate from (and into) this directory")
    parser.add_argument("--check", action="store_true",
                        help="write nothing: compare the rendered summary with BENCHMARKS.md's (exit 1 if it differs)")
    args = parser.parse_args(argv)
    _common.setup(cache=False)
    _common.use_results_dir(args.results_dir)
    if args.check:
        raise SystemExit(check())
    print(write(args.figures))


if __name__ == "__main__":
    main()
