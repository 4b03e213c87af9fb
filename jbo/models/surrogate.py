"""Any surrogate as a full model: :class:`SurrogateModel`.

A surrogate is a tuple of pure functions (:class:`jbo.types.Surrogate`: ``prior``, ``log_likelihood``,
``condition``, ``predict``, optionally ``fantasize`` and ``predict_joint``), or any hashable object with
those methods. ``SurrogateModel(surrogate=...)`` runs it through the machinery of jbo's own GP: its
hyperparameters inferred at every suggestion (MAP, slice sampling or NUTS, warm-started), the acquisition
integrated over the samples, pending points conditioned on, infeasible evaluations discounted by a GP
classifier and constraint values modelled by the surrogate itself. No registration::

    model = jbo.models.SurrogateModel(surrogate=my_surrogate, inference="map")
    jbo.minimize(f, space, model=model)

In a run's journal the surrogate is recorded by import path (:mod:`jbo.records`): a surrogate built from
module-level functions, or an instance of a class of yours, is imported again on resume; one built from
closures must be passed again (``Optimizer.resume(path, model=...)``).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

from jbo.models.sampled import StepConfig
from jbo.types import Surrogate

_REQUIRED = ("prior", "log_likelihood", "condition", "predict")


@functools.lru_cache(maxsize=64)
def as_surrogate(value) -> Surrogate:
    """``value`` as a :class:`~jbo.types.Surrogate`: itself, or the tuple of an object's methods (the same
    tuple for the same object, so compiled programs keyed on it are reused)."""
    if isinstance(value, Surrogate):
        return value
    return Surrogate(getattr(value, "name", type(value).__name__), *(getattr(value, f) for f in _REQUIRED),
                     getattr(value, "fantasize", None), getattr(value, "predict_joint", None))


@dataclasses.dataclass(frozen=True)
class SurrogateModel(StepConfig):
    """A model made of any surrogate (``model=jbo.models.SurrogateModel(surrogate=...)``).

    Attributes:
      surrogate: a :class:`~jbo.types.Surrogate`, or a hashable object with its methods (a frozen dataclass
        of yours, say).
      inference, num_samples, num_burnin, num_warmup, thin, map_restarts, num_chains, classifier, evidence_warp: see
        :class:`~jbo.models.sampled.StepConfig`.
    """

    kind: ClassVar[str] = "surrogate"
    surrogate: Any = None

    def validate(self) -> None:
        super().validate()
        if self.surrogate is None:
            raise ValueError("surrogate is required: a jbo.types.Surrogate or an object with its methods")
        missing = [f for f in _REQUIRED if not callable(getattr(self.surrogate, f, None))]
        if missing:
            raise ValueError(f"surrogate {self.surrogate!r} lacks the Surrogate function(s) {missing}")
        try:
            hash(self.surrogate)
        except TypeError:
            raise ValueError(f"surrogate must be hashable (it is part of the compiled program), got "
                             f"{type(self.surrogate).__name__}; make it a frozen dataclass or a Surrogate") from None

    def surrogate_for(self, space) -> Surrogate:
        return as_surrogate(self.surrogate)
