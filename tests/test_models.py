"""The model registry and contract: configs round-trip, names map to configs, models stand alone."""

from __future__ import annotations

import ast
import json
import os

import numpy as np
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


@pytest.mark.parametrize("model", [models.GP(num_chains=5, num_samples=10),
                                   models.DNGO(n_networks=2, num_chains=2, num_samples=4,
                                               network={"hidden": (8, 8), "num_steps": 30})])
def test_several_slice_chains_run_the_loop_and_each_goes_on_from_its_own_last_sample(model, tmp_path):
    space = jbo.Space({"x": jbo.Real(-1.0, 2.0), "y": jbo.Real(0.0, 1.0)})
    journal = str(tmp_path / "run.jsonl")
    opt = jbo.Optimizer(space, model=model, seed=0, n_init=4, journal=journal)
    for _ in range(7):
        config = opt.ask()
        opt.tell(config, (config["x"] - 0.3) ** 2 + config["y"])
    chains = model.inference_config.num_chains
    z = opt.state.model_state.z
    assert z.shape[-2] == chains and not bool((z == z[..., :1, :]).all())  # (…, C, P): distinct chains
    assert opt.last_info["phase"] == "model" and np.sum(opt.last_info["num_evals"]) > 0
    assert -1.0 <= opt.best[0]["x"] <= 2.0 and 0.0 <= opt.best[0]["y"] <= 1.0
    assert jbo.Optimizer.resume(journal).settings.model == model  # the option is kept in the journal
