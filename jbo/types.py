"""The types every layer of jbo shares: observations, surrogates, inference results and a suggestion's inputs.

This module is the bottom layer: it imports nothing from jbo, so blocks (kernels, priors), maths
(surrogates, inference, acquisition) and models can all use these types without importing one another.

* :class:`Data`: padded observations in the unit cube.
* :class:`Surrogate`: a probabilistic model as a tuple of pure functions (the contract a new surrogate meets).
* :class:`Samples`, :class:`Start`: hyperparameter samples and where a fit starts.
* :class:`Pending`, :class:`Constraints`, :class:`Inputs`, :class:`Acquisition`: what the loop hands a model's
  ``step`` for one suggestion.
* :class:`Names`: a read-only table of jbo's names for its blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, NamedTuple

import jax.numpy as jnp


class Data(NamedTuple):
    """Observations in the unit cube, padded to a static size.

    Attributes:
      x: ``(N_pad, D)`` inputs in ``[0, 1]^D``.
      y: ``(N_pad,)`` standardised targets (zero on padded rows).
      mask: ``(N_pad,)`` bool, ``True`` on real rows. Models must make padded rows inert (the exact GP
        gives them unit prior variance and zero residual, which adds nothing to its likelihood).
    """

    x: jnp.ndarray
    y: jnp.ndarray
    mask: jnp.ndarray

    @property
    def n(self):
        """Number of real rows (a traced scalar inside ``jit``)."""
        return jnp.sum(self.mask)


class Surrogate(NamedTuple):
    """A probabilistic surrogate as a tuple of pure functions (traceable, over padded data).

    Any tuple of functions meeting this contract becomes a full model through
    :class:`jbo.models.SurrogateModel`: its hyperparameters inferred (MAP, slice sampling or NUTS), the
    acquisition integrated over the samples, pending points and constraints handled by the shared step.

    Attributes:
      name: short name (``"gp"``, ...), for messages.
      prior: numpyro model fragment ``prior(data) -> params``: samples every hyperparameter as a
        site and returns them as the params PyTree that ``condition`` takes (``data`` gives shapes).
      log_likelihood: ``log_likelihood(params, data) -> scalar``, the marginal likelihood. Prior plus
        this is the log joint that MAP maximises and the samplers sample.
      condition: ``condition(params, data) -> posterior``, the per-sample work (a Cholesky
        factorisation, say) done once before the acquisition is evaluated many times.
      predict: ``predict(posterior, x) -> (mean, var)`` of the latent function at ``x`` ``(m, D)``,
        both ``(m,)``, on the standardised scale, noise excluded.
      fantasize: optional, ``fantasize(posterior, x, mask, y=None) -> posterior`` conditioned on extra
        points ``x`` (rows where ``mask``) observed at ``y``; ``y=None`` is their own predictive mean
        (the kriging believer). Pending evaluations enter this way (believer, or Monte Carlo fantasies:
        ``y`` drawn from ``predict_joint``). ``None``: the surrogate takes no pending points. A
        surrogate that can only take the believer has no ``y`` argument.
      predict_joint: optional, ``predict_joint(posterior, x) -> (mean (m,), cov (m, m))``, for Thompson
        sampling and Monte Carlo fantasies; ``None`` where there is none.
    """

    name: str
    prior: Callable[[Any], Any]
    log_likelihood: Callable[[Any, Any], Any]
    condition: Callable[[Any, Any], Any]
    predict: Callable[[Any, Any], tuple[Any, Any]]
    fantasize: Callable[..., Any] | None = None
    predict_joint: Callable[[Any, Any], tuple[Any, Any]] | None = None


class Samples(NamedTuple):
    """Stacked hyperparameter samples.

    Attributes:
      params: constrained params PyTree for ``surrogate.condition``, leading axis ``S``.
      z: ``(S, P)`` flat unconstrained samples (warm starts).
      log_density: ``(S,)`` unnormalised log posterior at each sample.
      info: method-specific diagnostics (dict of arrays).
      mode: ``(P,)`` the posterior's mode where the method found one (``"elliptical"``), else ``None``.
    """

    params: Any
    z: jnp.ndarray
    log_density: jnp.ndarray
    info: dict
    mode: Any = None


class Start(NamedTuple):
    """Where a model's fits start: ``z`` ``(P,)`` (a prior draw until the first fit, then the last
    sample; ``(C, P)``, one per chain, for ``C > 1`` slice chains; ``(3, P)``, the chain's position, the
    last mode and the last reference's scale, for ``"elliptical"``; ``(2, P)``, the last estimate and its Laplace
    standard deviations, in whose units the next search runs, for ``"map"``) and ``restarts`` ``(R, P)`` prior
    draws the first MAP fit also starts from.

    Drawn once per run, outside the per-suggestion program, so that program holds no sampling code.
    """

    z: jnp.ndarray
    restarts: jnp.ndarray


class Pending(NamedTuple):
    """Points suggested but not yet observed, padded to a static count.

    Attributes:
      x: ``(P, D)`` unit-cube points (``P`` may be 0).
      mask: ``(P,)`` bool, ``True`` on real rows.
    """

    x: jnp.ndarray
    mask: jnp.ndarray

    @classmethod
    def empty(cls, dim: int, dtype=jnp.float64) -> "Pending":
        return cls(jnp.zeros((0, dim), dtype), jnp.zeros((0,), bool))


class Acquisition(NamedTuple):
    """What a model's step maximises and how (static: hashable, part of the compiled program).

    Attributes:
      function: a built-in name (``"ei"``, maximised as log-EI, ``"logei"``, ``"pi"``, ``"ucb"``,
        ``"thompson"``) or a :class:`jbo.acquisition.Pointwise` of the user's.
      maximize: sizes of the search (a :class:`jbo.optimize.MaximizeConfig`).
      pending: how pending evaluations enter: ``"believer"`` or ``"fantasies"``.
      num_fantasies: draws per hyperparameter sample with ``pending="fantasies"``.
      classify: some evaluations can be infeasible: multiply the acquisition by the probability of
        feasibility (constrained EI) from a classifier of ``Inputs.labels``.
      num_constraints: ``K`` constraint values known at evaluation (``Inputs.constraints``), each
        modelled by the objective's surrogate; the acquisition is multiplied by ``P[c_k <= 0]`` for each.
    """

    function: Any
    maximize: Any
    pending: str = "believer"
    num_fantasies: int = 16
    classify: bool = False
    num_constraints: int = 0


class Constraints(NamedTuple):
    """Constraint values known at evaluation (feasible where every one is ``<= 0``), as the models see them.

    Attributes:
      x: ``(N_pad, D)`` evaluated points.
      y: ``(K, N_pad)`` each constraint's values, standardised over its known rows.
      mask: ``(K, N_pad)`` rows where that constraint's value is known.
      threshold: ``(K,)`` where 0 (the feasibility boundary) lies on each standardised scale.
    """

    x: jnp.ndarray
    y: jnp.ndarray
    mask: jnp.ndarray
    threshold: jnp.ndarray


class Inputs(NamedTuple):
    """Everything the loop hands a model for one suggestion (arrays only: traced under ``jit``).

    Attributes:
      data: padded observations, targets standardised, failures already handled.
      pending: points being evaluated.
      anchors: ``(A, D)`` starting candidates of the acquisition search.
      best: the incumbent on the standardised scale.
      first: ``True`` when the model has not been fitted yet (cold start: burn-in, restarts).
      ucb_beta: UCB's exploration weight (an array, so runs can ``vmap`` over it).
      labels: with ``Acquisition.classify``, every evaluated point labelled feasible (``y = 1``) or not
        (``y = 0``); ``None`` otherwise.
      constraints: known constraint values (:class:`Constraints`), or ``None``.
      scale: objective units per standardised unit (the standard deviation the targets were divided
        by), for models whose priors are stated in the objective's units; ``None`` where a caller has
        no objective scale.
      choice: with a :class:`jbo.acquisition.Choice` acquisition, the index of the option to maximise
        (an integer array, so runs of one compiled program can differ in it); ``None``: the first.
      region: ``(lower (D,), upper (D,))``, the box the search keeps to (a trust region, :mod:`jbo.trust`;
        the anchors lie in it), or ``None``: the unit cube.
    """

    data: Data
    pending: Pending
    anchors: jnp.ndarray
    best: jnp.ndarray
    first: jnp.ndarray
    ucb_beta: jnp.ndarray
    labels: Data | None = None
    constraints: Constraints | None = None
    scale: jnp.ndarray | None = None
    choice: jnp.ndarray | None = None
    region: tuple | None = None


class Names(Mapping):
    """A read-only table of names (kernels, acquisitions): a stored compiled program is keyed by the names in
    its configuration, so a name must always mean the same maths; the tables are part of jbo's source, which
    the keys cover. Assigning raises a ``TypeError`` that says what to pass instead.

    Args:
      what: the table's public name, for messages; table: name -> value; advice: what to do instead.
    """

    def __init__(self, what: str, table: dict, advice: str):
        self._what, self._table, self._advice = what, dict(table), advice

    def __getitem__(self, name):
        return self._table[name]

    def __iter__(self):
        return iter(self._table)

    def __len__(self):
        return len(self._table)

    def __setitem__(self, name, value):
        raise TypeError(f"{self._what} cannot be changed: {self._advice}")

    __delitem__ = __setitem__

    def __repr__(self):
        return f"{self._what}({list(self._table)})"
