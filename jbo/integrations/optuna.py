"""Any jbo model as an Optuna sampler: ``optuna.create_study(sampler=JboSampler("gp"))``.

The study stays Optuna's (its storage, its workers, pruners and dashboard); jbo only chooses the next
parameters. Each call of :meth:`JboSampler.sample_relative` brings a jbo :class:`~jbo.Optimizer` up to date
with the study (finished trials told once, trials running elsewhere as pending points) and asks it for
one configuration; the optimizer, its fitted hyperparameters and its compiled programs live as long as
the sampler, so a trial costs what jbo's own ``ask`` costs.

Optuna's parameters map onto a jbo :class:`~jbo.Space`:

================================================  ===================================================
``FloatDistribution(low, high, log=...)``         ``Real(low, high, log=...)``
``FloatDistribution(low, high, step=q)``          ``Integer(0, K)``: the index of ``low + k q`` on the grid
``IntDistribution(low, high, log=...)``           ``Integer(low, high, log=...)``
``IntDistribution(low, high, step=s > 1)``        ``Integer(0, K)``: the index of ``low + k s``
``CategoricalDistribution(choices)``              ``Categorical`` of the choices' indices (one-hot)
================================================  ===================================================

A step grid is an ordered integer index, so the model keeps the grid's order and the values stay on it.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import zlib
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from jbo import checks, loop
from jbo.models.base import check_choice
from jbo.optimizer import Optimizer
from jbo.spaces import Categorical, Integer, Real, Space

__all__ = ["PRUNED", "JboSampler", "space_of"]

PRUNED = ("last_value", "failure")
_FINISHED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)


class _Parameter(NamedTuple):
    """One Optuna distribution as a jbo parameter, with the maps between their values."""

    param: Any
    to_jbo: Callable[[Any], Any]
    to_optuna: Callable[[Any], Any]


def _parameter(name: str, dist: BaseDistribution) -> _Parameter:
    if isinstance(dist, CategoricalDistribution):
        return _Parameter(Categorical(list(range(len(dist.choices)))), lambda v: int(dist.to_internal_repr(v)),
                          lambda i: dist.choices[int(i)])
    if isinstance(dist, FloatDistribution):
        if dist.step is None:
            return _Parameter(Real(dist.low, dist.high, log=dist.log), float, float)
        low, step = dist.low, dist.step
        return _Parameter(Integer(0, int(round((dist.high - low) / step))), lambda v: int(round((v - low) / step)),
                          lambda i: min(low + int(i) * step, dist.high))
    if isinstance(dist, IntDistribution):
        if dist.step == 1:
            return _Parameter(Integer(dist.low, dist.high, log=dist.log), int, int)
        low, step = dist.low, dist.step
        return _Parameter(Integer(0, (dist.high - low) // step), lambda v: (int(v) - low) // step,
                          lambda i: low + int(i) * step)
    raise ValueError(f"parameter {name!r}: JboSampler cannot model {type(dist).__name__}")


def space_of(search_space: dict[str, BaseDistribution]) -> Space:
    """The jbo space a sampler models an Optuna search space in (single-valued distributions left out)."""
    return Space({name: _parameter(name, dist).param for name, dist in search_space.items() if not dist.single()})


class JboSampler(BaseSampler):
    """A jbo model as an Optuna sampler.

    Args:
      model: a jbo model name (``"gp"``, ``"dngo"``, ``"ensemble"``, ``"bock"``, ``"tree"``, ...) or a
        config object (``jbo.models.GP(kernel=...)``, a model of your own).
      seed: seed of jbo's suggestions and of the independent sampler (``None``: a random one). The key of
        trial ``t``'s suggestion is derived from ``(seed, t)``, so a study replayed with the same seed
        gets the same suggestions.
      space: a jbo :class:`~jbo.Space` to model instead of Optuna's intersection search space: a
        conditional space (``when=``) for the tree models, whose parameters an Optuna objective suggests
        only where they are active. Its names are the objective's parameter names and its values Optuna's.
        Each trial asks jbo once, and every ``suggest_*`` of a parameter of ``space`` returns that
        suggestion's value (if it lies in the distribution asked for).
      independent_sampler: samples parameters outside the modelled space, the study's first trial
        included (until one trial has finished the intersection search space is empty). Default: uniform
        draws seeded by ``(seed, trial number, parameter name)``, so that workers sharing a storage and a
        seed draw different values.
      n_startup_trials: size of jbo's initial design (its ``n_init``; default the model's; 0: the model from
        the first trial, drawing uniformly until two trials have succeeded). Trials told from elsewhere
        (``add_trial``, enqueued ones, an earlier session's) count towards it.
      pruned: how a pruned trial enters the model: ``"last_value"`` (default) observes it at its last
        reported intermediate value: a pruner stops a trial because that value is poor, and observing it
        there steers the search away as TPE's ranking of pruned trials does (a trial with no report is a
        failure); ``"failure"`` hands it to jbo's ``failures=`` policy, for studies whose intermediate
        values are on another scale than the objective.
      constraints_func: ``trial -> [c_1, ..., c_K]`` (feasible when every ``c_k <= 0``), evaluated after
        each finished trial and stored with it; constraints set by ``trial.set_constraint`` are read
        too. jbo models each constraint and weights the acquisition by ``P[c_k <= 0]``.
      **options: jbo's options (``inference``, ``acquisition``, ``failures``, ``ucb_beta``, ``maximize``,
        the model's own: see :class:`jbo.Optimizer`). An option the model lacks is a ``ValueError``.
    """

    def __init__(self, model: Any = "gp", seed: int | None = None, *, space: Space | None = None,
                 independent_sampler: BaseSampler | None = None, n_startup_trials: int | None = None,
                 pruned: str = "last_value", constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
                 **options):
        if "journal" in options:
            raise ValueError("journal: the study's storage keeps the trials; JboSampler writes no jbo journal")
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0] >> 1)
        check_choice("pruned", pruned, PRUNED)
        if space is not None and not isinstance(space, Space):
            raise TypeError(f"space must be a jbo.Space or None, got {type(space).__name__}")
        if n_startup_trials is not None:
            options["n_init"] = checks.integer("n_startup_trials", n_startup_trials, 0)
        self._options = dict(model=model, seed=checks.integer("seed", seed), **options)
        loop.Settings.create(**self._options)  # a bad option fails here, naming it, not at the first trial
        self._seed = self._options["seed"]
        self._space = space
        self._independent = independent_sampler
        self._pruned = pruned
        self._constraints_func = constraints_func
        self._intersection = IntersectionSearchSpace(include_pruned=True)
        self._lock = threading.RLock()
        self._optimizer: Optimizer | None = None
        self._modelled: dict[str, BaseDistribution] | None = None  # the intersection space modelled (None: space=)
        self._parameters: dict[str, _Parameter] = {}  # its distributions as jbo parameters
        self._told: set[int] = set()
        self._constraint_keys: tuple[str, ...] | None = None
        self._asked: dict[int, dict] = {}  # trial number -> jbo's configuration, until the trial is told

    # -- Optuna's sampler interface ---------------------------------------------------------------------
    def reseed_rng(self) -> None:
        if self._independent is not None:
            self._independent.reseed_rng()

    def infer_relative_search_space(self, study: Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        self._raise_error_if_multi_objective(study)
        if self._space is not None:  # every parameter is answered by sample_independent from one ask
            return {}
        return {name: dist for name, dist in self._intersection.calculate(study).items() if not dist.single()}

    def sample_relative(self, study: Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        if not search_space:
            return {}
        fixed = trial.system_attrs.get("fixed_params", {})
        if set(search_space) <= set(fixed):  # an enqueued trial: its values are given, jbo need not ask
            return {}
        with self._lock:
            if search_space != self._modelled:
                parameters = {name: _parameter(name, dist) for name, dist in search_space.items()}
                self._reset(Space({name: p.param for name, p in parameters.items()}), search_space)
                self._parameters = parameters
            config = self._ask(study, trial)
        return {name: self._parameters[name].to_optuna(value) for name, value in config.items()}

    def sample_independent(self, study: Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        self._raise_error_if_multi_objective(study)
        if self._space is not None and param_name in self._space.names:
            with self._lock:
                if self._optimizer is None:
                    self._reset(self._space, None)
                config = self._asked.get(trial.number)
                if config is None:
                    config = self._ask(study, trial)
            if param_name in config:
                value = config[param_name]
                if param_distribution._contains(param_distribution.to_internal_repr(value)):
                    return value
        if self._independent is None:
            # Seeded by (seed, trial, parameter): workers sharing a storage and a seed draw different values.
            seed = np.random.SeedSequence([self._seed, trial.number, zlib.crc32(param_name.encode())])
            return RandomSampler(seed=int(seed.generate_state(1)[0])).sample_independent(
                study, trial, param_name, param_distribution)
        return self._independent.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        if self._independent is not None:
            self._independent.before_trial(study, trial)

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState, values: Sequence[float] | None) -> None:
        if self._constraints_func is not None and state in (TrialState.COMPLETE, TrialState.PRUNED):
            constraints = [float(c) for c in self._constraints_func(trial)]
            if any(math.isnan(c) for c in constraints):
                raise ValueError(f"constraints_func returned NaN for trial {trial.number}: {constraints}")
            # Where Optuna's own samplers store constraints_func's values (read by trial.constraints).
            study._storage.set_trial_system_attr(trial._trial_id, "constraints", tuple(constraints))
        if self._independent is not None:
            self._independent.after_trial(study, trial, state, values)

    # -- the jbo optimizer, kept up to date with the study ------------------------------------------------
    def _reset(self, space: Space, modelled: dict[str, BaseDistribution] | None) -> None:
        self._optimizer = Optimizer(space, **self._options)
        self._modelled = modelled
        self._told, self._asked = set(), {}

    def _ask(self, study: Study, trial: FrozenTrial) -> dict:
        """jbo's configuration for ``trial``, the study's finished trials told and its running ones pending."""
        opt = self._optimizer
        trials = study.get_trials(deepcopy=False, states=(*_FINISHED, TrialState.RUNNING))
        running = []
        opt.state = opt.state._replace(pending=np.zeros((0, opt.space.dim)))
        sign = -1.0 if study.direction == StudyDirection.MAXIMIZE else 1.0
        for other in sorted(trials, key=lambda t: t.number):
            if other.number == trial.number or other.number in self._told:
                continue
            config = self._config_of(other)
            if other.state == TrialState.RUNNING:
                if config is not None:
                    running.append(opt.space.encode(config))
                continue
            self._told.add(other.number)
            self._asked.pop(other.number, None)
            if config is not None:
                opt.tell(config, *self._outcome(other, sign))
        if running:
            opt.state = opt.state._replace(pending=np.stack(running))
        settings = opt.settings
        if settings.model.uses_initial_design and trial.number < settings.initial_size(opt.space.dim):
            # The design point is the trial's number, so workers that ask at the same moment get distinct ones.
            config, phase = opt.space.decode(loop.initial_design(settings, opt.space)[trial.number]), "initial"
        else:
            # The trial's number decides the phase and the key (the same in every worker and in a replay), not
            # what this worker has seen: a trial past the design is the model's even if trials before it are
            # still running without parameters.
            model_phase = dataclasses.replace(settings, n_init=1)
            opt.state = opt.state._replace(n_suggested=trial.number)
            opt.state, x, info = loop.suggest(model_phase, opt.space, opt.state)
            config, phase = opt.space.decode(x), info["phase"]
        study._storage.set_trial_system_attr(trial._trial_id, "jbo", {"phase": phase, "pending": len(running),
                                                                      "observed": opt.n_observed})
        self._asked[trial.number] = config
        return config

    def _config_of(self, trial: FrozenTrial) -> dict | None:
        """The trial's parameters as a configuration of the modelled space, or ``None`` if they are not one."""
        if trial.state == TrialState.RUNNING and trial.number in self._asked:  # its parameters may not be set yet
            return self._asked[trial.number]
        if self._modelled is None:
            try:
                return self._space.validate({k: v for k, v in trial.params.items() if k in self._space.names})
            except ValueError:
                return None
        if any(trial.distributions.get(name) != dist for name, dist in self._modelled.items()):
            return None
        return {name: p.to_jbo(trial.params[name]) for name, p in self._parameters.items()}

    def _outcome(self, trial: FrozenTrial, sign: float) -> tuple:
        """``(value, error, feasible, constraints)`` of a finished trial, as :meth:`jbo.Optimizer.tell` takes them."""
        constraints = self._constraints(trial)
        feasible = None if constraints is None else not any(c > 0 for c in constraints)
        if trial.state == TrialState.COMPLETE:
            return sign * trial.value, None, feasible, constraints
        if trial.state == TrialState.PRUNED:
            if self._pruned == "last_value" and trial.intermediate_values:
                return sign * trial.intermediate_values[max(trial.intermediate_values)], None, feasible, constraints
            return None, "pruned", feasible, constraints
        return None, trial.system_attrs.get("fail_reason") or "failed", None, None

    def _constraints(self, trial: FrozenTrial) -> list[float] | None:
        """The trial's constraint values in a fixed order of their keys, ``nan`` for one it lacks."""
        found = getattr(trial, "constraints", None)
        if found is None:  # Optuna before 5: a list under one key
            found = {str(i): c for i, c in enumerate(trial.system_attrs.get("constraints") or ())}
        if not found:
            return None
        if self._constraint_keys is None:
            self._constraint_keys = tuple(sorted(found))
        unknown = set(found) - set(self._constraint_keys)
        if unknown:
            raise ValueError(f"trial {trial.number} reports constraints {sorted(unknown)} that earlier trials did not "
                             f"({list(self._constraint_keys)}); every trial must report the same constraints")
        return [float(found.get(key, math.nan)) for key in self._constraint_keys]
