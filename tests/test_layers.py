"""jbo's layers (DESIGN.md): imports point down only, no module imports another in a cycle, and no import of
jbo hides inside a function (the way a cycle is usually dodged). Read from the source with ``ast``."""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "jbo")

# Bottom to top; a module may import its own layer and those below. A new module must be placed here.
LAYERS = {
    "types": ["jbo.types"],
    "utilities": ["jbo.checks", "jbo.records", "jbo._xla_cpu", "jbo.precision", "jbo.cache", "jbo.devices", "jbo.journal", "jbo.linalg", "jbo.data",
                  "jbo.warping"],
    "blocks": ["jbo.spaces", "jbo.kernels", "jbo.priors", "jbo.design", "jbo.benchmarks", "jbo.metrics"],
    "maths": ["jbo.surrogates", "jbo.inference", "jbo.slice", "jbo.elliptical", "jbo.acquisition", "jbo.optimize", "jbo.escape",
              "jbo.trust"],
    "models": ["jbo.models"],
    "step": ["jbo.loop"],
    "drivers": ["jbo.optimizer", "jbo.executors", "jbo.many"],
    "edges": ["jbo.cli", "jbo.plotting", "jbo.integrations", "jbo.store", "jbo.studies", "jbo"],
}
ORDER = list(LAYERS)


def modules() -> dict[str, str]:
    """Every module of jbo: dotted name -> path."""
    out = {}
    for directory, _, files in os.walk(ROOT):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                parts = os.path.relpath(path, os.path.dirname(ROOT))[:-3].split(os.sep)
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                out[".".join(parts)] = path
    return out


MODULES = modules()


def layer_of(module: str) -> str:
    best = max(((prefix, layer) for layer, prefixes in LAYERS.items() for prefix in prefixes
                if module == prefix or module.startswith(prefix + ".")), key=lambda p: len(p[0]), default=None)
    assert best is not None, f"{module} is in no layer of tests/test_layers.py (place it, and in DESIGN.md)"
    return best[1]


def imports(module: str) -> list[tuple[str, int, bool]]:
    """``(imported jbo module, line, at module level)`` for every import of jbo in ``module``."""
    tree = ast.parse(open(MODULES[module], encoding="utf-8").read())
    package = module if MODULES[module].endswith("__init__.py") else module.rpartition(".")[0]
    top_level = {id(node) for node in tree.body}
    type_checking = {id(n) for node in tree.body if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                     for n in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for name in names:
            if name == "jbo" or name.startswith("jbo."):
                found.append((name, node.lineno, id(node) in top_level or id(node) in type_checking))
    return found


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    mine = ORDER.index(layer_of(module))
    for target, line, _ in imports(module):
        theirs = ORDER.index(layer_of(target))
        assert theirs <= mine, (f"{module} ({ORDER[mine]}) imports {target} ({ORDER[theirs]}) at line {line}: "
                                "an import pointing up a layer")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_of_jbo_inside_a_function(module):
    hidden = [(target, line) for target, line, top in imports(module) if not top]
    assert not hidden, f"{module} imports {hidden} inside a function or block: import at the top of the module"


def test_no_import_cycle():
    graph = {module: {target for target, _, _ in imports(module) if target in MODULES and target != module}
             for module in MODULES}
    # A submodule's import also runs its parents' __init__: those edges are implicit and not cycles of ours,
    # but an explicit import of a package from its own submodule is.
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


def test_models_import_no_driver():
    drivers = ORDER.index("step")
    for module in MODULES:
        if layer_of(module) == "models":
            assert all(ORDER.index(layer_of(t)) < drivers for t, _, _ in imports(module)), module


def test_the_checker_sees_what_it_forbids(tmp_path, monkeypatch):
    """The checks can fail: a model module importing the loop inside a function breaks two of them."""
    source = "from jbo import types\n\ndef f():\n    from jbo import loop\n    return loop\n"
    path = tmp_path / "fake.py"
    path.write_text(source)
    monkeypatch.setitem(MODULES, "jbo.models.fake", str(path))
    with pytest.raises(AssertionError, match="pointing up"):
        test_imports_point_down("jbo.models.fake")
    with pytest.raises(AssertionError, match="inside a function"):
        test_no_import_of_jbo_inside_a_function("jbo.models.fake")
