"""The model contract: a frozen config class that carries its functions (:class:`ModelConfig`).

A model is what the BO loop runs. Its config is a frozen dataclass (hashable: a static argument of the
compiled programs), validated on construction, recorded in a run's journal; its methods are the model:

* ``init(space, dtype, key) -> state``: the PyTree the model carries from one suggestion to the next
  (where its fits start, network weights), with the same structure and shapes at every step; ``key``
  draws its cold start (prior draws), so the per-suggestion program holds no sampling;
* ``step(space, acquisition, state, inputs, key) -> (x, state, info)``: fit to ``inputs.data`` and
  maximise ``acquisition`` (a :class:`jbo.types.Acquisition`); ``x`` ``(D,)`` in the unit cube, ``info``
  a dict of arrays. Traceable: the loop compiles it once per padded size for ask/tell, and ``lax.scan``
  runs it for a whole run on a JAX objective (``jbo.minimize_many``).

Every other hook the drivers use has a default here: :meth:`ModelConfig.default_maximize`,
:meth:`~ModelConfig.default_design`, :attr:`~ModelConfig.uses_initial_design`,
:meth:`~ModelConfig.prepare`, :meth:`~ModelConfig.cli_options`. Drivers call these and never test a
model by its name, so a model of your own is a subclass with ``init`` and ``step`` (or, for a
probabilistic surrogate, :class:`jbo.models.SurrogateModel` with no subclass at all). Models never
import the loop or a driver.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, ClassVar, NamedTuple

from jbo import checks, records
from jbo.optimize import MaximizeConfig


class CliOption(NamedTuple):
    """A command-line option of a model (``jbo run --model NAME --flag VALUE``).

    Attributes:
      flag: e.g. ``"--n-networks"``.
      field: the config field it sets; a dotted name sets a field of a nested option record
        (``"network.hidden"``).
      type: parses one token (``int``, ``float``, ``str``; ``bool`` makes a ``--flag/--no-flag`` pair).
      nargs: argparse's ``nargs`` (``"+"`` for a list), or ``None``.
      help: one line.
    """

    flag: str
    field: str
    type: Callable
    nargs: str | None = None
    help: str = ""


#: Field annotations the command line can parse, by the type that parses them.
_CLI_TYPES = {"bool": bool, "int": int, "float": float, "str": str, "bool | None": bool, "int | None": int,
              "float | None": float, "str | None": str}


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Base of every model config: frozen, validated on construction, recorded in the journal.

    A subclass declares its options as dataclass fields and overrides what differs from the defaults
    below. What ``step`` must do with what the loop hands it (``inputs``, :class:`jbo.types.Inputs`):

    * pending points (``inputs.pending``, rows where ``mask``): condition on them (the kriging believer,
      or fantasies as ``acquisition.pending`` says), or raise a ``ValueError`` saying the model cannot;
    * infeasible evaluations (``acquisition.classify``: ``inputs.labels`` holds 1 feasible / 0 infeasible
      on every evaluated row): discount the acquisition by a model of feasibility, or raise;
    * constraint values known at evaluation (``acquisition.num_constraints > 0``, ``inputs.constraints``):
      discount by ``P[c_k <= 0]``, or raise;
    * ``acquisition.function``: a built-in name, a :class:`jbo.acquisition.Pointwise`, or a
      :class:`jbo.acquisition.Choice` of them picked at run time by ``inputs.choice``; build the score with
      :func:`jbo.acquisition.integrated` (all three) or resolve a single one with :func:`jbo.acquisition.resolve`
      (both raise for what a model does not support).

    Attributes (class-level):
      kind: the model's short name (:attr:`name`); the class's own name, lower-cased, by default.
      recorded_defaults: fields added after journals were first written, with the value a run had
        before each existed (where the new default differs): resuming an older journal keeps its model.
      uses_initial_design: the loop evaluates an initial design (:meth:`default_design`) before the
        first model suggestion; ``False`` for a model that needs none (random search).
      cli_types: how the command line parses fields whose annotation does not say (``{"kernel": str}``
        for a field that also takes objects); see :meth:`cli_options`.
    """

    kind: ClassVar[str] = ""
    recorded_defaults: ClassVar[dict] = {}
    uses_initial_design: ClassVar[bool] = True
    cli_types: ClassVar[dict] = {}

    @property
    def name(self) -> str:
        """The model's name (a key of :data:`jbo.models.SHORTCUTS` for jbo's models)."""
        return self.kind or type(self).__name__.lower()

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Raise ``ValueError`` naming the field of any invalid value (subclasses extend)."""

    # -- the model ---------------------------------------------------------------------------------
    def init(self, space, dtype, key):
        """The state before the first suggestion (default: none, ``()``).

        Args:
          space: the space's :attr:`~jbo.spaces.Space.structure` (what it is in the unit cube: parameters named
            ``p0, p1, ...``, bounds and choices left to the encoding); dtype: the float dtype of the run; key:
            PRNG key.
        """
        return ()

    def step(self, space, acquisition, state, inputs, key):
        """One suggestion (traceable): ``(x (D,), state, info)``; see the class docstring for the contract. ``space``
        is the run's :attr:`~jbo.spaces.Space.structure`, as for :meth:`init`."""
        raise TypeError(f"model {self.name!r} ({type(self).__name__}) has no step: a model defines "
                        "step(space, acquisition, state, inputs, key) -> (x, state, info), or is a "
                        "jbo.models.SurrogateModel of a surrogate")

    def prepare(self, state, data, key, first: bool):
        """Host-side work the ask/tell driver runs before the compiled step when several devices are
        present (a DNGO ensemble trains its members split over the devices); returns ``(config,
        state)`` for the step. Default: nothing to do."""
        return self, state

    @property
    def members(self) -> int:
        """Independent parts the model can spread over devices, one per device (:meth:`prepare`; DNGO
        ensembles: their networks); ``jbo run`` splits the host CPU into as many devices. Default 1."""
        return 1

    def default_maximize(self) -> MaximizeConfig:
        """The acquisition search's sizes when the run's settings name none."""
        return MaximizeConfig()

    def default_design(self) -> str:
        """The initial design a run uses when its settings name none (``Settings.design``): a Sobol set,
        unless the model assumes more about where the optimum lies (BOCK: the centre first)."""
        return "sobol"

    def default_output_warping(self) -> str:
        """The output warp a run uses when its settings name none (``Settings.output_warping``,
        :mod:`jbo.warping`)."""
        return "none"

    def default_acquisition(self):
        """The acquisition a run uses when its settings name none (``Settings.acquisition``,
        :mod:`jbo.acquisition`): expected improvement, maximised as log-EI."""
        return "ei"

    def default_trust_region(self) -> bool:
        """Whether a run keeps its acquisition search to a trust region when its settings do not say
        (``Settings.trust_region``, :mod:`jbo.trust`): no."""
        return False

    def check_output_warping(self, name: str) -> None:
        """Raise ``ValueError`` if this model cannot take the named output warp (default: any)."""

    @classmethod
    def cli_options(cls) -> tuple[CliOption, ...]:
        """The model's command-line options: one per field whose type the command line can parse
        (``bool``, ``int``, ``float``, ``str``), its help from the class docstring's ``Attributes``."""
        docs = attribute_docs(cls)
        out = []
        for f in option_fields(cls):
            hint = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
            parse = cls.cli_types.get(f.name) or _CLI_TYPES.get(hint)
            if parse is not None:
                out.append(CliOption("--" + f.name.replace("_", "-"), f.name, parse, None, docs.get(f.name, "")))
        return tuple(out)

    # -- records -----------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """JSON-able fields, with the model's ``name`` and its class's import path (``"$type"``: a resumed
        run imports it again, a class of the user's included; see :mod:`jbo.records`)."""
        out = {"name": self.name, records.TYPE: records.import_path(type(self))}
        for f in option_fields(type(self)):
            out[f.name] = jsonable(getattr(self, f.name))
        return out

    @classmethod
    def create(cls, **fields) -> "ModelConfig":
        """Construction from keyword options; unknown names raise a ``ValueError`` listing the valid ones."""
        check_options(cls, fields)
        return cls(**fields)

    def replace(self, **fields) -> "ModelConfig":
        """A copy with ``fields`` changed (validated; unknown names raise a ``ValueError``)."""
        check_options(type(self), fields)
        return dataclasses.replace(self, **fields)


