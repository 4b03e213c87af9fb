"""The model registry and contract: configs round-trip, names map to configs, models stand alone."""

from __future__ import annotations

import ast
import json
import os

import pytest

import jbo
from jbo import loop, models

MODELS_DIR = os.path.join(os.path.dirname(jbo.__file__), "models")


def imported_modules(path: str) -> set[str]:
    tree = ast.parse(open(path, encoding="utf-8").read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("filename", sorted(f for f in os.listdir(MODELS_DIR) if f.endswith(".py")))
def test_no_model_imports_the_loop(filename):
    names = imported_modules(os.path.join(MODELS_DIR, filename))
    assert not {"jbo.loop", "jbo.optimizer", "jbo.many"} & names, (filename, names)


@pytest.mark.parametrize("name", models.NAMES)
def test_every_name_is_a_config_that_round_trips(name):
    config = models.create(name)
    assert config.name == name
    assert models.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    assert type(config).step is not models.ModelConfig.step  # the config carries its functions
    settings = loop.Settings(model=name)
    assert loop.Settings.from_dict(json.loads(json.dumps(settings.to_dict()))) == settings


def test_unknown_names_and_options_are_named():
    with pytest.raises(ValueError, match=r"unknown model 'gpp'; valid choices"):
        models.create("gpp")
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['n_networks'\] for model 'gp'"):
        models.create("gp", n_networks=3)
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['inference'\] for model 'random'"):
        jbo.Optimizer(jbo.Space({"x": jbo.Real(0.0, 1.0)}), model="random", inference="map")
    with pytest.raises(ValueError, match="kernel"):
        models.GP(kernel="linear")


def test_a_config_object_with_options_is_replaced_not_ignored():
    config = models.create(models.GP(kernel="se"), inference="map")
    assert config == models.GP(kernel="se", inference="map")
