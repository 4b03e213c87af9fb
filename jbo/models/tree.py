r"""The tree model (Jenatton et al., 2017) as a jbo model: its surrogate, the tree-structured GP, is
:mod:`jbo.surrogates.tree`; here are the leaves of the unit cube (:class:`LeafDecoder`), the two-step
search of eq. (5)–(6) over leaves and their parameters (:func:`propose`) and the configuration
:class:`Tree` (``model="tree"``, ``"tree-paper"``, ``"independent"``, ``"marginal"``).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from jbo import acquisition as acq
from jbo import inference, kernels
from jbo.kernels import Kernel
from jbo.models.base import check_bool, check_choice
from jbo.models import sampled
from jbo.models.sampled import SampledConfig, SampledState
from jbo.optimize import MaximizeConfig, maximize
from jbo.surrogates.tree import (MODES, PATH_EIS, SHARED_KERNELS, TreeData, TreePosterior, TreeSpec, blocks,
                                 condition, fantasize, model_structure, path_moments, predict_leaf, tree_gp)
from jbo.types import Pending, Start

#: Priors of the linear weights of shared parameters (:class:`Tree`): the paper's (one log-normal variance per
#: node, bias included) or a shrinkage prior per shared feature (:data:`SHRINKAGE`).
SHARED_WEIGHTS = ("paper", "shrinkage")

#: ``(loc, scale)`` of the log-normal shrinkage prior on the variance of each linear shared weight:
#: median variance e^-3 ≈ 0.05 (a standard deviation of 0.22 standardised units across a shared
#: parameter's range), 95 % of the mass between 1e-3 and 2.7.
SHRINKAGE = (-3.0, 2.0)

#: How a proposal searches the leaves (:func:`propose`).
STRATEGIES = ("auto", "two_step", "screen", "hybrid", "all_leaves")

#: Each mode's default strategy: the paper's model keeps the paper's two-step path EI.
DEFAULT_STRATEGY = {"tree": "auto", "tree-paper": "two_step", "independent": "all_leaves",
                    "marginal": "all_leaves"}


# ----------------------------------------------------------------------------- leaves in the cube


def _boundaries(param) -> np.ndarray:
    """Cube coordinates where an integer parameter's decoded value steps to the next integer.

    Found by bisection between neighbouring bin centres on the parameter's own ``decode_values``,
    so linear and log-scaled integers decode exactly as :mod:`jbo.spaces` decodes them.
    """
    values = list(range(param.low, param.high + 1))
    centres = np.asarray(param.encode_values(values))[:, 0]
    lo, hi, first = centres[:-1].copy(), centres[1:].copy(), np.asarray(values[:-1])
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        below = np.asarray(param.decode_values(mid[:, None])) == first
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return hi


@dataclasses.dataclass(frozen=True)
class LeafDecoder:
    """The leaf of unit-cube rows in jnp (jittable), from the leaves' decision assignments.

    A row belongs to leaf ``p`` when each decision ``(name, value)`` of ``p`` decodes to ``value``:
    a categorical by the argmax of its one-hot columns, an integer by its bin. The decoder also
    writes a leaf's decisions into a row (:meth:`encode`), which is how a proposal names its leaf.

    It agrees with :meth:`jbo.spaces.Space.leaf_index` (tested); it exists as a small frozen,
    hashable object that jitted programs take as a static argument and that also encodes leaves.
    Build it with :meth:`from_space`.
    """

    decisions: tuple  # ((columns, kind, boundaries), ...) one per decision parameter
    leaf_codes: tuple  # per leaf: ((decision index, code), ...)
    template: tuple  # (P, D) encoded decisions of each leaf (nested tuples)
    template_mask: tuple  # (P, D) columns holding a decision of that leaf

    @classmethod
    def from_space(cls, space, structure) -> "LeafDecoder":
        names = sorted({name for leaf in structure.leaves for name, _ in leaf}, key=space.names.index)
        params, columns = space.params, space.columns
        decisions = []
        for name in names:
            param, sl = params[name], columns[name]
            cols = tuple(range(sl.start, sl.stop))
            if hasattr(param, "choices"):
                decisions.append((cols, "categorical", ()))
            elif hasattr(param, "n_values"):
                decisions.append((cols, "integer", tuple(_boundaries(param).tolist())))
            else:
                raise ValueError(f"decision parameter {name!r} must be categorical or integer, got {param!r}")
        num = len(structure.leaves)
        template = np.zeros((num, space.dim))
        template_mask = np.zeros((num, space.dim), bool)
        codes = []
        for p, leaf in enumerate(structure.leaves):
            mine = []
            for name, value in leaf:
                k, param, sl = names.index(name), params[name], columns[name]
                code = param.index(value) if hasattr(param, "choices") else int(param.check_value(value)) - param.low
                mine.append((k, code))
                template[p, sl] = param.encode(value)
                template_mask[p, sl] = True
            codes.append(tuple(mine))
        return cls(tuple(decisions), tuple(codes), tuple(map(tuple, template.tolist())),
                   tuple(map(tuple, template_mask.tolist())))

    def codes(self, x):
        """``(m, K)`` decoded code of every decision parameter (category index, integer - low)."""
        out = []
        for cols, kind, bounds in self.decisions:
            if kind == "categorical":
                out.append(jnp.argmax(x[..., jnp.asarray(cols)], axis=-1))
            else:
                u = jnp.clip(x[..., cols[0]], 0.0, 1.0)
                out.append(jnp.searchsorted(jnp.asarray(bounds, x.dtype), u, side="right"))
        return jnp.stack(out, -1) if out else jnp.zeros(x.shape[:-1] + (0,), jnp.int32)

    def __call__(self, x):
        """``(m,)`` leaf index of each row (0 for a row that matches no leaf)."""
        codes = self.codes(x)
        match = [jnp.all(jnp.stack([codes[..., k] == c for k, c in leaf] + [jnp.ones(x.shape[:-1], bool)]), 0)
                 for leaf in self.leaf_codes]
        return jnp.argmax(jnp.stack(match, -1), -1)

    def encode(self, x, leaf):
        """``x`` ``(..., D)`` with leaf ``leaf``'s decision columns written in (traceable)."""
        template = jnp.asarray(self.template, x.dtype)[leaf]
        return jnp.where(jnp.asarray(self.template_mask)[leaf], template, x)