def option_fields(cls) -> list:
    """The fields of a config class that are the user's options (not those marked ``internal``)."""
    return [f for f in dataclasses.fields(cls) if f.init and not f.metadata.get("internal")]


def option_names(cls) -> tuple[str, ...]:
    return tuple(f.name for f in option_fields(cls))


def check_options(cls, fields: dict) -> None:
    """``ValueError`` naming every key of ``fields`` that is not an option of config class ``cls``."""
    known = option_names(cls)
    unknown = sorted(set(fields) - set(known))
    if unknown:
        name = cls.kind or cls.__name__.lower()
        raise ValueError(f"unknown option(s) {unknown} for model {name!r}; valid: {list(known)}")


def jsonable(value):
    """A field's JSON form: plain values as they are, jbo's option records (named tuples) as dicts of
    their fields, anything else (a kernel, a function, a class of the user's) as a :mod:`jbo.records` record."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if type(value) in (tuple, list):
        return [jsonable(v) for v in value]
    if type(value) is dict:
        return {k: jsonable(v) for k, v in value.items()}
    if hasattr(value, "_asdict") and type(value).__module__.startswith("jbo.") and type(value).__module__ != "jbo.types":
        return {k: jsonable(v) for k, v in value._asdict().items()}
    return records.to_record(value)


def attribute_docs(cls) -> dict[str, str]:
    """First sentence of each ``name: text`` entry under ``Attributes:`` in the docstrings of ``cls`` and
    its bases. A comma-separated list of names shares one text, which is a summary (``see ...``): it
    documents only the names a base class does not."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        text = klass.__dict__.get("__doc__") or ""
        match = re.search(r"\n([ \t]*)Attributes:\n(.*?)(?:\n[ \t]*\n|\Z)", text, re.S)
        if not match:
            continue
        indent = len(match.group(1)) + 2
        entry = None
        for line in match.group(2).split("\n"):
            if len(line) - len(line.lstrip()) == indent and ":" in line:
                names, _, rest = line.strip().partition(":")
                names = [n.strip() for n in names.split(",")]
                entry = [n for n in names if len(names) == 1 or n not in docs], [rest.strip()]
                for n in entry[0]:
                    docs[n] = rest.strip()
            elif entry is not None:
                entry[1].append(line.strip())
                for n in entry[0]:
                    docs[n] = " ".join(entry[1])
    return {k: _first_sentence(v) for k, v in docs.items()}


def _first_sentence(text: str) -> str:
    text = re.sub(r"``([^`]*)``", r"\1", re.sub(r":\w+:`~?([^`]*)`", r"\1", text))
    end = re.search(r"(?<!\beq)(?<!\bal)(?<!\bFig)(?<!e\.g)(?<!i\.e)(?:\.\s+(?=[A-Z])|;\s)", text)
    return (text[: end.start() + 1] if end else text).rstrip(";").strip()


def check_choice(field: str, value, choices) -> None:
    """``ValueError`` naming ``field`` and listing ``choices`` unless ``value`` is one of them."""
    if value not in choices:
        raise ValueError(f"unknown {field} {value!r}; valid choices: {list(choices)}")


def check_bool(config, *fields: str) -> None:
    """``ValueError`` naming the first of ``fields`` of ``config`` that is not ``True``/``False``."""
    for field in fields:
        checks.boolean(field, getattr(config, field))


def internal(default: Any = None) -> Any:
    """A field set by jbo's drivers, not a user option (left out of records and the command line)."""
    return dataclasses.field(default=default, repr=False, metadata={"internal": True})

