r"""Tree-structured semi-parametric GP (Jenatton et al., 2017): the surrogate of :class:`jbo.models.Tree`.

A search space whose parameters depend on decisions (a tree of conditions) has one *leaf* ``p``
per complete decision path. The model of Jenatton et al. (eq. 1) places an independent GP
:math:`g_p \sim \mathcal{GP}(b_p, \mathcal K_p)` on each leaf's own parameters and a random
linear function :math:`c_v^\top r_v` on each inner node ``v``: a constant (``r_v = [1]``,
§2.1) and/or the node's *shared* parameters (§2.4). With :math:`z_p(x) = [r_v(x)]_{v \ni p}`
(zeros off the path) and :math:`c \sim \mathcal N(0, \Sigma_c)`,

.. math::
   y_i = g_{p_i}(x_i) + z_{p_i}(x_i)^\top c + \varepsilon_i, \qquad \varepsilon_i \sim \mathcal N(0, \sigma^2).

With :math:`M_p = K_p + \sigma^2 I`, :math:`Z_p` the features of leaf ``p``'s rows and
:math:`r_p = y_p - b_p`, the posterior of the weights is :math:`c \mid y \sim \mathcal N(\Lambda_c^{-1}
f_c, \Lambda_c^{-1})`, :math:`\Lambda_c = \Sigma_c^{-1} + \sum_p Z_p^\top M_p^{-1} Z_p`,
:math:`f_c = \sum_p Z_p^\top M_p^{-1} r_p` (§2.2; here ``Z_p`` is ``(n_p, d)``, the transpose of
the paper's), and the log marginal likelihood of eq. (3) is, by Woodbury and the matrix
determinant lemma applied to the dense covariance of eq. (4),

.. math::
   \log p(y) = \sum_p \log \mathcal N(y_p; b_p, M_p) + \tfrac12 f_c^\top \Lambda_c^{-1} f_c
   - \tfrac12 \log\lvert\Lambda_c\rvert - \tfrac12 \log\lvert\Sigma_c\rvert,

which costs :math:`O(d^3 + \sum_p n_p^3)` instead of :math:`O(n^3)`. The predictive law of
:math:`g_p(x) + z_p(x)^\top c` with ``c`` integrated out (§3.2) has, with :math:`t_p(x) = z_p(x) -
Z_p^\top M_p^{-1} k_p(x)` (the ``- Z_p^\top M_p^{-1} k_p`` part is the posterior covariance between
:math:`g_p(x)` and ``c``),

.. math::
   \tilde m_p(x) = b_p + k_p^\top M_p^{-1} r_p + t_p^\top \Lambda_c^{-1} f_c, \qquad
   \tilde S_p(x, x') = K_p(x, x') - k_p(x)^\top M_p^{-1} k_p(x') + t_p(x)^\top \Lambda_c^{-1} t_p(x'),

exactly the posterior of the dense GP with covariance :math:`Z \Sigma_c Z^\top + K^{\rm block} +
\sigma^2 I` (eq. 4); the test-suite checks both against that dense GP.

Layout: observations are stored per leaf in padded blocks :class:`TreeData` ``(P, n_pad, ·)`` (:func:`blocks`)
with masks, and every per-leaf computation is ``vmap``-ed over leaves, so a whole fit jits with
static shapes. Leaves see different numbers of columns: each leaf's columns are gathered into
``D_max`` slots and the unused slots are set to 0 on both sides of the kernel, so they add
nothing to any distance.

Four models share this code (:func:`model_structure`):

* ``"tree-paper"``: the model above exactly as the paper has it: a shared parameter enters *only*
  through its node's linear term :math:`c_v^\top r_v` (§2.4), one weight for every leaf below ``v``,
  and the leaf GPs see their own parameters only; two-step path EI (eq. 6). Exact when the shared
  parameters act linearly and alike in every leaf (Jenatton's synthetic trees), but it cannot
  represent a shared parameter whose effect is curved or differs between branches (a learning
  rate shared by several optimisers whose best value differs per optimiser), and eq. (6), which
  sees only the linear part, then commits to the wrong region.
* ``"tree"`` (the default tree model): the same inner-node terms (bias and linear shared features,
  which carry information between leaves) *plus* the shared parameters of a leaf's path as inputs
  of that leaf's GP, so each leaf models its own non-linear response to them; the covariance is
  :math:`Z \Sigma_c Z^\top + K^{\rm block}` with each ``K_p`` over the leaf's own and shared
  columns, still :math:`O(d^3 + \sum_p n_p^3)`. By default ``K_p`` is one kernel over the leaf's
  own columns plus one over its shared columns plus one over all of them (:class:`TreeSpec`
  ``shared_kernel="additive+joint"``): like the paper's linear terms, the shared response adds to
  the own response, so a few points of a leaf suffice to place its optimum, but it may now be curved
  and differ from leaf to leaf, and the third kernel lets a shared parameter move an own parameter's
  best value (a best momentum that falls as the learning rate rises) once the data show it. Eq. (6)
  sees only the linear part of that response, so a leaf is chosen by the larger of the path EI (6)
  and the full EI (5) at the anchors (``strategy="hybrid"``, see :func:`jbo.models.tree.propose`). A linear shared
  weight is now identified only by what the leaves below its node have in common, so each gets its
  own prior variance under a shrinkage prior (``variance_per="split"``, :data:`SHRINKAGE`); under the
  paper's prior such a weight keeps its prior spread when the leaves disagree, and (6) reads that
  spread as promise in another leaf. Where no leaf sees a shared column (no shared parameters),
  the model and its search are exactly the paper's.
* ``"independent"``: ``c = 0``, one GP per leaf over its own and shared columns (Bergstra et al., 2011).
* ``"marginal"``: only scalar (bias) nodes, ``c`` integrated out: the dense GP with the
  intersection kernel of eq. (4). Its predictive moments equal those above.

The structure comes from :meth:`jbo.spaces.Space.tree` as a ``TreeStructure(leaves,
leaf_columns, nodes)`` of ``TreeNode(leaves, columns, bias)``; this module only reads those
fields, so any NamedTuples of that shape work.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax.scipy.linalg import solve_triangular

from jbo import linalg, priors
from jbo.kernels import Kernel, Matern52
from jbo.types import Surrogate

#: The four models (:func:`model_structure`).
MODES = ("tree", "tree-paper", "independent", "marginal")

#: How a leaf GP combines its own and its shared columns (:class:`TreeSpec`).
SHARED_KERNELS = ("joint", "additive", "additive+joint")

#: What the path EI takes for a leaf's value along its shared parameters (:class:`TreeSpec`).
PATH_EIS = ("linear", "shared")

#: How the prior variances of the node weights are grouped (:class:`TreeSpec`).
VARIANCES_PER = ("node", "feature", "split")


# ----------------------------------------------------------------------------- structure


def model_structure(structure, mode: str = "tree", leaf_sees_shared: bool | None = None):
    """The structure a model of ``mode`` actually uses.

    Args:
      structure: a ``TreeStructure`` (:meth:`jbo.spaces.Space.tree`).
      mode: ``"tree"`` or ``"tree-paper"`` (nodes as given), ``"independent"`` (no nodes: ``c = 0``)
        or ``"marginal"`` (every node reduced to its scalar bias ``c_v``: the paper's marginal
        baseline, which "cannot de facto be applied in presence of shared variables").
      leaf_sees_shared: add the shared columns of a leaf's path to that leaf's GP inputs. Default:
        ``False`` for ``"tree-paper"`` (shared parameters enter only through ``c_v^T r_v``, §2.4),
        ``True`` for ``"tree"`` (the shared parameters also enter each leaf's GP, non-linearly and
        differently per leaf, next to the linear node terms) and for the baselines, whose leaf
        domain then holds duplicated copies of the shared parameters (Jenatton's Fig. 3, top);
        without it they would ignore shared parameters.
    Returns:
      A structure of the same type, with empty nodes (no features) dropped.
    """
    if mode not in MODES:
        raise ValueError(f"unknown tree model {mode!r}; valid choices: {list(MODES)}")
    if leaf_sees_shared is None:
        leaf_sees_shared = mode != "tree-paper"
    leaf_columns = tuple(tuple(c) for c in structure.leaf_columns)
    if leaf_sees_shared:
        leaf_columns = tuple(
            tuple(sorted(set(cols).union(*[n.columns for n in structure.nodes if p in n.leaves])))
            for p, cols in enumerate(leaf_columns))
    if mode == "independent":
        nodes = ()
    elif mode == "marginal":
        nodes = tuple(type(n)(tuple(n.leaves), (), True) for n in structure.nodes)
    else:
        nodes = tuple(structure.nodes)
    nodes = tuple(n for n in nodes if n.leaves and (n.bias or n.columns))
    return structure._replace(leaf_columns=leaf_columns, nodes=nodes)


class _Tables(NamedTuple):
    """Static index tables of a structure (NumPy; become constants under ``jit``)."""

    leaf_cols: np.ndarray  # (P, D_max) int: column gathered into each slot
    leaf_colmask: np.ndarray  # (P, D_max) bool: slot in use
    leaf_shared: np.ndarray  # (P, D_max) bool: slot holds a shared column of the leaf's path (a node's)
    feature_cols: np.ndarray  # (d,) int: column of each feature (0 for a bias feature)
    feature_bias: np.ndarray  # (d,) bool: constant-1 feature
    feature_node: np.ndarray  # (d,) int: node of each feature
    feature_on_leaf: np.ndarray  # (P, d) bool: feature on leaf p's path


@functools.lru_cache(maxsize=64)
def _tables(structure) -> _Tables:
    num_leaves = len(structure.leaf_columns)
    width = max([1] + [len(c) for c in structure.leaf_columns])
    leaf_cols = np.zeros((num_leaves, width), np.int32)
    leaf_colmask = np.zeros((num_leaves, width), bool)
    for p, cols in enumerate(structure.leaf_columns):
        leaf_cols[p, : len(cols)] = cols
        leaf_colmask[p, : len(cols)] = True
    columns, on_leaf = structure.feature_tables()
    node = np.repeat(np.arange(len(structure.nodes)), [n.width for n in structure.nodes]).astype(np.int32)
    leaf_shared = np.zeros((num_leaves, width), bool)
    for p, leaf_columns in enumerate(structure.leaf_columns):
        shared = set().union(*[n.columns for n in structure.nodes if p in n.leaves])
        leaf_shared[p, : len(leaf_columns)] = [c in shared for c in leaf_columns]
    return _Tables(leaf_cols, leaf_colmask, leaf_shared, np.maximum(columns, 0).astype(np.int32), columns < 0, node,
                   on_leaf)


def num_features(structure) -> int:
    """``d = sum_v d_v``, the length of ``c`` (§2.4)."""
    return int(_tables(structure).feature_cols.shape[0])


def _leaf_inputs(structure, x, leaf):
    """``(m, D_max)`` inputs of leaf ``leaf``'s GP; unused slots are 0 so no kernel sees them."""
    t = _tables(structure)
    cols, colmask = jnp.asarray(t.leaf_cols)[leaf], jnp.asarray(t.leaf_colmask)[leaf]
    return jnp.where(colmask, x[..., cols], 0.0)


# ----------------------------------------------------------------------------- data


class TreeData(NamedTuple):
    """Observations grouped by leaf into padded blocks.

    Attributes:
      x: ``(P, n_pad, D)`` unit-cube rows (full rows: each leaf picks its own columns).
      y: ``(P, n_pad)`` standardised targets (zero on padded rows).
      mask: ``(P, n_pad)`` bool, ``True`` on real rows.
    """

    x: jnp.ndarray
    y: jnp.ndarray
    mask: jnp.ndarray

    @property
    def n(self):
        return jnp.sum(self.mask)


def blocks(data, leaf, num_leaves: int) -> TreeData:
    """Padded flat observations as per-leaf blocks of the same padded size (traceable).

    Every block holds all ``N_pad`` rows and masks those of other leaves, so shapes are static
    whatever the leaves' counts.

    Args:
      data: a :class:`jbo.types.Data`; leaf: ``(N_pad,)`` each row's leaf (any value on padded rows).
      num_leaves: ``P``.
    """
    mine = (leaf[None, :] == jnp.arange(num_leaves)[:, None]) & data.mask[None, :]
    x = jnp.broadcast_to(data.x, (num_leaves,) + data.x.shape)
    return TreeData(jnp.where(mine[..., None], x, 0.5), jnp.where(mine, data.y[None, :], 0.0), mine)


# ----------------------------------------------------------------------------- model


@dataclasses.dataclass(frozen=True)
class TreeSpec:
    """Static description of a tree model (hashable: jitted functions take it as a static argument).

    Attributes:
      structure: the structure actually modelled (:func:`model_structure`).
      kernel: covariance of every leaf GP (each leaf has its own params: ARD lengthscales over its
        own columns, amplitude).
      shared_kernel: how a leaf GP combines its own columns with the shared columns of its path (when
        it sees them, ``"tree"``): ``"joint"``, one ``kernel`` over all of them (interactions between
        shared and own parameters; more to learn), or ``"additive"``, :math:`g_p = g_p^{own}(x_{own})
        + g_p^{sh}(x_{sh})` with a second ``kernel`` (own amplitude and lengthscales) over the shared
        columns only: the leaf's response to its shared parameters is non-linear and its own, but
        adds to the response to its own parameters, as the paper's node terms do, so a few points of
        a leaf already locate its best region; or ``"additive+joint"``, those two plus a third
        ``kernel`` over all the leaf's columns (own amplitude and lengthscales): the additive part
        places the optimum from few points, the joint part models interactions (an own parameter's
        best value moving with a shared one) where the data show them, its amplitude fitted like
        the others. The spec's default is ``"joint"``; the ``"tree"`` model (:class:`jbo.models.Tree`) defaults
        to ``"additive+joint"``.
      path_ei: what the path EI (eq. 6, :func:`path_moments`) takes for a leaf's value along its shared
        parameters: ``"linear"`` (default), :math:`b_p + z_p^\top c` as in the paper (the leaf GP at
        its prior mean), or ``"shared"``, that plus the leaf GP's shared component :math:`g_p^{sh}`
        when the kernel is additive (the leaf's own-parameter component still at its prior mean).
        Identical unless ``shared_kernel="additive"`` and the leaf sees shared columns. ``"shared"``
        is the model-consistent reading of eq. (6) but measured worse (BENCHMARKS.md,
        ``tree_synthetic``): the linear part's optimism at the edges of the shared range is what
        keeps the two-step search visiting other leaves.
      variance_per: ``"node"``: one prior variance per inner node, shared by the node's features (a
        one-hot categorical's weights are exchangeable, and the hyperparameter count stays ``V``);
        ``"feature"``: one per feature; ``"split"``: one per node for its bias and one per shared
        feature (automatic relevance of each linear shared term). The paper only says Σ_c is
        diagonal. Without shared features ``"split"`` is ``"node"``.
      variance_loc, variance_scale: log-normal prior of those variances (on standardised targets;
        median ``exp(loc)``).
      shared_variance_loc, shared_variance_scale: log-normal prior of the variances that belong to
        shared features only (``"feature"`` and ``"split"``); ``None``: ``variance_loc`` /
        ``variance_scale``. A shrinkage prior here (small median, wide scale) keeps a linear shared
        term only where the data support one slope common to the leaves below its node: when the
        leaf GPs also model the shared parameters (``"tree"``), a weight the data do not identify
        otherwise keeps its prior spread, and eq. (6) reads that spread as promise.
      noise_scale: horseshoe scale of the shared noise variance σ².
      noise_floor: added to σ² (as in :func:`jbo.surrogates.exact_gp`).
      jitter: first Cholesky jitter of each ``M_p`` (default by dtype).
      precision_jitter: jitter of the Cholesky of the *equilibrated* (unit-diagonal) ``Λ_c``; Λ_c is
        PD by construction (its prior part Σ_c⁻¹ is), so this only guards round-off.
    """

    structure: Any
    kernel: Kernel = Matern52()
    shared_kernel: str = "joint"
    path_ei: str = "linear"
    variance_per: str = "node"
    variance_loc: float = 0.0
    variance_scale: float = 1.0
    shared_variance_loc: float | None = None
    shared_variance_scale: float | None = None
    noise_scale: float = 0.1
    noise_floor: float = 1e-6
    jitter: float | None = None
    precision_jitter: float = 1e-12

    def __post_init__(self):
        if self.variance_per not in VARIANCES_PER:
            raise ValueError(f"variance_per must be one of {list(VARIANCES_PER)}, got {self.variance_per!r}")
        if self.variance_per == "node" and (self.shared_variance_loc, self.shared_variance_scale) != (None, None):
            raise ValueError("shared_variance_loc/shared_variance_scale need variance_per='feature' or 'split': with "
                             "'node' a node's bias and shared features share one variance")
        if self.shared_kernel not in SHARED_KERNELS:
            raise ValueError(f"shared_kernel must be one of {list(SHARED_KERNELS)}, got {self.shared_kernel!r}")
        if self.path_ei not in PATH_EIS:
            raise ValueError(f"path_ei must be one of {list(PATH_EIS)}, got {self.path_ei!r}")

    @property
    def additive(self) -> bool:
        """Whether a second, additive kernel models the leaves' shared columns."""
        return self.shared_kernel in ("additive", "additive+joint") and self.sees_shared

    @property
    def sees_shared(self) -> bool:
        """Whether some leaf's GP sees a shared column of its path (the ``"tree"`` structure does, the paper's not)."""
        return bool(_tables(self.structure).leaf_shared.any())

    @property
    def interaction(self) -> bool:
        """Whether a third kernel over all of a leaf's columns models interactions (``"additive+joint"``)."""
        return self.shared_kernel == "additive+joint" and self.additive

    @property
    def num_leaves(self) -> int:
        return len(self.structure.leaf_columns)

    @property
    def num_features(self) -> int:
        return num_features(self.structure)


def _place_slots(tree, slots, total: int):
    """Every per-column array (last axis ``len(slots)``) of a kernel's params spread to ``total`` slots:
    its values at ``slots``, 1 elsewhere (slots no kernel sees)."""
    slots = np.asarray(slots, np.int32)

    def place(a):
        a = jnp.asarray(a)
        if a.ndim >= 1 and a.shape[-1] == len(slots):
            return jnp.ones(a.shape[:-1] + (total,), a.dtype).at[..., slots].set(a)
        return a

    return jax.tree_util.tree_map(place, tree)


def _node_variances(spec: TreeSpec, t: _Tables):
    """Sample the diagonal of Σ_c, ``(d,)``, grouped as ``spec.variance_per`` says (sites ``node_variance``
    and, for the variances of shared features only, ``shared_variance``)."""
    base = dist.LogNormal(spec.variance_loc, spec.variance_scale)
    if spec.variance_per == "node":
        return priors.sample("node_variance", base, (len(spec.structure.nodes),))[jnp.asarray(t.feature_node)]
    bias, shared = np.flatnonzero(t.feature_bias), np.flatnonzero(~t.feature_bias)
    parts, order = [], []
    if len(bias):
        if spec.variance_per == "split":  # one variance per node for its bias
            per_node = priors.sample("node_variance", base, (len(spec.structure.nodes),))
            parts.append(per_node[jnp.asarray(t.feature_node[bias])])
        else:
            parts.append(priors.sample("node_variance", base, (len(bias),)))
        order.append(bias)
    if len(shared):
        loc = spec.variance_loc if spec.shared_variance_loc is None else spec.shared_variance_loc
        scale = spec.variance_scale if spec.shared_variance_scale is None else spec.shared_variance_scale
        parts.append(priors.sample("shared_variance", dist.LogNormal(loc, scale), (len(shared),)))
        order.append(shared)
    # Back to feature order: position k of the concatenation holds feature order[k].
    return jnp.concatenate(parts)[jnp.asarray(np.argsort(np.concatenate(order)))]


def prior(spec: TreeSpec, data=None):
    """numpyro prior of every hyperparameter (the Surrogate's ``prior``).

    Sites: ``leaf{p}/...`` the kernel params of leaf ``p`` (over its own columns; a leaf without
    columns draws one unused lengthscale so that every leaf has the same params structure),
    with ``shared_kernel="additive"`` ``leaf{p}/shared/...`` those of its shared-column kernel (``leaf{p}/...``
    then covers the other columns), with ``"additive+joint"`` also ``leaf{p}/joint/...`` those of the
    kernel over all its columns, ``offset`` ``(P,)`` the leaf means ``b_p``, ``noise`` the shared
    σ², and (unless ``d = 0``) ``node_variance`` ``(V,)`` or ``(d,)``, the diagonal of Σ_c.

    Returns:
      ``{"kernel": params stacked over leaves (slots padded to D_max), "offset", "noise",
      "variance": (d,) per-feature prior variance}``, plus ``"shared_kernel"`` (same layout) when additive
      and ``"joint_kernel"`` with ``"additive+joint"``.
    """
    t = _tables(spec.structure)
    total = t.leaf_cols.shape[1]

    def stacked(prefix, use):
        leaf_params = []
        for p in range(spec.num_leaves):
            slots = np.flatnonzero(use[p]) if use[p].any() else np.zeros(1, np.int32)
            leaf_params.append(_place_slots(spec.kernel.sample_params(len(slots), prefix=f"leaf{p}/{prefix}"),
                                            slots, total))
        return jax.tree_util.tree_map(lambda *a: jnp.stack(a), *leaf_params)

    if spec.additive:
        kernel_params = stacked("", t.leaf_colmask & ~t.leaf_shared)
        shared_params = stacked("shared/", t.leaf_shared)
    else:
        kernel_params = stacked("", t.leaf_colmask)
    params = {
        "kernel": kernel_params,
        "offset": priors.sample("offset", priors.mean_prior(), (spec.num_leaves,)),
        "noise": numpyro.sample("noise", priors.noise_prior(spec.noise_scale)),
    }
    d = spec.num_features
    if d:
        params["variance"] = _node_variances(spec, t)
    if spec.additive:
        params["shared_kernel"] = shared_params
    if spec.interaction:
        params["joint_kernel"] = stacked("joint/", t.leaf_colmask)
    return params


class TreePosterior(NamedTuple):
    """Per-sample factorisations (``condition``'s output).

    Attributes:
      params, data: the hyperparameters and the blocks conditioned on.
      factor: ``(P, n, n)`` lower Cholesky factors ``L_p`` of ``M_p`` (identity on padded rows).
      alpha: ``(P, n)`` ``M_p^{-1} r_p``.
      residual: ``(P, n)`` whitened residuals ``L_p^{-1} r_p``.
      features: ``(P, n, d)`` whitened features ``L_p^{-1} Z_p``.
      precision_factor: ``(d, d)`` lower Cholesky factor of Λ_c.
      weight_mean: ``(d,)`` posterior mean of ``c``, ``Λ_c^{-1} f_c``.
      weight_rhs: ``(d,)`` ``f_c``.
    """

    params: Any
    data: TreeData
    factor: jnp.ndarray
    alpha: jnp.ndarray
    residual: jnp.ndarray
    features: jnp.ndarray
    precision_factor: jnp.ndarray
    weight_mean: jnp.ndarray
    weight_rhs: jnp.ndarray


def _leaf_params(params, leaf, part="kernel"):
    return jax.tree_util.tree_map(lambda a: a[leaf], params[part])


def _parts(spec: TreeSpec, leaf):
    """``[(params key, slot mask (D_max,))]`` of the kernels that sum to leaf ``leaf``'s covariance."""
    if not spec.additive:
        return [("kernel", None)]
    t = _tables(spec.structure)
    shared = jnp.asarray(t.leaf_shared)[leaf]
    parts = [("kernel", ~shared), ("shared_kernel", shared)]
    if spec.interaction:
        parts.append(("joint_kernel", jnp.asarray(t.leaf_colmask)[leaf]))
    return parts


def _leaf_gram(spec: TreeSpec, params, leaf, x1, x2):
    """Covariance of leaf ``leaf``'s GP between leaf inputs ``x1`` ``(m, D_max)`` and ``x2``: ``kernel``
    over all its slots, or (additive) ``kernel`` over its own slots plus a second kernel over its shared
    slots (zero for a leaf without shared columns), plus (``"additive+joint"``) a third over all its slots
    (also zero for a leaf without shared columns)."""
    total = 0.0
    for part, slots in _parts(spec, leaf):
        kparams = _leaf_params(params, leaf, part)
        if slots is None:
            total = total + spec.kernel.gram(kparams, x1, x2)
            continue
        gram = spec.kernel.gram(kparams, jnp.where(slots, x1, 0.0), jnp.where(slots, x2, 0.0))
        total = total + (gram if part == "kernel" else jnp.where(_has_shared(spec, leaf), gram, 0.0))
    return total


def _leaf_diag(spec: TreeSpec, params, leaf, x):
    """``k_p(x_i, x_i)`` of :func:`_leaf_gram`."""
    total = 0.0
    for part, slots in _parts(spec, leaf):
        kparams = _leaf_params(params, leaf, part)
        diag = spec.kernel.diag(kparams, x if slots is None else jnp.where(slots, x, 0.0))
        total = total + (diag if part == "kernel" else jnp.where(_has_shared(spec, leaf), diag, 0.0))
    return total


def _has_shared(spec: TreeSpec, leaf):
    """Whether leaf ``leaf`` sees a shared column (else its shared and joint kernels are off)."""
    return jnp.any(jnp.asarray(_tables(spec.structure).leaf_shared)[leaf])


def condition(spec: TreeSpec, params, data: TreeData) -> TreePosterior:
    """Factorise every ``M_p`` and Λ_c (§2.2) in ``O(d^3 + Σ_p n_pad^3)``.

    Args:
      spec: the model.
      params: hyperparameters (:func:`prior`'s return value).
      data: padded per-leaf blocks.
    Returns:
      A :class:`TreePosterior`.
    """
    structure = spec.structure
    dtype = data.y.dtype
    jitter = linalg.default_jitter(dtype) if spec.jitter is None else spec.jitter
    noise = params["noise"] + spec.noise_floor
    leaves = jnp.arange(spec.num_leaves)

    def leaf_factor(x, mask, p):
        xl = _leaf_inputs(structure, x, p)
        both = mask[:, None] & mask[None, :]
        gram = jnp.where(both, _leaf_gram(spec, params, p, xl, xl), 0.0)
        return linalg.cholesky(gram + jnp.diag(jnp.where(mask, noise, 1.0)), jitter)

    factor = jax.vmap(leaf_factor)(data.x, data.mask, leaves)
    lower = jax.vmap(functools.partial(solve_triangular, lower=True))
    upper = jax.vmap(functools.partial(solve_triangular, lower=True, trans=1))
    r = jnp.where(data.mask, data.y - params["offset"][:, None], 0.0)
    residual = lower(factor, r)
    alpha = upper(factor, residual)
    d = spec.num_features
    if d == 0:
        empty = jnp.zeros((0,), dtype)
        return TreePosterior(params, data, factor, alpha, residual, jnp.zeros(data.y.shape + (0,), dtype),
                             jnp.zeros((0, 0), dtype), empty, empty)
    z = jax.vmap(lambda x, mask, p: jnp.where(mask[:, None], structure.features(x, p, jnp), 0.0))(
        data.x, data.mask, leaves)
    features = lower(factor, z)
    precision = jnp.diag(1.0 / params["variance"]) + jnp.einsum("pnd,pne->de", features, features)
    rhs = jnp.einsum("pnd,pn->d", features, residual)
    # Λ_c mixes 1/σ_c² with n_p/σ² (up to ~1e6 apart): factorise its unit-diagonal rescaling
    # (Jacobi equilibration), where an absolute jitter means the same thing for every entry.
    scale = jnp.sqrt(jnp.diag(precision))
    unit = linalg.cholesky(precision / (scale[:, None] * scale[None, :]), spec.precision_jitter)
    precision_factor = scale[:, None] * unit
    weight_mean = linalg.cho_solve(precision_factor, rhs)
    return TreePosterior(params, data, factor, alpha, residual, features, precision_factor, weight_mean, rhs)


def log_marginal_likelihood(spec: TreeSpec, params, data: TreeData):
    """``log p(y)`` of eq. (3) (see the module docstring), ``-inf`` where a factorisation fails.

    Padded rows add exactly nothing: their factor is ``sqrt(1 + jitter)`` on the diagonal and their
    log-determinant terms are masked out.
    """
    post = condition(spec, params, data)
    diag = jnp.diagonal(post.factor, axis1=-2, axis2=-1)
    n = jnp.sum(data.mask)
    value = (-0.5 * jnp.sum(post.residual**2) - jnp.sum(jnp.where(data.mask, jnp.log(diag), 0.0))
             - 0.5 * n * math.log(2.0 * math.pi))
    if spec.num_features:
        w = solve_triangular(post.precision_factor, post.weight_rhs, lower=True)
        value = (value + 0.5 * jnp.sum(w**2) - jnp.sum(jnp.log(jnp.diag(post.precision_factor)))
                 - 0.5 * jnp.sum(jnp.log(params["variance"])))
    return jnp.where(jnp.isfinite(value), value, -jnp.inf)


class _LeafTerms(NamedTuple):
    mean: jnp.ndarray  # (m,) b_p + k^T M^{-1} r (the GP part, c not yet added)
    whitened_cross: jnp.ndarray  # (n, m) L_p^{-1} k_p(x)
    inputs: jnp.ndarray  # (m, D_max) the leaf GP's inputs
    t: jnp.ndarray  # (m, d) t_p(x) = z_p(x) - Z_p^T M_p^{-1} k_p(x)


def _leaf_terms(spec: TreeSpec, post: TreePosterior, x, leaf) -> _LeafTerms:
    structure = spec.structure
    xs, mask = post.data.x[leaf], post.data.mask[leaf]
    xl = _leaf_inputs(structure, x, leaf)
    cross = jnp.where(mask[:, None], _leaf_gram(spec, post.params, leaf, _leaf_inputs(structure, xs, leaf), xl), 0.0)
    mean = post.params["offset"][leaf] + cross.T @ post.alpha[leaf]
    v = solve_triangular(post.factor[leaf], cross, lower=True)
    t = structure.features(x, leaf, jnp) - v.T @ post.features[leaf]
    return _LeafTerms(mean, v, xl, t)


def predict_leaf(spec: TreeSpec, post: TreePosterior, x, leaf):
    r"""Predictive mean and variance of :math:`g_p(x) + z_p(x)^\top c` at leaf ``leaf`` (§3.2).

    Args:
      spec: the model; post: a :class:`TreePosterior`.
      x: ``(m, D)`` unit-cube rows, all read as points of leaf ``leaf``.
      leaf: leaf index (may be traced).
    Returns:
      ``(mean (m,), var (m,))``, noise excluded.
    """
    terms = _leaf_terms(spec, post, x, leaf)
    mean = terms.mean + terms.t @ post.weight_mean
    var = _leaf_diag(spec, post.params, leaf, terms.inputs) - jnp.sum(terms.whitened_cross**2, 0)
    if spec.num_features:
        w = solve_triangular(post.precision_factor, terms.t.T, lower=True)
        var = var + jnp.sum(w**2, 0)
    return mean, jnp.maximum(var, 1e-12)


def predict(spec: TreeSpec, leaf_of: Callable, post: TreePosterior, x):
    """Predictive mean and variance at rows of any leaves (each row's leaf from ``leaf_of(x)``).

    Computes every leaf's terms and keeps each row's own (``P`` times the work of
    :func:`predict_leaf`, which the acquisition uses when the leaf is known).
    """
    leaf = leaf_of(x)
    terms = jax.vmap(lambda p: _leaf_terms(spec, post, x, p))(jnp.arange(spec.num_leaves))
    rows = jnp.arange(x.shape[0])
    mean = terms.mean[leaf, rows]
    prior_var = jax.vmap(lambda p: _leaf_diag(spec, post.params, p, terms.inputs[p]))(
        jnp.arange(spec.num_leaves))
    var = prior_var[leaf, rows] - jnp.sum(terms.whitened_cross**2, 1)[leaf, rows]
    if spec.num_features:
        t = terms.t[leaf, rows]
        mean = mean + t @ post.weight_mean
        w = solve_triangular(post.precision_factor, t.T, lower=True)
        var = var + jnp.sum(w**2, 0)
    return mean, jnp.maximum(var, 1e-12)


def predict_joint(spec: TreeSpec, leaf_of: Callable, post: TreePosterior, x):
    r"""Joint predictive mean ``(m,)`` and covariance ``(m, m)`` (:math:`\tilde S` of §3.2; rows of
    different leaves covary through ``c`` only)."""
    leaf = leaf_of(x)
    leaves = jnp.arange(spec.num_leaves)

    def per_leaf(p):
        terms = _leaf_terms(spec, post, x, p)
        gram = _leaf_gram(spec, post.params, p, terms.inputs, terms.inputs)
        return terms.mean, gram - terms.whitened_cross.T @ terms.whitened_cross, terms.t

    means, covs, ts = jax.vmap(per_leaf)(leaves)
    rows = jnp.arange(x.shape[0])
    mean = means[leaf, rows]
    cov = jnp.where(leaf[:, None] == leaf[None, :], covs[leaf[:, None], rows[:, None], rows[None, :]], 0.0)
    if spec.num_features:
        t = ts[leaf, rows]
        mean = mean + t @ post.weight_mean
        w = solve_triangular(post.precision_factor, t.T, lower=True)
        cov = cov + w.T @ w
    return mean, cov


def fantasize(spec: TreeSpec, leaf_of: Callable, post: TreePosterior, x, mask=None, y=None) -> TreePosterior:
    """Condition also on ``x`` ``(q, D)`` observed at ``y`` (default: its predictive mean, the kriging believer).

    Every leaf block grows by ``q`` rows; row ``j`` is real in block ``p`` iff ``mask[j]`` and
    ``x[j]`` belongs to leaf ``p``, so shapes stay static.
    """
    mask = jnp.ones(x.shape[0], bool) if mask is None else mask
    mean = predict(spec, leaf_of, post, x)[0] if y is None else y
    data, num = post.data, spec.num_leaves
    extended = TreeData(
        jnp.concatenate([data.x, jnp.broadcast_to(x.astype(data.x.dtype), (num,) + x.shape)], 1),
        jnp.concatenate([data.y, jnp.broadcast_to(mean.astype(data.y.dtype), (num, x.shape[0]))], 1),
        jnp.concatenate([data.mask, (leaf_of(x)[None, :] == jnp.arange(num)[:, None]) & mask[None, :]], 1),
    )
    return condition(spec, post.params, extended)


def tree_gp(spec: TreeSpec, leaf_of: Callable, name: str = "tree") -> Surrogate:
    """The tree model as a :class:`~jbo.types.Surrogate` over :class:`TreeData`.

    Args:
      spec: the model (:class:`TreeSpec`).
      leaf_of: jnp function ``(m, D) -> (m,)`` giving the leaf of unit-cube rows (:class:`jbo.models.tree.LeafDecoder`).
      name: the model's name (one of :data:`MODES`).
    Returns:
      A Surrogate whose ``data`` is a :class:`TreeData`; ``infer`` samples its hyperparameters as any other.
    """
    return Surrogate(
        name=name,
        prior=lambda data: prior(spec, data),
        log_likelihood=lambda params, data: log_marginal_likelihood(spec, params, data),
        condition=lambda params, data: condition(spec, params, data),
        predict=lambda post, x: predict(spec, leaf_of, post, x),
        fantasize=lambda post, x, mask=None, y=None: fantasize(spec, leaf_of, post, x, mask, y),
        predict_joint=lambda post, x: predict_joint(spec, leaf_of, post, x),
    )


def path_moments(spec: TreeSpec, post: TreePosterior, x, leaf):
    r"""Mean and variance of a leaf's value along its shared parameters, the quantity of the path EI (eq. 6).

    The paper's :math:`h_p(x) = b_p + z_p(x)^\top c` under the posterior of ``c`` (the leaf's GP at
    its prior mean). With an additive leaf kernel and ``spec.path_ei == "shared"``, :math:`h_p` also
    holds the leaf GP's shared component, :math:`h_p = b_p + z_p^\top c + g_p^{sh}(x_{sh})`: the
    leaf's response to its shared parameters is then what the model says it is, curved and its own,
    instead of its linear part alone (whose slope, next to a shared GP component, need not mean
    anything), while the leaf's own parameters stay at the prior mean as in eq. (6). Its moments are
    those of :func:`predict_leaf` with the shared kernel in place of the leaf kernel (the posterior
    covariance of :math:`g_p^{sh}` and ``c`` included), and reduce to the paper's where the leaf has
    no shared column.

    Only the shared columns of ``x`` on ``leaf``'s path matter.
    Returns ``(mean (m,), var (m,))``.
    """
    z = spec.structure.features(x, leaf, jnp)
    mean = post.params["offset"][leaf]
    var = jnp.zeros(x.shape[:-1], x.dtype)
    if spec.additive and spec.path_ei == "shared":
        shared = jnp.asarray(_tables(spec.structure).leaf_shared)[leaf]
        kparams = _leaf_params(post.params, leaf, "shared_kernel")
        xs, mask = post.data.x[leaf], post.data.mask[leaf]
        xl = jnp.where(shared, _leaf_inputs(spec.structure, x, leaf), 0.0)
        xsl = jnp.where(shared, _leaf_inputs(spec.structure, xs, leaf), 0.0)
        has = jnp.any(shared)
        cross = jnp.where(mask[:, None] & has, spec.kernel.gram(kparams, xsl, xl), 0.0)
        v = solve_triangular(post.factor[leaf], cross, lower=True)
        mean = mean + cross.T @ post.alpha[leaf]
        var = jnp.where(has, spec.kernel.diag(kparams, xl), 0.0) - jnp.sum(v**2, 0)
        if spec.num_features:
            z = z - v.T @ post.features[leaf]
    mean = mean + z @ post.weight_mean
    if spec.num_features:
        w = solve_triangular(post.precision_factor, z.T, lower=True)
        var = var + jnp.sum(w**2, 0)
    return mean, jnp.maximum(var, 0.0)