# ----------------------------------------------------------------------------- acquisition


def path_expected_improvement(spec: TreeSpec, post: TreePosterior, x, leaf, best, log: bool = True):
    r"""Path EI of eq. (6): :math:`\mathbb E[(y_{\min} - b_p - z_p^\top c)_+]`, ``c`` from its posterior.

    With shared parameters (§2.4) :math:`z_p` depends on the shared columns of ``x``, and the paper
    maximises (6) jointly over ``p`` and those columns; this evaluates it at rows ``x``. A path
    whose ``z_p^T c`` has no posterior variance gets :math:`(y_{\min} - \mu)_+` (through a
    variance floor of 1e-24, or 1e-12 in float32).

    Args:
      spec, post: the model and one posterior.
      x: ``(m, D)`` rows (only their shared columns on the path are read).
      leaf: leaf index.
      best: incumbent ``y_min`` (standardised).
      log: return log-EI (finite everywhere, what the optimiser climbs) instead of EI.
    Returns:
      ``(m,)`` (log) path EI.
    """
    mean, var = path_moments(spec, post, x, leaf)
    floor = 1e-24 if mean.dtype == jnp.float64 else 1e-12
    var = jnp.maximum(var, floor)
    return acq.log_expected_improvement(mean, var, best) if log else acq.expected_improvement(mean, var, best)


def _leaf_acquisition(spec, posteriors, leaf, best, acquisition, ucb_beta: float, choice=None):
    def score_of(pointwise, log_domain):
        return acq.integrate(lambda post, x: predict_leaf(spec, post, x, leaf), posteriors, pointwise, log_domain,
                             best)

    return acq.integrated(acquisition, score_of, ucb_beta, choice)


