"""Models: config classes that carry their functions (:class:`ModelConfig`).

A model is chosen by its config object, or by a short name that stands for a config class and some of
its options (:data:`SHORTCUTS`)::

    jbo.Optimizer(space, model="ensemble", n_networks=5, aggregator="median")
    jbo.Optimizer(space, model=jbo.models.DNGO(n_networks=5, aggregator="median"))

Both give the same config and the same suggestions. A model of your own is a :class:`ModelConfig`
subclass (or a :class:`SurrogateModel` of a surrogate of yours), passed as an object; :func:`register`
only adds a short name for it. :func:`create` resolves either form, :func:`from_dict` reads a config
back from a journal.
"""

from __future__ import annotations

from typing import Any

from jbo import records
from jbo.models.arc import Arc
from jbo.models.base import CliOption, ModelConfig, option_names as _option_names
from jbo.models.bock import BOCK, Matern
from jbo.models.dngo import DNGO
from jbo.models.gp import GP
from jbo.models.random import Random
from jbo.models.sampled import SampledConfig, StepConfig
from jbo.models.surrogate import SurrogateModel, as_surrogate
from jbo.models.tree import Tree
from jbo.surrogates.gp import exact_gp
from jbo.types import Surrogate

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
#: jbo's own model names (:func:`names` adds those registered since).
NAMES = tuple(SHORTCUTS)

__all__ = ["ModelConfig", "SampledConfig", "StepConfig", "SurrogateModel", "Surrogate", "CliOption", "exact_gp",
           "as_surrogate", "GP", "Arc", "DNGO", "Tree", "Random", "BOCK", "Matern", "SHORTCUTS", "NAMES", "names",
           "register", "create", "from_dict", "option_names", "config_classes"]


def register(name: str, config_class: type, **defaults) -> None:
    """Add the short name ``name`` for ``config_class`` with ``defaults`` (``model=name`` then works like
    ``model=config_class(**defaults)``, in the API and in ``jbo run --model``). It adds a name only: the
    class carries its functions and runs without being registered.

    Raises:
      ValueError: ``name`` is one of jbo's own, or ``config_class`` is not a :class:`ModelConfig` subclass,
        or a default is not one of its options.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"a model name must be a non-empty string, got {name!r}")
    if name in NAMES:
        raise ValueError(f"{name!r} is one of jbo's model names; choose another")
    if not (isinstance(config_class, type) and issubclass(config_class, ModelConfig)):
        raise ValueError(f"config_class must be a jbo.models.ModelConfig subclass, got {config_class!r}")
    unknown = sorted(set(defaults) - set(_option_names(config_class)))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for {config_class.__name__}; valid: "
                         f"{list(_option_names(config_class))}")
    SHORTCUTS[name] = (config_class, dict(defaults))


def names() -> tuple[str, ...]:
    """Every model name: jbo's and those registered."""
    return tuple(SHORTCUTS)


def config_classes() -> tuple[type, ...]:
    """The config classes the names stand for, each once, in the order of :func:`names`."""
    return tuple(dict.fromkeys(cls for cls, _ in SHORTCUTS.values()))


def create(model: str | ModelConfig | type = "gp", **options) -> ModelConfig:
    """The config of ``model`` (a name, a config object or a config class) with ``options`` applied.

    Raises:
      ValueError: an unknown name (listing the valid ones), an option the model does not have (listing
        its options), or an invalid value (naming the field).
    """
    if isinstance(model, ModelConfig):
        return model.replace(**options) if options else model
    if isinstance(model, type) and issubclass(model, ModelConfig):
        return model.create(**options)
    if not isinstance(model, str) or model not in SHORTCUTS:
        raise ValueError(f"unknown model {model!r}; valid choices: {list(names())}, a jbo.models.ModelConfig "
                         "object (jbo.models.GP(kernel=...), a class of your own) or a "
                         "jbo.models.SurrogateModel(surrogate=...)")
    cls, defaults = SHORTCUTS[model]
    if model == "dngo" and options.get("n_networks", 1) not in (None, 1):
        raise ValueError(f"model 'dngo' is one network; use model='ensemble' for n_networks={options['n_networks']}")
    options = {k: v for k, v in options.items() if not (k == "n_networks" and v is None)}
    unknown = sorted(set(options) - set(_option_names(cls)))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for model {model!r}; valid: {list(_option_names(cls))}")
    return cls.create(**{**defaults, **options})


def option_names(model: str | ModelConfig | type) -> tuple[str, ...]:
    """The option names ``model`` (a name, a config object or a config class) accepts."""
    if isinstance(model, str):
        if model not in SHORTCUTS:
            raise ValueError(f"unknown model {model!r}; valid choices: {list(names())}")
        return _option_names(SHORTCUTS[model][0])
    return _option_names(model if isinstance(model, type) else type(model))


def from_dict(d: dict[str, Any]) -> ModelConfig:
    """A config from :meth:`ModelConfig.to_dict` output (a journal's ``settings.model``).

    The class is imported from the record's ``"$type"`` (journals written before it was recorded name
    one of jbo's models); fields the record lacks take the values runs had before they existed
    (:attr:`ModelConfig.recorded_defaults`), and fields holding records (a kernel expression, a function
    of the user's) are rebuilt (:func:`jbo.records.from_record`).

    Raises:
      ValueError: an unknown name; :class:`jbo.records.RecordError` (a ``ValueError``) where the record
        names a class or function that cannot be imported here.
    """
    if not isinstance(d, dict) or "name" not in d:
        raise ValueError(f"a model config dict needs a 'name', got {d!r}")
    # Lists come back as tuples: fields of frozen configs hash (jbo's option records take either).
    fields = {k: records.from_record(v, tuples=True) for k, v in d.items() if k not in ("name", records.TYPE)}
    if records.TYPE in d:
        path = d[records.TYPE]
        if not isinstance(path, str):
            raise records.RecordError(f"model {d['name']!r} was defined where it cannot be imported (a class of "
                                      "an interactive session, or a local class): pass model=... again")
        cls = records.load(path)
        if not (isinstance(cls, type) and issubclass(cls, ModelConfig)):
            raise ValueError(f"{path!r} is not a jbo.models.ModelConfig class")
        return cls.create(**{**cls.recorded_defaults, **fields})
    if d["name"] not in SHORTCUTS:
        raise ValueError(f"unknown model {d['name']!r}; valid choices: {list(names())}")
    cls, defaults = SHORTCUTS[d["name"]]
    return create(d["name"], **{**cls.recorded_defaults, **fields})
