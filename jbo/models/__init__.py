"""Models: each a module with a validated config and pure ``init``/``step`` functions (:mod:`jbo.models.base`).

A model is chosen by name, a shortcut with its defaults (``"gp"``, ``"ensemble"``, ...), or by its
config object::

    jbo.Optimizer(space, model="ensemble", n_networks=5, aggregator="median")
    jbo.Optimizer(space, model=jbo.models.DNGO(n_networks=5, aggregator="median"))

Both give the same config and the same suggestions. :func:`create` resolves either form,
:func:`from_dict` reads a config back from a journal, :func:`model_of` finds a config's functions.
"""

from __future__ import annotations

from typing import Any

from jbo.models import arc, bock, dngo, gp, random, tree
from jbo.models.arc import Arc
from jbo.models.base import Model, ModelConfig, Surrogate
from jbo.models.bock import BOCK, Matern
from jbo.models.dngo import DNGO
from jbo.models.gp import GP, exact_gp
from jbo.models.random import Random
from jbo.models.tree import Tree

# Every model: config class -> its functions. New models register here.
REGISTRY: dict[type, Model] = {m.config: m for m in (gp.MODEL, arc.MODEL, dngo.MODEL, tree.MODEL, random.MODEL,
                                                     bock.MODEL, bock.MATERN)}

# Names a user can pass as ``model=``: the config class and the defaults the name stands for.
SHORTCUTS: dict[str, tuple[type, dict]] = {
    "gp": (GP, {}),
    "arc": (Arc, {}),
    "dngo": (DNGO, {"n_networks": 1}),
    "ensemble": (DNGO, {"n_networks": 5}),
    "tree": (Tree, {"mode": "tree"}),
    "tree-paper": (Tree, {"mode": "tree-paper"}),
    "independent": (Tree, {"mode": "independent"}),
    "marginal": (Tree, {"mode": "marginal"}),
    "random": (Random, {}),
    "bock": (BOCK, {}),
    "bock-w": (BOCK, {"warp": False}),
    "bock-b": (BOCK, {"boundary": True}),
    "matern": (Matern, {}),
}
NAMES = tuple(SHORTCUTS)

__all__ = ["Model", "ModelConfig", "Surrogate", "exact_gp", "GP", "Arc", "DNGO", "Tree", "Random",
           "BOCK", "Matern", "REGISTRY", "SHORTCUTS", "NAMES", "create", "from_dict", "model_of", "option_names"]


def create(model: str | ModelConfig = "gp", **options) -> ModelConfig:
    """The config of ``model`` (a name or a config object) with ``options`` applied.

    Raises:
      ValueError: an unknown name (listing the valid ones), an option the model does not have (listing
        its options), or an invalid value (naming the field).
    """
    if isinstance(model, ModelConfig):
        return model.replace(**options) if options else model
    if not isinstance(model, str) or model not in SHORTCUTS:
        raise ValueError(f"unknown model {model!r}; valid choices: {list(NAMES)}")
    cls, defaults = SHORTCUTS[model]
    if model == "dngo" and options.get("n_networks", 1) not in (None, 1):
        raise ValueError(f"model 'dngo' is one network; use model='ensemble' for n_networks={options['n_networks']}")
    options = {k: v for k, v in options.items() if not (k == "n_networks" and v is None)}
    unknown = sorted(set(options) - set(option_names(model)))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for model {model!r}; valid: {list(option_names(model))}")
    return cls.create(**{**defaults, **options})


def option_names(model: str | ModelConfig) -> tuple[str, ...]:
    """The option names ``model`` accepts."""
    import dataclasses

    cls = type(model) if isinstance(model, ModelConfig) else SHORTCUTS[model][0]
    return tuple(f.name for f in dataclasses.fields(cls))


def from_dict(d: dict[str, Any]) -> ModelConfig:
    """A config from :meth:`ModelConfig.to_dict` output (a journal's ``settings.model``)."""
    if not isinstance(d, dict) or "name" not in d:
        raise ValueError(f"a model config dict needs a 'name', got {d!r}")
    fields = {k: v for k, v in d.items() if k != "name"}
    if d["name"] in SHORTCUTS:
        # A journal written before a field existed ran with that field's value of the time.
        fields = {**SHORTCUTS[d["name"]][0].recorded_defaults, **fields}
    return create(d["name"], **fields)


def model_of(config: ModelConfig) -> Model:
    """The registered functions of a config's model."""
    try:
        return REGISTRY[type(config)]
    except KeyError:
        raise ValueError(f"no model registered for config type {type(config).__name__}") from None
