"""Every example in jbo's docstrings runs: the ``>>>`` ones as doctests, the ``::`` code blocks executed.

The ``::`` blocks are fragments a reader adapts (``jbo.minimize(f, space, ...)``); they run here in a namespace
holding the names they assume: ``f`` and ``space`` (a 2-d quadratic), ``my_surrogate`` (a surrogate of one's own:
jbo's exact GP), ``my_log_score`` (a pointwise log score), ``model``, ``key`` and ``model_args`` (a numpyro
model and its arguments). Budgets are shortened by editing the text, as tests/test_readme.py does; every edit
must find its text. A new ``::`` block of a module of jbo must be listed here, as code (run) or as a diagram.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import os
import re

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
import pytest

import jbo

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "jbo")

# (module, the block's first line) -> text edits; blocks of diagrams and file layouts are not code
CODE = {
    ("jbo.studies", 'problem = jbo.benchmarks.get_problem("hartmann6")'): [("budget=60, seeds=range(10)",
                                                                           "budget=8, seeds=range(2)")],
    ("jbo.kernels", "kernel = jbo.kernels.Matern52() + jbo.kernels.Linear()"): [],
    ("jbo.optimizer", 'opt = jbo.Optimizer(space, model="gp", inference="slice", acquisition="ei", seed=0)'): [],
    ("jbo.models.surrogate", 'model = jbo.models.SurrogateModel(surrogate=my_surrogate, inference="map")'): [
        ("model=model)", "model=model, budget=7)")],
    ("jbo.models", 'jbo.Optimizer(space, model="ensemble", n_networks=5, aggregator="median")'): [],
    ("jbo.slice", "mcmc = numpyro.infer.MCMC(SliceSampler(model), num_warmup=100, num_samples=500)"): [
        ("num_warmup=100, num_samples=500", "num_warmup=5, num_samples=5")],
    ("jbo.acquisition", "def lower_confidence_bound(mean, var, best):"): [
        ("acquisition=lower_confidence_bound)", "acquisition=lower_confidence_bound, budget=7, inference='map')"),
        ("log=True))", "log=True), budget=7, inference='map')")],
    ("jbo.acquisition", 'jbo.minimize(f, space, acquisition=jbo.acquisition.Mixture(("ei", "ucb", "pi")))'): [
        ('"pi")))', '"pi")), budget=7, inference="map")')],
    ("jbo.acquisition", 'jbo.minimize(f, space, acquisition=jbo.acquisition.ConstraintAware("ucb", "pi"))'): [
        ('"pi"))', '"pi"), budget=7, inference="map")')],
    ("jbo.many", 'problem = jbo.benchmarks.get_problem("hartmann6")'): [
        ("budget=100, seeds=range(30)", "budget=8, seeds=range(2)"),
        ("problem.space(), 60,", "problem.space(), 8,"), ("seeds=range(2))", "seeds=range(2), inference='map')"),
        ('acquisition="ucb")', 'acquisition="ucb", inference="map")')],
}
DIAGRAMS = {("jbo.loop", "padded observations -> standardise (failures handled) -> anchors (shifted Sobol + around"
             " the best)"), ("jbo.store", "PATH/study.json                  what determines the results: objective,"
                             " space, budget, stages, each arm's")}


def _docstrings(module_name: str):
    module = importlib.import_module(module_name)
    tree = ast.parse(open(module.__file__, encoding="utf-8").read())
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=True)
            if text:
                yield text


def _blocks(text: str):
    """The ``::`` literal blocks of a docstring (not ``.. math::``), dedented."""
    for match in re.finditer(r"(^.*)::\n\n((?:[ \t]+\S.*\n|\n)+)", text + "\n", re.M):
        if ".. math" in match.group(1):
            continue
        lines = match.group(2).rstrip().splitlines()
        indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
        yield "\n".join(line[indent:] for line in lines) + "\n"


def _modules():
    for folder, _, files in os.walk(ROOT):
        for name in sorted(files):
            if name.endswith(".py"):
                parts = os.path.relpath(os.path.join(folder, name), os.path.dirname(ROOT))[:-3].split(os.sep)
                yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _found():
    return {(module, block.splitlines()[0].strip()): block for module in _modules()
            for text in _docstrings(module) for block in _blocks(text)}


def test_every_block_is_listed():
    found = set(_found())
    assert found == set(CODE) | DIAGRAMS, (found - set(CODE) - DIAGRAMS, (set(CODE) | DIAGRAMS) - found)


def _namespace():
    def model(y):
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(mu, 1.0), obs=y)

    return {"jbo": jbo, "jax": jax, "jnp": jnp, "numpyro": numpyro,
            "space": jbo.Space({"x": jbo.Real(-1.0, 1.0), "y": jbo.Real(-1.0, 1.0)}),
            "f": lambda c: (c["x"] - 0.3) ** 2 + (c["y"] + 0.2) ** 2,
            "my_surrogate": jbo.surrogates.exact_gp(), "my_log_score": lambda mean, var, best: -mean,
            "model": model, "key": jax.random.key(0), "model_args": (jnp.array([0.1, -0.3, 0.2]),),
            "SliceSampler": jbo.slice.SliceSampler}


@pytest.mark.parametrize("where", sorted(CODE))
def test_docstring_example_runs(where, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = _found()[where]
    for old, new in CODE[where]:
        assert old in code, f"the example no longer has {old!r}: update the test with the text"
        code = code.replace(old, new)
    exec(compile(code, f"{where[0]} docstring", "exec"), _namespace())


@pytest.mark.parametrize("module", ["jbo.benchmarks.registry"])
def test_doctests(module):
    failures, tried = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0