def propose(spec: TreeSpec, decoder: LeafDecoder, params, data: TreeData, pending_x, pending_mask, anchors, best, *,
            strategy: str = "two_step", acquisition: str = "ei", ucb_beta: float = 2.0,
            config: MaximizeConfig = MaximizeConfig(), choice=None, region=None):
    r"""One proposal of the tree model or its baselines (traceable; static shapes).

    Strategies (each searches one or all leaves; Jenatton's Table 1 compares their costs):

    * ``"two_step"`` (Jenatton §3.2, the paper's model): for each leaf, maximise the integrated
      path EI (6) over its shared columns and pick the leaf ``p*`` with the largest maximum; then
      maximise the integrated EI (5) (or ``acquisition``) at leaf ``p*`` only, from ``anchors``
      plus step 1's maximiser. Eq. (6) is the EI of :math:`b_p + z_p^\top c`, the leaf's value
      with its GP ``g_p`` at its prior mean: a leaf-level score that explores leaves through the
      posterior of ``c``. It is all a leaf can offer beyond its own parameters when ``g_p`` sees
      only those, but not when ``g_p`` also models the shared ones (``"tree"``): a leaf's best
      value then depends on how its GP bends the shared parameters, which (6) cannot see.
    * ``"screen"``: two steps as well, but step 1 scores each leaf by the full integrated
      acquisition (5) at the ``anchors`` (no refinement: one batch of predictions per leaf, about
      what step 1 of ``"two_step"`` evaluates before it refines); step 2 maximises (5) at the best
      leaf only. The leaf score sees everything the model knows about the leaf, but drops (6)'s
      leaf-level exploration: with MAP hyperparameters a sparsely observed leaf's GP is often
      confidently pessimistic, and the search stays in the incumbent's leaf more often.
    * ``"hybrid"``: two steps, the leaf score being the larger of the path EI (6) (maximised as in
      ``"two_step"``) and the screened EI (5) (both integrated log-EIs of the same incumbent, so
      comparable): a leaf is refined if either its level or its modelled best point promises the
      most improvement. Step 2 as in ``"two_step"``. With ``acquisition`` other than EI the screen
      is not an EI, and the leaf is chosen by (6) alone.
    * ``"auto"`` (the default of ``"tree"``): ``"two_step"`` when no leaf GP sees a shared column
      (the model is then the paper's, and so is the search), ``"hybrid"`` otherwise.
    * ``"all_leaves"``: maximise (5) in every leaf and keep the best (the search of the independent
      and marginal baselines, Table 1): ``P`` refinements per proposal.

    Args:
      spec, decoder: the model and the leaf decoder of its space.
      params: stacked hyperparameter samples (leading axis ``S``).
      data: per-leaf blocks; pending_x, pending_mask: padded pending points (fantasies) or ``None``.
      anchors: ``(A, D)`` candidates; best: incumbent (standardised).
      strategy, acquisition, ucb_beta, config: see above and :class:`jbo.optimize.MaximizeConfig`.
      choice: the option of a :class:`jbo.acquisition.Choice` acquisition (``Inputs.choice``).
      region: ``(lower (D,), upper (D,))`` every search keeps to (a trust region, ``Inputs.region``; the
        ``anchors`` lie in it), or ``None``: the unit cube.
    Returns:
      ``(x (D,), score, leaf)``: ``x`` carries leaf ``leaf``'s decisions in its decision columns.
    """
    posteriors = jax.vmap(lambda p: condition(spec, p, data))(params)
    if pending_x is not None:
        posteriors = jax.vmap(lambda post: fantasize(spec, decoder, post, pending_x, pending_mask))(posteriors)
    leaves = jnp.arange(spec.num_leaves)
    search = functools.partial(maximize, top_k=config.top_k, num_steps=config.num_steps,
                               learning_rate=config.learning_rate, bounds=region, schedule=config.schedule,
                               eps=config.eps)

    def leaf_search(leaf, extra):
        score = _leaf_acquisition(spec, posteriors, leaf, best, acquisition, ucb_beta, choice)
        return search(score, jnp.concatenate([anchors, extra]))

    if strategy == "all_leaves":
        xs, scores = jax.lax.map(lambda p: leaf_search(p, anchors[:0]), leaves)
        leaf = jnp.argmax(scores)
        return decoder.encode(xs[leaf], leaf), scores[leaf], leaf
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; valid choices: {list(STRATEGIES)}")
    if strategy == "auto":  # static: the structure says whether any leaf GP sees shared columns
        strategy = "hybrid" if spec.sees_shared else "two_step"

    def screen(leaf):
        return jnp.max(_leaf_acquisition(spec, posteriors, leaf, best, acquisition, ucb_beta, choice)(anchors))

    def path_search(leaf):
        values = lambda x: acq.log_mean_exp(jax.vmap(lambda post: path_expected_improvement(spec, post, x, leaf, best))(
            posteriors))
        return search(values, anchors)

    if strategy == "screen":
        leaf = jnp.argmax(jax.lax.map(screen, leaves))
        x, score = leaf_search(leaf, anchors[:0])
        return decoder.encode(x, leaf), score, leaf
    path_x, path_scores = jax.lax.map(path_search, leaves)
    if strategy == "hybrid":
        # Both leaf scores are integrated log expected improvements of the same incumbent. With another
        # acquisition (pi, ucb) the screen's values are not EIs: the leaf is then chosen by eq. (6) alone.
        options = acquisition.options if isinstance(acquisition, acq.Choice) else (acquisition,)
        is_ei = [option in ("ei", "logei") for option in options]  # names: a Pointwise of the user's is never an EI here
        if any(is_ei):
            screened = jnp.maximum(path_scores, jax.lax.map(screen, leaves))
            path_scores = screened if all(is_ei) else jnp.where(jnp.asarray(is_ei)[0 if choice is None else choice], screened, path_scores)
    leaf = jnp.argmax(path_scores)
    x, score = leaf_search(leaf, path_x[leaf][None])
    return decoder.encode(x, leaf), score, leaf


