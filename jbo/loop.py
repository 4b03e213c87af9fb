"""The BO loop: :class:`Settings`, the compiled suggestion program and the functional ask/tell core.

One suggestion, end to end (DESIGN.md)::

    padded observations -> standardise (failures handled) -> anchors (shifted Sobol + around the best)
    -> model.step (fit, acquisition, maximise) -> round trip through the space's decoding

:func:`suggestion` is that path as one pure, traceable function of padded arrays. The ask/tell
functions here (:func:`suggest`, :func:`observe`) compile it once per padded size; ``lax.scan`` runs
the very same function for a whole run on a JAX objective (:mod:`jbo.many`). Randomness comes from
``fold_in(key(seed), number of suggestions so far)``, so the same seed and data give the same
suggestion on either path.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbo import acquisition as acq
from jbo import cache, checks, design, linalg, models, precision, records, trust, warping
from jbo.data import bucket_size
from jbo.devices import num_devices
from jbo.models.base import ModelConfig, check_choice
from jbo.optimize import SCHEDULES, MaximizeConfig
from jbo.spaces import Categorical, Space
from jbo.types import Acquisition, Constraints, Data, Inputs, Pending

ACQUISITIONS = acq.NAMES
FAILURE_POLICIES = ("worst", "ignore", "constraint")
INFEASIBLE_POLICIES = ("median", "ignore", "worst")
DESIGNS = ("sobol", "centre")
DESIGN_STREAM = 2**31 - 1  # fold_in index of the initial design's key (suggestions use 0, 1, 2, ...)
INIT_STREAM = 2**31 - 2  # fold_in index of the key of the model's initial state (its cold-start draws)
MIXTURE_STREAM = 2**31 - 3  # fold_in index (of a suggestion's key) of a Mixture acquisition's draw


@dataclasses.dataclass(frozen=True)
class Settings:
    """What defines a run besides the space (hashable, JSON-serialisable, written to the journal).

    The model's own options live in its config (:mod:`jbo.models`); these are the loop's.

    Attributes:
      model: a model name (:data:`jbo.models.NAMES`: ``"gp"``, ``"arc"``, ``"dngo"``, ``"ensemble"``,
        ``"tree"``, ``"tree-paper"``, ``"independent"``, ``"marginal"``, ``"bock"``, ``"bock-w"``,
        ``"bock-b"``, ``"matern"``, ``"random"``) or a config object
        (``jbo.models.GP(kernel="se")``); a name becomes its config with that name's defaults.
      acquisition: ``"ei"`` (maximised as log-EI), ``"logei"``, ``"pi"``, ``"ucb"``, ``"thompson"``, or
        one of your own: a function ``score = acquisition(mean, var, best)`` or a
        :class:`jbo.acquisition.Pointwise` (:mod:`jbo.acquisition`); a portfolio of pointwise ones,
        one drawn per suggestion: :class:`jbo.acquisition.Mixture`; one for runs that model feasibility
        and another for the rest: :class:`jbo.acquisition.ConstraintAware`. ``None`` (default): the
        model's own (:meth:`~jbo.models.base.ModelConfig.default_acquisition`: the GP's is UCB, EI under
        constraints; the other models' EI).
      seed: seed of every random choice of the run.
      n_init: size of the initial design (default ``max(5, D + 1)``); observations told before the
        first ``ask`` count towards it. With 0 the model suggests from the start (a uniform point while
        fewer than two evaluations succeeded).
      ucb_beta: exploration weight of UCB.
      failures: how failed evaluations enter the model: ``"worst"`` imputes the worst successful
        value there (steers the search away from crashing regions), ``"ignore"`` leaves them out,
        ``"constraint"`` counts them as infeasible: a classifier learns where evaluations fail and the
        acquisition is discounted by the probability of success (constrained EI, Gelbart et al. 2014;
        Snoek et al. 2015, §3.2). Evaluations told ``feasible=False`` always train that classifier.
      infeasible: how infeasible evaluations enter the objective's model in a run that models feasibility:
        ``"median"`` (default) at the median of the feasible values, ``"ignore"`` left out (constrained EI as
        Gelbart et al. 2014 fit it), ``"worst"`` at the worst feasible value (see :func:`standardize`).
      maximize: sizes of the acquisition search (a :class:`~jbo.optimize.MaximizeConfig`, or a dict of
        some of its fields that fills the rest from the model's default, e.g. anchors only for DNGO).
      dtype: ``"float64"`` (default) or ``"float32"`` for the model's linear algebra.
      pending: how points being evaluated enter the next suggestion (:func:`jbo.acquisition.pending_posteriors`):
        ``"believer"`` (default: each is observed at its predicted mean, one conditioning per
        hyperparameter sample) or ``"fantasies"`` (Monte Carlo EI of Snoek et al. 2015, eqs. 11–12:
        ``num_fantasies`` draws of the pending outcomes per sample, the acquisition averaged over them).
      num_fantasies: draws per hyperparameter sample with ``pending="fantasies"``.
      design: the initial design: ``"sobol"`` (a randomly shifted Sobol set) or ``"centre"`` (the
        centre of the box first, then the Sobol set: a space centred on the expected optimum, as
        BOCK's experiments assume). ``None`` (default): the model's own
        (:meth:`~jbo.models.base.ModelConfig.default_design`; ``"centre"`` for the BOCK models,
        ``"sobol"`` for the others).
      output_warping: a monotone transform of the standardised targets fitted before each suggestion
        (:mod:`jbo.warping`): ``"none"``, ``"rank"`` (normal scores), ``"yeo-johnson"`` (power transform,
        its exponent by maximum likelihood) or ``"shifted-log"`` (log of the gap above the best value).
        ``None`` (default): the model's own
        (:meth:`~jbo.models.base.ModelConfig.default_output_warping`).
      trust_region: restrict the acquisition search to a box around the incumbent whose side grows after
        improvements and shrinks after failures to improve (TuRBO-1, :mod:`jbo.trust`; categorical parameters
        stay free); counted from the initial design's default size in a program that several designs share
        (:func:`jbo.study`). ``True`` (TuRBO-1's constants), ``False``, a :class:`jbo.trust.TrustRegion` or a
        dict of its fields. ``None`` (default): the model's own
        (:meth:`~jbo.models.base.ModelConfig.default_trust_region`: on for the GP and DNGO, off for the others).
    """

    model: Any = "gp"
    acquisition: Any = None
    seed: int = 0
    n_init: int | None = None
    ucb_beta: float = 2.0
    failures: str = "worst"
    infeasible: str = "median"
    maximize: Any = None
    dtype: str = "float64"
    pending: str = "believer"
    num_fantasies: int = 16
    design: str | None = None
    output_warping: str | None = None
    trust_region: Any = None

    def __post_init__(self):
        if not isinstance(self.model, ModelConfig):
            object.__setattr__(self, "model", models.create(self.model))
        if self.design is None:
            object.__setattr__(self, "design", self.model.default_design())
        if self.output_warping is None:
            object.__setattr__(self, "output_warping", self.model.default_output_warping())
        if self.acquisition is None:
            object.__setattr__(self, "acquisition", self.model.default_acquisition())
        check_choice("output_warping", self.output_warping, warping.NAMES)
        if self.trust_region is None:
            object.__setattr__(self, "trust_region", self.model.default_trust_region())
        object.__setattr__(self, "trust_region", trust.TrustRegion.from_option(self.trust_region))
        self.model.check_output_warping(self.output_warping)
        object.__setattr__(self, "acquisition", acq.as_acquisition(self.acquisition))
        check_choice("failures", self.failures, FAILURE_POLICIES)
        check_choice("infeasible", self.infeasible, INFEASIBLE_POLICIES)
        check_choice("dtype", self.dtype, ("float64", "float32"))
        check_choice("pending", self.pending, acq.PENDING)
        check_choice("design", self.design, DESIGNS)
        object.__setattr__(self, "num_fantasies", checks.integer("num_fantasies", self.num_fantasies, 1, True))
        object.__setattr__(self, "seed", checks.integer("seed", self.seed))
        if self.n_init is not None:
            object.__setattr__(self, "n_init", checks.integer("n_init", self.n_init, 0, True))
        beta = self.ucb_beta
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not math.isfinite(beta) or beta < 0:
            raise ValueError(f"ucb_beta must be a non-negative number, got {beta!r}")
        object.__setattr__(self, "ucb_beta", float(beta))
        default = self.model.default_maximize()
        if self.maximize is None:
            object.__setattr__(self, "maximize", default)
        elif isinstance(self.maximize, dict):
            checks.known_options("maximize", self.maximize, MaximizeConfig._fields)
            object.__setattr__(self, "maximize", default._replace(**self.maximize))
        elif not isinstance(self.maximize, MaximizeConfig):
            raise ValueError(f"maximize must be a dict of MaximizeConfig fields, got {type(self.maximize).__name__}")
        object.__setattr__(self, "maximize", _check_maximize(self.maximize))

    @classmethod
    def create(cls, model: str | ModelConfig = "gp", **options) -> "Settings":
        """Settings from one flat set of options: the loop's fields go here, the rest to the model.

        ``Settings.create("ensemble", n_networks=3, acquisition="ucb")`` is
        ``Settings(models.create("ensemble", n_networks=3), acquisition="ucb")``.
        """
        mine = {k: options.pop(k) for k in list(options) if k in LOOP_FIELDS}
        return cls(models.create(model, **options), **mine)

    def program(self) -> "Settings":
        """These settings with the fields the compiled suggestion does not read (seed, n_init, design,
        ucb_beta: an argument) set to fixed values, so that runs differing only there share programs."""
        return dataclasses.replace(self, seed=0, n_init=None, ucb_beta=2.0, design="sobol")

    @property
    def model_name(self) -> str:
        return self.model.name

    @property
    def acquisition_config(self) -> Acquisition:
        return Acquisition(self.acquisition, self.maximize, self.pending, self.num_fantasies)

    @property
    def float_dtype(self):
        return jnp.float64 if self.dtype == "float64" else jnp.float32

    def initial_size(self, dim: int) -> int:
        return int(self.n_init) if self.n_init is not None else max(5, dim + 1)

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["model"] = self.model.to_dict()
        d["maximize"] = self.maximize._asdict()
        d["acquisition"] = records.to_record(self.acquisition)
        if isinstance(self.trust_region, trust.TrustRegion):
            d["trust_region"] = self.trust_region._asdict()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Settings":
        """Settings from :meth:`to_dict`, or from the flat format of journals written before models
        had configs (``{"model": "gp", "inference": ..., "kernel": ..., ...}``)."""
        d = dict(d)
        d.setdefault("design", "sobol")  # journals written before the design was recorded started so
        d.setdefault("output_warping", "none")  # ... and before output warping existed, unwarped
        d.setdefault("trust_region", False)  # ... and before the trust region, without one
        if records.is_record(d.get("acquisition")):
            d["acquisition"] = records.from_record(d["acquisition"])
        known = {f.name for f in dataclasses.fields(cls)}
        if isinstance(d.get("model"), (dict, ModelConfig)):
            unknown = sorted(set(d) - known)
            if unknown:
                raise ValueError(f"unknown setting(s) {unknown}; valid: {sorted(known)}")
            if isinstance(d["model"], dict):
                d["model"] = models.from_dict(d["model"])
            return cls(**d)
        # The flat format carried every model's options whatever the model; those of other models
        # had no effect and are dropped.
        name = d.pop("model", "gp")
        accepted = set(models.option_names(name)) if name in models.SHORTCUTS else set()
        unknown = sorted(set(d) - known - _LEGACY_MODEL_FIELDS - accepted)
        if unknown:
            raise ValueError(f"unknown setting(s) {unknown}; valid: {sorted(known | accepted)}")
        model_options = {k: d.pop(k) for k in list(d) if k not in known}
        model_options = {k: v for k, v in model_options.items() if k in accepted}
        return cls(models.create(name, **model_options), **d)


LOOP_FIELDS = tuple(f.name for f in dataclasses.fields(Settings) if f.name != "model")
_LEGACY_MODEL_FIELDS = frozenset({"inference", "kernel", "warp", "num_samples", "num_burnin", "num_warmup", "thin",
                                  "map_restarts", "n_networks", "aggregator", "training", "quadratic_prior",
                                  "curvature_scale", "network", "escape"})


def _check_maximize(config: MaximizeConfig) -> MaximizeConfig:
    for field in ("num_anchors", "top_k"):
        if int(getattr(config, field)) < 1:
            raise ValueError(f"maximize.{field} must be >= 1, got {getattr(config, field)!r}")
    for field in ("num_local", "num_steps", "screen"):
        if int(getattr(config, field)) < 0:
            raise ValueError(f"maximize.{field} must be >= 0, got {getattr(config, field)!r}")
    if config.schedule not in SCHEDULES:
        raise ValueError(f"maximize.schedule must be one of {list(SCHEDULES)}, got {config.schedule!r}")
    if not float(config.eps) > 0:
        raise ValueError(f"maximize.eps must be > 0, got {config.eps!r}")
    return config._replace(num_anchors=int(config.num_anchors), num_local=int(config.num_local),
                           top_k=int(config.top_k), num_steps=int(config.num_steps), screen=int(config.screen),
                           eps=float(config.eps))


# ----------------------------------------------------------------------------- the traced suggestion


class History(NamedTuple):
    """Observations as the compiled programs see them: padded, in the order of observation.

    Attributes:
      x: ``(C, D)`` encoded points (0.5 on padded rows).
      y: ``(C,)`` user-scale values, ``nan`` for failures (and on padded rows).
      mask: ``(C,)`` bool, ``True`` on real rows (successes and failures).
      feasible: ``(C,)`` bool, ``False`` where an evaluation was told infeasible; ``None``: all feasible.
      constraints: ``(C, K)`` constraint values known at evaluation (``nan`` where unknown), or ``None``.
    """

    x: jnp.ndarray
    y: jnp.ndarray
    mask: jnp.ndarray
    feasible: jnp.ndarray | None = None
    constraints: jnp.ndarray | None = None


def standardize(history: History, failures: str, impute=None, output_warping: str = "none",
                infeasible: str = "median"):
    """Model data from the history: failures and infeasible evaluations handled, targets standardised
    (traceable).

    ``"worst"`` puts the worst successful value at failed rows, ``"ignore"`` masks them out; rows stay
    in place (the escape rule reads the order of observation). In a run that models feasibility
    (``failures="constraint"``, or evaluations told infeasible) an infeasible row enters the objective's
    model by the ``infeasible`` policy: at the median of the feasible values (``"median"``), left out
    (``"ignore"``: Gelbart et al. 2014's constrained EI) or at the worst feasible value (``"worst"``). Left
    out, the model extrapolates the feasible trend into the infeasible region and the acquisition keeps
    probing its boundary; at the worst value, it sees a cliff at the boundary, where constrained optima
    lie; the median says neither (experiments/constrained.py measures the three). The targets are shifted
    to zero mean and scaled to unit standard deviation over the model's rows (a constant objective keeps
    the unit scale).

    Args:
      history: the padded observations.
      failures: the failure policy (static).
      impute: a bool array overriding it for failed feasible rows at run time (``True``: ``"worst"``,
        ``False``: ``"ignore"``), so that runs of one program can differ in it; ``None``: the policy says.
      output_warping: the monotone warp applied to the standardised targets (static; :func:`jbo.warping.warp`).
      infeasible: the policy for infeasible rows (static; :data:`INFEASIBLE_POLICIES`).
    Returns:
      ``(data, best, num_ok, scale)``: :class:`~jbo.data.Data`, the standardised incumbent, the number of
      successful feasible rows and the scale the targets were divided by (objective units per standardised
      unit).
    """
    ok = history.mask & jnp.isfinite(history.y)
    if history.feasible is not None:
        ok = ok & history.feasible
    worst = jnp.max(jnp.where(ok, history.y, -jnp.inf))
    if impute is not None:
        y = jnp.where(ok | ~impute, history.y, worst)
        mask = jnp.where(impute, history.mask, ok)
    elif failures == "worst":
        y, mask = jnp.where(ok, history.y, worst), history.mask
    else:
        y, mask = history.y, ok
    if failures == "constraint" or history.feasible is not None:  # static: the run models feasibility
        rows = history.mask & (feasibility(history, failures).y == 0)
        if infeasible == "ignore":
            mask = mask & ~rows
        else:
            fill = worst if infeasible == "worst" else jnp.nanmedian(jnp.where(ok, history.y, jnp.nan))
            y, mask = jnp.where(rows, jnp.where(jnp.isfinite(fill), fill, 0.0), y), mask | rows
    y = jnp.where(mask, y, 0.0)
    n = jnp.maximum(jnp.sum(mask), 1)
    mean = jnp.sum(y) / n
    std = jnp.sqrt(jnp.sum(jnp.where(mask, (y - mean) ** 2, 0.0)) / n)
    scale = jnp.where(std > 1e-12 * jnp.maximum(1.0, jnp.abs(mean)), std, 1.0)
    y_std = warping.warp(output_warping, jnp.where(mask, (y - mean) / scale, 0.0), mask)
    x = jnp.where(mask[:, None], history.x, 0.5)
    return Data(x, y_std, mask), jnp.min(jnp.where(ok, y_std, jnp.inf)), jnp.sum(ok), scale


def feasibility(history: History, failures: str) -> Data:
    """The labelled data of the constraint classifier: ``y`` 1 where an evaluation was feasible, 0 where
    it was told infeasible (or failed, with ``failures="constraint"``), on every real row."""
    feasible = jnp.ones_like(history.mask) if history.feasible is None else history.feasible
    if failures == "constraint":
        feasible = feasible & jnp.isfinite(history.y)
    return Data(jnp.where(history.mask[:, None], history.x, 0.5), feasible.astype(history.x.dtype), history.mask)


def constraint_data(history: History) -> Constraints:
    """Each known constraint's values standardised over its known rows, and where 0 lies (traceable)."""
    values = history.constraints.T  # (K, C)
    mask = history.mask[None, :] & jnp.isfinite(values)
    n = jnp.maximum(jnp.sum(mask, axis=1), 1)
    mean = jnp.sum(jnp.where(mask, values, 0.0), axis=1) / n
    std = jnp.sqrt(jnp.sum(jnp.where(mask, (values - mean[:, None]) ** 2, 0.0), axis=1) / n)
    scale = jnp.where(std > 1e-12 * jnp.maximum(1.0, jnp.abs(mean)), std, 1.0)
    y = jnp.where(mask, (values - mean[:, None]) / scale[:, None], 0.0)
    return Constraints(jnp.where(history.mask[:, None], history.x, 0.5), y, mask, -mean / scale)


def anchors(key, settings: Settings, table, data: Data, region=None):
    """The acquisition search's candidates: the Sobol table shifted by a random vector, then
    ``num_local`` points around the five best observations (traceable); inside ``region`` (``(lower,
    upper)``, a trust region: the Sobol points scaled into it, the local ones cut to it) when given."""
    k_shift, k_local = jax.random.split(key)
    cfg = settings.maximize
    centres, valid = design.best_rows(data.x, data.y, data.mask)
    local = design.local_points(k_local, centres, valid, cfg.num_local, cfg.local_scale).astype(table.dtype)
    sobol = design.shifted(k_shift, table)
    if region is not None:
        lower, upper = region
        sobol, local = lower + (upper - lower) * sobol, jnp.clip(local, lower, upper)
    return jnp.concatenate([sobol, local])


def trust_region(settings: Settings, history: History, space: Space):
    """``(lower, upper, side)`` of the run's trust region after ``history`` (:mod:`jbo.trust`; traceable): a box
    on the numeric columns; the one-hot columns of categorical parameters stay free."""
    ok = history.mask & jnp.isfinite(history.y)
    if history.feasible is not None:
        ok = ok & history.feasible
    config = settings.trust_region if isinstance(settings.trust_region, trust.TrustRegion) else trust.TrustRegion()
    side = trust.side_length(history.y, ok, history.mask, settings.initial_size(space.dim), space.dim, config)
    lower, upper = trust.box(history.x, history.y, ok, side)
    categorical = np.repeat([isinstance(p, Categorical) for p in space.params.values()],
                            [p.width for p in space.params.values()])
    return jnp.where(categorical, 0.0, lower), jnp.where(categorical, 1.0, upper), side


def fallback_point(key, dim: int, dtype):
    """The point suggested while fewer than two evaluations succeeded (no model can be fitted)."""
    return jax.random.uniform(jax.random.fold_in(key, 3), (dim,), dtype)


def suggestion(settings: Settings, space: Space, model_state, fitted, history: History, pending: Pending, table,
               key, ucb_beta, choice=None, impute=None, bins=None):
    """One model-based suggestion as a pure function of padded arrays (traceable).

    Args:
      settings: the run's settings (static); space: the search space (static; the ask/tell loop and whole
        runs pass its :attr:`~jbo.spaces.Space.structure`, so spaces of one structure share the program).
      model_state: the model's carried state (the PyTree of :meth:`jbo.models.ModelConfig.init`).
      fitted: bool scalar, the model has been fitted before (warm start).
      history: padded observations; pending: points being evaluated.
      table: ``(A, D)`` Sobol table of the anchors (:func:`jbo.design.sobol_table`).
      key: this suggestion's PRNG key.
      ucb_beta: UCB's weight (an array: it may be traced, e.g. ``vmap``-ped over).
      choice: the option of a :class:`jbo.acquisition.Choice` acquisition (an integer array), or ``None``;
        a :class:`jbo.acquisition.Mixture` draws its own from ``key``.
      impute: overrides the failure policy at run time (see :func:`standardize`), or ``None``.
      bins: ``(D,)`` the equal-width bins of the integer columns ``space`` holds as reals
        (:attr:`jbo.spaces.Space.bins`), or ``None``.
    Returns:
      ``(x (D,), model_state, fitted, info)``: ``x`` canonical (``space.round_trip``) in the unit cube.
      With fewer than two successful evaluations ``x`` is a uniform point and the state is unchanged; a
      suggestion equal to a pending point is replaced by a uniform point of the search's box (``info``:
      ``repeated_pending``).
    """
    data, best, num_ok, scale = standardize(history, settings.failures, impute, settings.output_warping,
                                            settings.infeasible)
    k_model, k_anchor = jax.random.split(key)
    # Evaluations can be infeasible: model where (constrained EI). Static: the history's structure says.
    # Known constraint values: modelled when an evaluation reported some (the history carries them).
    classify = settings.failures == "constraint" or history.feasible is not None
    num_constraints = 0 if history.constraints is None else history.constraints.shape[-1]
    function, drawn = acq.for_suggestion(settings.acquisition, jax.random.fold_in(key, MIXTURE_STREAM),
                                         classify or num_constraints > 0)
    choice = choice if drawn is None else drawn
    region = None
    if settings.trust_region:
        *region, side = trust_region(settings, history, space)
        region = tuple(bound.astype(data.x.dtype) for bound in region)
    inputs = Inputs(data, pending, anchors(k_anchor, settings, table, data, region), best, ~fitted,
                    jnp.asarray(ucb_beta, data.y.dtype), feasibility(history, settings.failures) if classify else None,
                    constraint_data(history) if num_constraints else None, scale,
                    None if choice is None else jnp.asarray(choice, jnp.int32), region)
    acquisition = settings.acquisition_config._replace(function=function, classify=classify,
                                                       num_constraints=num_constraints)
    x, new_state, info = settings.model.step(space, acquisition, model_state, inputs, k_model)
    if drawn is not None:
        info = {**info, "acquisition_option": drawn}
    if region is not None:  # a model whose search does not read inputs.region still suggests inside it
        x = jnp.clip(x, *region)
        info = {**info, "trust_region": side}
    ready = num_ok >= 2
    x = jnp.where(ready, jnp.clip(x, 0.0, 1.0), fallback_point(key, space.dim, data.x.dtype))
    new_state = jax.tree_util.tree_map(lambda new, old: jnp.where(ready, new, old), new_state, model_state)
    x = space.round_trip(x[None], bins)[0]
    if pending.x.shape[0]:
        # A batch's search can end twice at one point (a box corner where the mean keeps falling: the believer
        # removes the variance at a pending point, not the mean). That evaluation would tell the model nothing
        # it has not assumed: a uniform point of the search's box instead.
        repeated = jnp.any(pending.mask & jnp.all(jnp.abs(pending.x - x) <= 1e-9, axis=-1))
        lower, upper = (0.0, 1.0) if region is None else region
        spare = lower + (upper - lower) * fallback_point(jax.random.fold_in(key, 4), space.dim, data.x.dtype)
        x = jnp.where(repeated, space.round_trip(spare[None], bins)[0], x)
        info = {**info, "repeated_pending": repeated.astype(jnp.int32)}
    return x, new_state, fitted | ready, info


# Stored whole (jbo.cache): a fresh process with a warm cache loads the suggestion without tracing it.
compiled_suggestion = linalg.full_precision(
    cache.stored(jax.jit(suggestion, static_argnames=("settings", "space")), ("settings", "space")))
_standardize = jax.jit(standardize, static_argnames=("failures", "output_warping", "infeasible"))


def _initial_points(key, space: Space, n: int, integers, centre: bool = False, bins=None):
    dtype = jnp.result_type(float) if bins is None else bins.dtype
    return space.round_trip(design.initial_points(key, space, n, integers, centre, dtype), bins)


_design = cache.stored(jax.jit(_initial_points, static_argnames=("space", "n", "centre")), ("space", "n", "centre"))


def design_table(settings: Settings, space: Space) -> np.ndarray:
    """The Sobol integers a run's initial design scrambles (:func:`jbo.design.initial_points`)."""
    n = max(1, settings.initial_size(space.dim))
    return design.sobol_integers(1 << max(0, math.ceil(math.log2(n))), space.dim)


def anchor_table(settings: Settings, space: Space):
    """The anchors' Sobol table on the device (cached: one transfer per run, not per suggestion)."""
    return _device_table(settings.maximize.num_anchors, space.dim, settings.dtype)


@functools.lru_cache(maxsize=16)
def _device_table(num: int, dim: int, dtype: str):
    return jnp.asarray(design.sobol_table(num, dim, seed=0), dtype)


def _fold_in_seed(seed, index):
    return jax.random.fold_in(jax.random.key(seed), index)


_suggestion_key = cache.stored(jax.jit(_fold_in_seed))


def run_key(seed: int):
    return jax.random.key(seed)


def suggestion_key(seed_key, index):
    """The key of suggestion ``index`` of a run (traceable)."""
    return jax.random.fold_in(seed_key, index)


@precision.float64
def initial_design(settings: Settings, space: Space) -> np.ndarray:
    """The run's initial design ``(n_init, D)`` (encoded, canonical), the same in every driver."""
    key = jax.random.fold_in(run_key(settings.seed), DESIGN_STREAM)
    return np.asarray(_design(key, space.structure, settings.initial_size(space.dim), design_table(settings, space),
                              settings.design == "centre", jnp.asarray(space.bins, settings.float_dtype)), np.float64)


# ----------------------------------------------------------------------------- ask / tell core


class LoopState(NamedTuple):
    """The whole state of an ask/tell run (host arrays plus the model's device state).

    Attributes:
      x: ``(N, D)`` encoded evaluated points (successes and failures), in the order observed.
      y: ``(N,)`` user-scale values, ``nan`` for failures.
      pending: ``(P, D)`` encoded points suggested but not yet observed.
      model_state: what the model carries from one suggestion to the next.
      fitted: the model has been fitted (its state is a warm start).
      n_suggested: suggestions made so far (drives the key stream).
      feasible: ``(N,)`` bool, ``False`` for evaluations told infeasible.
      constraints: ``(N, K)`` constraint values known at evaluation (``nan`` where not reported).
    """

    x: np.ndarray
    y: np.ndarray
    pending: np.ndarray
    model_state: Any
    fitted: bool
    n_suggested: int
    feasible: np.ndarray = np.ones(0, bool)
    constraints: np.ndarray = np.zeros((0, 0))


@precision.float64
def init(settings: Settings, space: Space) -> LoopState:
    """The empty state of a run."""
    empty = np.zeros((0, space.dim))
    key = jax.random.fold_in(run_key(settings.seed), INIT_STREAM)
    model_state = settings.model.init(space.structure, settings.float_dtype, key)
    return LoopState(empty, np.zeros(0), empty, model_state, False, 0)


def padded_history(state: LoopState, size: int, dtype) -> History:
    """The state's observations padded to ``size`` rows; with feasibility labels once an evaluation
    was told infeasible (the program then models feasibility: one more compilation, at that point)."""
    n, dim = state.x.shape
    x = np.full((size, dim), 0.5)
    y = np.full(size, np.nan)
    x[:n], y[:n] = state.x, state.y
    feasible = constraints = None
    if not np.all(state.feasible):
        feasible = np.ones(size, bool)
        feasible[:n] = state.feasible
        feasible = jnp.asarray(feasible)
    if state.constraints.shape[-1]:
        constraints = np.full((size, state.constraints.shape[-1]), np.nan)
        constraints[:n] = state.constraints
        constraints = jnp.asarray(constraints, dtype)
    return History(jnp.asarray(x, dtype), jnp.asarray(y, dtype), jnp.asarray(np.arange(size) < n), feasible,
                   constraints)


PENDING_MINIMUM = 16  # up to this many pending points share one program (masked rows cost little to condition on)


def padded_pending(pending: np.ndarray, dtype) -> Pending:
    if len(pending) == 0:
        return Pending.empty(pending.shape[1], dtype)
    size = bucket_size(len(pending), minimum=PENDING_MINIMUM)
    x = np.full((size, pending.shape[1]), 0.5)
    x[: len(pending)] = pending
    return Pending(jnp.asarray(x, dtype), jnp.asarray(np.arange(size) < len(pending)))


@precision.float64
def suggest(settings: Settings, space: Space, state: LoopState, size: int | None = None) -> tuple[LoopState, np.ndarray, dict]:
    """One new point to evaluate.

    The initial design comes first: while fewer than ``n_init`` points have been observed or are
    pending, the next design point (observations told from elsewhere count, so a run warm-started
    with data goes straight to the model). Then the compiled :func:`suggestion`.

    Args:
      settings: the run's settings; space: the search space; state: current state.
      size: padded size of the observation buffers (default :func:`jbo.data.bucket_size` of ``N``).
    Returns:
      ``(state, x, info)``: the new state (``x`` added to ``pending``), the encoded point ``(D,)`` and
      diagnostics (``phase``: ``"initial"`` or ``"model"``, the model's own entries).
    """
    n_init = settings.initial_size(space.dim)
    position = len(state.y) + len(state.pending)
    info: dict = {"n": len(state.y)}
    if settings.model.uses_initial_design and position < n_init:
        x, info["phase"] = initial_design(settings, space)[position], "initial"
    else:
        dtype = settings.float_dtype
        if size is not None and (isinstance(size, bool) or int(size) != size or size < len(state.y)):
            raise ValueError(f"size must be an integer >= the number of observations ({len(state.y)}), got {size!r}")
        size = bucket_size(len(state.y)) if size is None else int(size)
        key = _suggestion_key(settings.seed, state.n_suggested)  # = suggestion_key(run_key(seed), n), one dispatch
        history, program, model_state = padded_history(state, size, dtype), settings.program(), state.model_state
        if num_devices() > 1 and type(settings.model).prepare is not ModelConfig.prepare:
            data = _standardize(history, failures=settings.failures, output_warping=settings.output_warping,
                                infeasible=settings.infeasible)[0]
            model_key = jax.random.split(key)[0]  # the key suggestion() hands the model
            config, model_state = settings.model.prepare(model_state, data, model_key, not state.fitted)
            program = dataclasses.replace(program, model=config)
        x, model_state, fitted, model_info = compiled_suggestion(
            program, space.structure, model_state, jnp.asarray(state.fitted), history,
            padded_pending(state.pending, dtype), anchor_table(settings, space), key,
            jnp.asarray(settings.ucb_beta, dtype), bins=jnp.asarray(space.bins, dtype))
        x = np.asarray(x, np.float64)
        info.update(phase="model", n_pad=size, **{k: np.asarray(v).tolist() for k, v in model_info.items()})
        state = state._replace(model_state=model_state, fitted=bool(fitted))
    state = state._replace(pending=np.concatenate([state.pending, x[None]]), n_suggested=state.n_suggested + 1)
    return state, x, info


def encode_observation(settings: Settings, space: Space, config: dict, index: int) -> np.ndarray:
    """Encoded training row ``(D,)`` of the ``index``-th observed configuration, when it was not suggested.

    The columns of parameters inactive in ``config`` (conditional spaces) are filled with uniform
    noise from a generator seeded by ``(seed, index)``, so a resumed run rebuilds the same rows.
    That is the "GP with irrelevant dimensions filled randomly" baseline of Swersky et al. (2014)
    for ``model="gp"``; models that know the structure (relevance mask, per-leaf GPs) ignore
    those columns.
    """
    return space.encode(config, fill=np.random.default_rng([int(settings.seed), int(index)]))


def match_pending(state: LoopState, x: np.ndarray, active: np.ndarray | None = None) -> int | None:
    """Index of the pending point ``x`` stands for (equal on the ``active`` columns), or ``None``."""
    if not len(state.pending):
        return None
    close = np.abs(state.pending - x[None]) < 1e-9
    if active is not None:
        close |= np.asarray(active)[None] == 0
    match = np.flatnonzero(np.all(close, axis=1))
    return int(match[0]) if len(match) else None


def observe(state: LoopState, x: np.ndarray, value: float | None, active: np.ndarray | None = None,
            index: int | None = None, feasible: bool = True, constraints=None) -> LoopState:
    """Record ``value`` at encoded point ``x`` (``None``/``nan``/``inf`` = a failure).

    If ``x`` stands for a pending suggestion (equal on the ``active`` columns: inactive columns hold
    fill values), that suggestion leaves ``pending`` and its own row is recorded, so the model sees
    the point exactly as suggested. ``index``, when given, names that row of ``pending`` (a parallel
    run knows which of several equal-looking pending points returned). ``feasible=False`` marks an
    evaluation that violated an unknown constraint (its value, if any, is not modelled).
    ``constraints`` ``(K,)`` are constraint values known at evaluation (``nan`` entries: unknown); ``K``
    is fixed by the first evaluation that reports any (a ``ValueError`` names a change).
    """
    value = np.nan if value is None or not np.isfinite(value) else float(value)
    pending = state.pending
    if index is None:
        index = match_pending(state, x, active)
    elif not 0 <= index < len(pending):
        raise IndexError(f"pending index {index} out of range ({len(pending)} pending points)")
    if index is not None:
        x = pending[index]
        pending = np.delete(pending, index, axis=0)
    table = state.constraints
    if constraints is not None:
        row = np.asarray(constraints, np.float64).reshape(-1)
        if table.shape[-1] == 0 and len(row):  # the first report fixes K; earlier rows are unknown
            table = np.full((len(state.y), len(row)), np.nan)
        elif len(row) != table.shape[-1]:
            raise ValueError(f"constraints: expected {table.shape[-1]} values as before, got {len(row)}")
    else:
        row = np.full(table.shape[-1], np.nan)
    if table.shape[-1]:
        table = np.concatenate([table, row[None]])
    return state._replace(x=np.concatenate([state.x, x[None]]), y=np.append(state.y, value), pending=pending,
                          feasible=np.append(state.feasible, bool(feasible)), constraints=table)