# ----------------------------------------------------------------------------- the model


def default_weight_prior(mode: str) -> str:
    """``"shrinkage"`` for ``"tree"``, whose leaf GPs also model the shared parameters, else ``"paper"``."""
    return "shrinkage" if mode == "tree" else "paper"


@functools.lru_cache(maxsize=32)
def model_for(space, mode: str, kernel: str | Kernel = "matern52", warp: bool = False, shared_kernel: str = "additive+joint",
              path_ei: str = "linear", shared_weights: str | None = None):
    """``(spec, decoder, surrogate)`` of a tree model on a conditional space (cached: compiled programs
    key on these objects).

    Args:
      space: a :class:`jbo.spaces.Space` with conditions (``space.tree()``).
      mode: one of :data:`MODES`.
      kernel, warp: leaf kernel, a name or an object (:func:`jbo.kernels.resolve`).
      shared_kernel, path_ei: see :class:`TreeSpec`.
      shared_weights: prior of the linear shared weights, one of :data:`SHARED_WEIGHTS`, or ``None``: the
        mode's default (:func:`default_weight_prior`).
    """
    structure = space.tree()
    weights = {}
    if (shared_weights or default_weight_prior(mode)) == "shrinkage":
        loc, scale = SHRINKAGE
        weights = dict(variance_per="split", shared_variance_loc=loc, shared_variance_scale=scale)
    spec = TreeSpec(model_structure(structure, mode), kernels.resolve(kernel, warp=warp), shared_kernel, path_ei,
                    **weights)
    decoder = LeafDecoder.from_space(space, structure)
    return spec, decoder, tree_gp(spec, decoder, mode)


@dataclasses.dataclass(frozen=True)
class Tree(SampledConfig):
    """Jenatton et al.'s tree GP and its baselines (``model="tree"``, ``"tree-paper"``,
    ``"independent"``, ``"marginal"``).

    Which to choose: ``"tree"`` (default) for any conditional space, in particular when shared
    parameters (a learning rate common to several optimisers, say) may act non-linearly or differ
    in effect between branches; ``"tree-paper"`` to reproduce Jenatton et al. exactly (shared
    parameters only linear, two-step path EI), which is right only when shared parameters act
    linearly and alike in every branch (on a space without shared parameters the two are the same
    model and search); ``"independent"`` when the branches share nothing worth transferring (it
    searches every leaf). BENCHMARKS.md, section ``tree_synthetic``, compares them.

    Attributes:
      mode: ``"tree"`` (node terms plus shared parameters in the leaf GPs, additively and jointly;
        shrinkage prior on the linear shared weights; leaf chosen by the larger of path EI and full
        EI), ``"tree-paper"`` (the paper's model: shared parameters linear through the nodes only,
        two-step path EI of eq. 6), ``"independent"`` (``c = 0``, EI in every leaf) or ``"marginal"``
        (scalar nodes with ``c`` integrated out, EI in every leaf). See :func:`model_structure`.
      strategy: how a proposal searches the leaves, one of :data:`STRATEGIES` (see :func:`propose`);
        ``None``: the mode's default (:data:`DEFAULT_STRATEGY`: ``"auto"`` for ``"tree"``,
        ``"two_step"`` for ``"tree-paper"``, ``"all_leaves"`` for the baselines).
      shared_kernel: ``"additive+joint"`` (default), ``"additive"`` or ``"joint"``: how a leaf GP that
        sees shared columns combines them with its own (:class:`TreeSpec`; ``"joint"`` alone models
        interactions between shared and own parameters, at the price of more data per leaf; the
        default adds it to the additive kernels, so interactions are modelled once the data show
        them); no effect on ``"tree-paper"`` (whose leaves see no shared column) or on the baselines
        (no shared columns on nodes: every column of a leaf is its own).
      path_ei: ``"linear"`` (default: eq. 6 as in the paper) or ``"shared"``: the leaf value whose EI
        scores leaves in the two-step searches (:class:`TreeSpec`, :func:`path_moments`); only matters
        with an additive kernel on shared columns.
      shared_weights: prior of the linear weights of shared parameters, one of :data:`SHARED_WEIGHTS`:
        ``"paper"`` (one log-normal variance per node, its bias included) or ``"shrinkage"`` (the
        node's bias keeps the paper's prior; each shared weight gets its own variance under the
        shrinkage prior :data:`SHRINKAGE`, so a linear shared term stays only where the data support
        one slope common to the leaves below its node). ``None``: ``"shrinkage"`` for ``"tree"``, whose
        leaf GPs also model the shared parameters, ``"paper"`` otherwise. No effect without shared
        parameters.
      kernel, warp: the leaf GPs' kernel: a name (:data:`jbo.kernels.KERNELS`) or a kernel object,
        optionally Kumaraswamy-warped (:func:`jbo.kernels.resolve`).
      inference, num_samples, num_burnin, num_warmup, thin, map_restarts, num_chains: see
        :class:`~jbo.models.sampled.SampledConfig`.
    """

    kind: ClassVar[str] = "tree"
    mode: str = "tree"
    strategy: str | None = None
    shared_kernel: str = "additive+joint"
    path_ei: str = "linear"
    shared_weights: str | None = None
    kernel: Any = "matern52"
    warp: bool = False
    cli_types: ClassVar[dict] = {"kernel": str}

    @property
    def name(self) -> str:
        return self.mode

    @property
    def weight_prior(self) -> str:
        """The prior of the linear shared weights actually used: ``shared_weights``, or ``"shrinkage"``
        for ``"tree"`` and the paper's for the other modes."""
        return self.shared_weights or default_weight_prior(self.mode)

    @property
    def search(self) -> str:
        """The leaf search actually used: ``strategy`` or the mode's default."""
        return DEFAULT_STRATEGY[self.mode] if self.strategy is None else self.strategy

    def validate(self) -> None:
        super().validate()
        check_choice("tree model", self.mode, MODES)
        if self.strategy is not None:
            check_choice("strategy", self.strategy, STRATEGIES)
        check_choice("shared_kernel", self.shared_kernel, SHARED_KERNELS)
        check_choice("path_ei", self.path_ei, PATH_EIS)
        if self.shared_weights is not None:
            check_choice("shared_weights", self.shared_weights, SHARED_WEIGHTS)
        check_bool(self, "warp")
        kernels.check(self.kernel)

    def init(self, space, dtype, key) -> SampledState:
        _check(self, space)
        spec, decoder, surrogate = self.parts(space)
        example = inference.example_data(space.dim, dtype)
        example = blocks(example, decoder(example.x), spec.num_leaves)
        return sampled.init(surrogate, example, self, key)

    def step(self, space, acquisition, state, inputs, key):
        """One suggestion: infer the hyperparameters (warm-started), then search the leaves with the
        config's strategy (:func:`propose`); traceable. Pending points enter as the kriging believer;
        Thompson sampling, Monte Carlo fantasies and feasibility models raise."""
        _check(self, space, acquisition.function, acquisition.pending,
               acquisition.classify or acquisition.num_constraints > 0)
        spec, decoder, surrogate = self.parts(space)
        k_fit, k_acq = jax.random.split(key)
        data = blocks(inputs.data, decoder(inputs.data.x), spec.num_leaves)
        samples = inference.fit(k_fit, surrogate, data, self.inference_config, Start(state.z, state.restarts),
                                inputs.first)
        pending = inputs.pending if inputs.pending.x.shape[0] else Pending(None, None)
        x, score, leaf = propose(spec, decoder, samples.params, data, pending.x, pending.mask, inputs.anchors,
                                  inputs.best, strategy=self.search, acquisition=acquisition.function,
                                  ucb_beta=inputs.ucb_beta, config=acquisition.maximize, choice=inputs.choice,
                                  region=inputs.region)
        z = inference.next_start(samples, self.inference_config)
        return x, SampledState(z, state.restarts, samples.params), dict(
            samples.info, score=score, leaf=leaf, **sampled.hyperparameter_means(samples.params))

    def parts(self, space):
        """``(spec, decoder, surrogate)`` of this model on ``space`` (:func:`model_for`)."""
        return model_for(space, self.mode, self.kernel, self.warp, self.shared_kernel, self.path_ei,
                         self.weight_prior)


def _check(config: Tree, space, acquisition=None, pending: str = "believer", classify: bool = False):
    if not space.is_conditional:
        raise ValueError(f"model {config.mode!r} needs a conditional space (parameters with when=...)")
    if acquisition == "thompson":
        raise ValueError(f"model {config.mode!r} supports the acquisitions ei, logei, pi and ucb, not thompson")
    if pending == "fantasies":
        raise ValueError(f"model {config.mode!r} takes pending points as the kriging believer only: use pending='believer'")
    if classify:
        raise ValueError(f"model {config.mode!r} does not model unknown constraints (infeasible evaluations, "
                         "failures='constraint'): use model='gp', 'arc' or 'dngo' for those")
