"""Hyperparameter inference: MAP, NUTS and slice sampling behind one signature.

``infer(key, surrogate, data, method, previous) -> Samples`` returns ``S`` hyperparameter samples
stacked along a leading axis (``S = 1`` for MAP): the constrained params PyTree the surrogate's
``condition`` takes, and the flat unconstrained vectors that warm-start the next call.

All three methods act on the same numpyro model (``surrogate.prior`` plus a factor holding
``surrogate.log_likelihood``) through :func:`numpyro.infer.util.potential_energy`, i.e. on the
unconstrained parametrisation with its log-Jacobian; inference is separate from the model. The whole
chain (or optimisation) runs inside one ``jax.jit`` with the data as an argument, so the same padded
shape never recompiles (``numpyro.infer.MCMC.run`` would recompile on every call).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import optax
from jax.flatten_util import ravel_pytree
from numpyro.infer import NUTS
from numpyro.infer.util import constrain_fn, potential_energy, unconstrain_fn

from jbo import elliptical
from jbo import slice as slice_sampling
from jbo.types import Data, Samples, Start, Surrogate

METHODS = ("slice", "elliptical", "nuts", "map")


def joint_model(surrogate: Surrogate):
    """The numpyro model ``prior + factor(log_likelihood)`` of a surrogate."""

    def model(data: Data):
        params = surrogate.prior(data)
        numpyro.factor("log_likelihood", surrogate.log_likelihood(params, data))
        return params

    return model


class _Flat(NamedTuple):
    """Flat unconstrained view of a surrogate's posterior for one data shape."""

    logdensity: Any  # (P,) -> scalar
    to_params: Any  # (P,) -> constrained params PyTree
    unravel: Any
    size: int


def _prior_sites(surrogate: Surrogate, data, key) -> dict:
    """One prior draw of every hyperparameter site, unconstrained (a dict of arrays)."""
    prior_only = lambda d: surrogate.prior(d)
    trace = numpyro.handlers.trace(numpyro.handlers.seed(prior_only, key)).get_trace(data)
    sites = {name: s["value"] for name, s in trace.items() if s["type"] == "sample" and not s["is_observed"]}
    return unconstrain_fn(prior_only, (data,), {}, sites)


def _abstract(tree):
    return jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(jnp.shape(a), jnp.result_type(a)), tree)


def _flat_view(surrogate: Surrogate, data) -> _Flat:
    """The flat view of a surrogate's posterior on ``data`` (traceable: ``data`` may be a tracer).

    The layout of the flat vector comes from the shapes of a prior draw (``jax.eval_shape``), so no
    sampling code enters the programs that only evaluate the density.
    """
    model = joint_model(surrogate)
    prior_only = lambda d: surrogate.prior(d)
    shapes = jax.eval_shape(lambda k, d: _prior_sites(surrogate, d, k), jax.random.key(0), _abstract(data))
    flat, unravel = ravel_pytree(jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), shapes))

    def logdensity(z):
        value = -potential_energy(model, (data,), {}, unravel(z))
        return jnp.where(jnp.isnan(value), -jnp.inf, value)

    def to_params(z):
        constrained = constrain_fn(prior_only, (data,), {}, unravel(z))
        return numpyro.handlers.substitute(prior_only, data=constrained)(data)

    return _Flat(logdensity, to_params, unravel, flat.shape[0])


def prior_draw(key, surrogate: Surrogate, data) -> jnp.ndarray:
    """``(P,)`` one unconstrained draw from the prior (the flat layout of :func:`_flat_view`)."""
    return ravel_pytree(_prior_sites(surrogate, data, key))[0]


def prior_draws(key, surrogate: Surrogate, data, num: int) -> jnp.ndarray:
    """``(num, P)`` unconstrained draws from the prior."""
    return jax.vmap(lambda k: prior_draw(k, surrogate, data))(jax.random.split(key, num))


def _finalize(flat: _Flat, zs, log_density, info, mode=None) -> Samples:
    return Samples(jax.vmap(flat.to_params)(zs), zs, log_density, info, mode)


def _initial(key, surrogate, data, init_z):
    return _flat_view(surrogate, data), (prior_draw(key, surrogate, data) if init_z is None else init_z)


def _slice_chain(key, flat: _Flat, z, num_warmup, *, num_samples: int, thin: int, width: float,
                 max_steps_out: int, max_shrink: int):
    """``num_warmup`` (may be traced) discarded sweeps, then ``num_samples`` kept every ``thin``.

    One ``fori_loop`` whose trip count is an array: the cold start (a long burn-in) and the warm
    start (a few sweeps) are the same compiled program. Sweep ``t`` uses ``fold_in(key, t)``.
    """
    sweep = functools.partial(slice_sampling.sweep, logdensity_fn=flat.logdensity, widths=width,
                              max_steps_out=max_steps_out, max_shrink=max_shrink)
    num_warmup = jnp.asarray(num_warmup, jnp.int32)
    chain = jnp.zeros((num_samples,) + z.shape, z.dtype)
    logps = jnp.zeros((num_samples,), z.dtype)

    def body(t, carry):
        z, logp, evals, stalled, chain, logps = carry
        z, logp, info = sweep(jax.random.fold_in(key, t), z, logp)
        kept = t - num_warmup + 1  # sweeps since the burn-in, this one included
        keep = (kept > 0) & (kept % thin == 0)
        index = jnp.clip(kept // thin - 1, 0, num_samples - 1)
        chain = chain.at[index].set(jnp.where(keep, z, chain[index]))
        logps = logps.at[index].set(jnp.where(keep, logp, logps[index]))
        return z, logp, evals + info.num_evals, stalled + info.num_stalled, chain, logps

    # logp = nan: the first coordinate update evaluates the start itself (one copy of the density in
    # the compiled program instead of two).
    carry = (z, jnp.asarray(jnp.nan, z.dtype), 0, 0, chain, logps)
    total = num_warmup + num_samples * thin
    _, _, evals, stalled, chain, logps = jax.lax.fori_loop(0, total, body, carry)
    return _finalize(flat, chain, logps, {"num_evals": evals, "num_stalled": stalled})


def _elliptical_chain(key, flat: _Flat, z, reference, num_warmup, *, num_samples: int, thin: int,
                      max_shrink: int = 100):
    """Elliptical slice sampling (:mod:`jbo.elliptical`) from ``z`` against ``reference``: ``num_warmup`` (may be
    traced) discarded steps, then ``num_samples`` kept every ``thin``. Step ``t`` uses ``fold_in(key, t)``."""
    num_warmup = jnp.asarray(num_warmup, jnp.int32)
    chain = jnp.zeros((num_samples,) + z.shape, z.dtype)
    logps = jnp.zeros((num_samples,), z.dtype)

    def body(t, carry):
        z, log_f, evals, stalled, chain, logps = carry
        z, log_f, info = elliptical.step(jax.random.fold_in(key, t), z, log_f, flat.logdensity, reference,
                                         max_shrink)
        kept = t - num_warmup + 1
        keep = (kept > 0) & (kept % thin == 0)
        index = jnp.clip(kept // thin - 1, 0, num_samples - 1)
        chain = chain.at[index].set(jnp.where(keep, z, chain[index]))
        logps = logps.at[index].set(jnp.where(keep, log_f + reference.log_density(z), logps[index]))
        return z, log_f, evals + info.num_evals, stalled + info.stalled.astype(jnp.int32), chain, logps

    carry = (z, jnp.asarray(jnp.nan, z.dtype), 0, 0, chain, logps)
    total = num_warmup + num_samples * thin
    _, _, evals, stalled, chain, logps = jax.lax.fori_loop(0, total, body, carry)
    return chain, logps, evals, stalled


def _scaled_map_fit(flat: _Flat, z, scale, restarts, first, **options):
    """:func:`_map_fit` from ``z`` in the coordinates ``(z' - z) / scale``, ``scale`` the previous fit's Laplace
    standard deviations (ones where ``first``), returning its estimate in the original coordinates and the Laplace
    standard deviations there (:func:`jbo.elliptical.laplace`, for the next fit) as ``info["reference_scale"]``.

    L-BFGS's memory starts empty at every fit, so its first steps are only as good as the problem's scaling; a GP's
    hyperparameters have curvatures spanning orders of magnitude, in the previous fit's units about one."""
    scale = jnp.where(first, 1.0, scale)
    centred = _Flat(lambda u: flat.logdensity(z + scale * u), lambda u: flat.to_params(z + scale * u),
                    flat.unravel, flat.size)
    found = _map_fit(centred, jnp.zeros_like(z), (restarts - z) / scale, first, **options)
    best = z + scale * found.z[0]
    info = {**found.info, "reference_scale": elliptical.laplace(flat.logdensity, best).scale}
    return _finalize(flat, best[None], found.log_density, info)


def _elliptical_fit(key, flat: _Flat, z, mode, restarts, first, num_warmup, *, num_samples: int, thin: int,
                    scale=None):
    """The posterior's mode by L-BFGS from ``mode`` (the previous fit's, so that the reference never depends on
    the chain; where ``first``, also from ``restarts``; in the previous reference's units, :func:`_scaled_map_fit`),
    its Laplace approximation as the reference, and elliptical slice sampling from ``z`` (from the mode where
    ``first``)."""
    scale = jnp.ones_like(mode) if scale is None else scale
    found = _scaled_map_fit(flat, mode, scale, restarts, first, max_iter=100, tol=1e-5)
    mode = found.z[0]
    reference = elliptical.Reference(mode, found.info["reference_scale"])
    z = jnp.where(first, mode, z)
    chain, logps, evals, stalled = _elliptical_chain(key, flat, z, reference, num_warmup, num_samples=num_samples,
                                                     thin=thin)
    return _finalize(flat, chain, logps, {"num_evals": evals, "num_stalled": stalled,
                                          "num_iter": jnp.sum(found.info["num_iter"]),
                                          "reference_scale": reference.scale}, mode)


@functools.partial(jax.jit, static_argnames=("surrogate", "num_samples", "thin", "num_restarts"))
def elliptical_sample(key, surrogate: Surrogate, data: Data, init_z=None, *, num_samples: int = 10,
                      num_warmup: int = 10, thin: int = 1, num_restarts: int = 4) -> Samples:
    """Elliptical slice sampling of the hyperparameters against the Laplace approximation at their posterior's
    mode (:mod:`jbo.elliptical`).

    Args:
      key: PRNG key.
      surrogate, data: the model and the padded observations.
      init_z: ``(P,)`` where the search for the mode and the chain start (a prior draw when ``None``; the search
        also starts from ``num_restarts`` prior draws).
      num_samples: ``S``; num_warmup: steps discarded first (an array: no recompilation); thin: steps between
        kept samples.
    Returns:
      :class:`Samples` with its ``mode`` and ``info = {"num_evals", "num_stalled", "num_iter"}``.
    """
    init_key, key = jax.random.split(key)
    flat, z = _initial(init_key, surrogate, data, init_z)
    restarts = prior_draws(jax.random.fold_in(init_key, 1), surrogate, data, num_restarts)
    return _elliptical_fit(key, flat, z, z, restarts, jnp.asarray(True), num_warmup, num_samples=num_samples,
                           thin=thin)


def parallel_chains_by_default() -> bool:
    """Whether independent chains run side by side (``vmap``) rather than one after another (``lax.map``).

    Side by side on accelerators, where one chain's small Cholesky factorisations leave the device mostly
    idle; one after another on a CPU, where batching them buys nothing (every lane waits for the slowest
    slice update) and a batched while-loop around a Cholesky deadlocked XLA's CPU runtime (see
    :func:`_map_fit`).
    """
    return jax.default_backend() != "cpu"


def _slice_chains(key, flat: _Flat, zs, num_warmup, *, num_samples: int, parallel: bool | None = None, **options):
    """``C = len(zs)`` independent chains (:func:`_slice_chain`), ``num_samples // C`` samples each.

    Chain ``c`` starts from ``zs[c]`` with key ``fold_in(key, c)``; its samples are rows
    ``c·S/C … (c+1)·S/C - 1`` of the result, so :func:`next_start` finds each chain's last sample.
    """
    num_chains = zs.shape[0]
    run = lambda c, z: _slice_chain(jax.random.fold_in(key, c), flat, z, num_warmup,
                                    num_samples=num_samples // num_chains, **options)
    indices = jnp.arange(num_chains)
    parallel = parallel_chains_by_default() if parallel is None else parallel
    chains = jax.vmap(run)(indices, zs) if parallel else jax.lax.map(lambda a: run(*a), (indices, zs))
    merge = lambda a: a.reshape((-1,) + a.shape[2:])
    return Samples(jax.tree_util.tree_map(merge, chains.params), merge(chains.z), merge(chains.log_density),
                   jax.tree_util.tree_map(lambda a: jnp.sum(a, axis=0), chains.info))


def next_start(samples: Samples, config: "InferenceConfig"):
    """Where the next fit starts: the last of the samples ``(S, P)`` of one chain, ``(P,)``; the last sample of each
    of ``num_chains`` chains (:func:`_slice_chains`' layout), ``(C, P)``; for elliptical slice sampling the last
    sample, the mode and the reference's scale, ``(3, P)``; for MAP the estimate and its scale, ``(2, P)``."""
    zs, num_chains = samples.z, config.num_chains
    if config.method == "elliptical":
        return jnp.stack([zs[-1], samples.mode, samples.info["reference_scale"]])
    if config.method == "map":
        return jnp.stack([zs[-1], samples.info["reference_scale"]])
    if num_chains == 1:
        return zs[-1]
    return zs.reshape((num_chains, -1) + zs.shape[1:])[:, -1]


@functools.partial(jax.jit, static_argnames=("surrogate", "num_samples", "thin", "width", "max_steps_out",
                                             "max_shrink", "num_chains", "parallel"))
def slice_sample(key, surrogate: Surrogate, data: Data, init_z=None, *, num_samples: int = 10,
                 num_warmup: int = 10, thin: int = 1, width: float = 1.0, max_steps_out: int = 10,
                 max_shrink: int = 50, num_chains: int = 1, parallel: bool | None = None) -> Samples:
    """Univariate slice sampling of the hyperparameters (Neal 2003; as in Snoek et al. 2012).

    Args:
      key: PRNG key.
      surrogate: the model.
      data: padded observations.
      init_z: ``(P,)`` unconstrained starting point (e.g. the last sample of the previous call), or
        ``(C, P)``, one per chain; prior draws when ``None``.
      num_samples: ``S``, samples returned (all chains together).
      num_warmup: sweeps discarded first by every chain (burn-in); an array argument, so changing it
        does not recompile.
      thin: sweeps between returned samples.
      width, max_steps_out, max_shrink: see :func:`jbo.slice.update_coordinate`.
      num_chains: ``C`` independent chains of ``S / C`` samples each (``C`` must divide ``S``); with
        ``C > 1`` a ``(P,)`` ``init_z`` starts every chain.
      parallel: run the chains side by side (``vmap``) or one after another; ``None``:
        :func:`parallel_chains_by_default`.
    Returns:
      :class:`Samples` with ``info = {"num_evals", "num_stalled"}`` summed over all sweeps and chains.
    """
    init_key, key = jax.random.split(key)
    options = dict(thin=thin, width=width, max_steps_out=max_steps_out, max_shrink=max_shrink)
    if num_chains == 1:
        flat, z = _initial(init_key, surrogate, data, init_z)
        return _slice_chain(key, flat, z, num_warmup, num_samples=num_samples, **options)
    _check_chains(num_samples, num_chains)
    flat = _flat_view(surrogate, data)
    zs = (prior_draws(init_key, surrogate, data, num_chains) if init_z is None else
          jnp.broadcast_to(init_z, (num_chains, flat.size)))
    return _slice_chains(key, flat, zs, num_warmup, num_samples=num_samples, parallel=parallel, **options)


def _check_chains(num_samples: int, num_chains: int) -> None:
    if num_samples % num_chains:
        raise ValueError(f"num_chains ({num_chains}) must divide num_samples ({num_samples})")


@functools.partial(jax.jit, static_argnames=("surrogate", "num_samples", "num_warmup", "thin",
                                             "max_tree_depth", "target_accept_prob"))
def nuts_sample(key, surrogate: Surrogate, data: Data, init_z=None, *, num_samples: int = 10,
                num_warmup: int = 100, thin: int = 1, max_tree_depth: int = 6,
                target_accept_prob: float = 0.8) -> Samples:
    """NUTS (numpyro's kernel, driven by our own ``lax.scan`` inside one ``jit``).

    Args:
      key: PRNG key.
      surrogate, data: the model and the padded observations.
      init_z: ``(P,)`` unconstrained starting point; a prior draw when ``None``.
      num_samples: ``S``; num_warmup: step-size and mass-matrix adaptation steps; thin: steps between
        returned samples.
      max_tree_depth: cap on NUTS doublings (``2**depth`` gradient evaluations per step).
      target_accept_prob: dual-averaging target.
    Returns:
      :class:`Samples` with ``info = {"num_divergent", "mean_accept_prob"}``.
    """
    init_key, key = jax.random.split(key)
    flat, z = _initial(init_key, surrogate, data, init_z)
    kernel = NUTS(potential_fn=lambda v: -flat.logdensity(v), max_tree_depth=max_tree_depth,
                  target_accept_prob=target_accept_prob)
    key, k0 = jax.random.split(key)
    state = kernel.init(k0, num_warmup, z, (), {})
    step = lambda s, _: (kernel.sample(s, (), {}), None)
    state, _ = jax.lax.scan(step, state, None, length=num_warmup)

    def collect(state, _):
        state, _ = jax.lax.scan(step, state, None, length=thin)
        return state, (state.z, state.diverging, state.accept_prob, state.potential_energy)

    _, (zs, diverging, accept, energy) = jax.lax.scan(collect, state, None, length=num_samples)
    return _finalize(flat, zs, -energy, {"num_divergent": jnp.sum(diverging), "mean_accept_prob": jnp.mean(accept)})


def _map_fit(flat: _Flat, z, restarts, restart, *, max_iter: int, tol: float) -> Samples:
    """L-BFGS from ``z`` and, where ``restart`` (may be traced), from each row of ``restarts``.

    The restarts are always part of the program; when ``restart`` is false their iteration limit is
    0, so a warm start (refine the last estimate) and a cold one (explore prior draws) compile once.
    """
    starts = jnp.concatenate([z[None], restarts])
    limits = jnp.concatenate([jnp.full((1,), max_iter), jnp.where(restart, max_iter, 0) * jnp.ones(len(restarts), int)])
    loss = lambda z: -flat.logdensity(z)
    solver = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(loss)

    def optimise(start):
        z, limit = start

        def cond(carry):
            _, state, it = carry
            grad = optax.tree.get(state, "grad")
            value = optax.tree.get(state, "value")
            converged = (it > 0) & ((optax.tree.norm(grad) <= tol * (1.0 + jnp.abs(value))) | ~jnp.isfinite(value))
            return (it < limit) & ~converged

        def body(carry):
            z, state, it = carry
            value, grad = value_and_grad(z, state=state)
            updates, state = solver.update(grad, state, z, value=value, grad=grad, value_fn=loss)
            z_new = optax.apply_updates(z, updates)
            # A failed line search can step into a non-finite region: stay put then.
            z_new = jnp.where(jnp.all(jnp.isfinite(z_new)), z_new, z)
            return z_new, state, it + 1

        z, _, it = jax.lax.while_loop(cond, body, (z, solver.init(z), 0))
        return z, it

    # One start after another (``lax.map``): under ``vmap`` this batched while-loop of L-BFGS with a
    # Cholesky inside deadlocked XLA's CPU runtime (jax 0.10.2, N >= 96), and on a CPU batching buys
    # nothing anyway.
    finals, iters = jax.lax.map(optimise, (starts, limits))
    scores = jax.vmap(flat.logdensity)(finals)
    scores = jnp.where(jnp.isfinite(scores) & (limits > 0), scores, -jnp.inf)
    best = finals[jnp.argmax(scores)][None]
    return _finalize(flat, best, jnp.max(scores)[None], {"num_iter": iters, "log_density_per_start": scores})


@functools.partial(jax.jit, static_argnames=("surrogate", "num_restarts", "max_iter"))
def map_estimate(key, surrogate: Surrogate, data: Data, init_z=None, *, num_restarts: int = 4,
                 max_iter: int = 100, tol: float = 1e-5) -> Samples:
    """Maximum a posteriori hyperparameters by L-BFGS (optax) from several starts.

    The starts are ``init_z`` (the previous estimate; a prior draw when ``None``) and
    ``num_restarts`` further prior draws; the best final log posterior wins.

    Args:
      key: PRNG key.
      surrogate, data: the model and the padded observations.
      init_z: ``(P,)`` warm start.
      num_restarts: number of prior draws started from besides ``init_z``.
      max_iter: L-BFGS iterations at most; tol: stop once ``‖∇‖ ≤ tol (1 + |log p|)`` (relative, so
        large data sets do not iterate on round-off).
    Returns:
      :class:`Samples` with ``S = 1`` and ``info = {"num_iter", "log_density_per_start"}``.
    """
    init_key, key = jax.random.split(key)
    flat, z0 = _initial(init_key, surrogate, data, init_z)
    restarts = prior_draws(key, surrogate, data, num_restarts)
    return _map_fit(flat, z0, restarts, True, max_iter=max_iter, tol=tol)


class InferenceConfig(NamedTuple):
    """How a model's hyperparameters are inferred at every suggestion (static: hashable).

    Attributes:
      method: ``"slice"`` (default, as in Snoek et al. 2012), ``"elliptical"`` (elliptical slice sampling against
        the Laplace approximation at the posterior's mode, found by L-BFGS from the previous mode: all
        hyperparameters move at once, :mod:`jbo.elliptical`), ``"nuts"`` or ``"map"`` (L-BFGS from the last
        estimate, in its Laplace approximation's units: :func:`_scaled_map_fit`).
      num_samples: samples ``S`` kept per suggestion (MCMC methods).
      num_burnin: sweeps/steps discarded on the first fit (chain started from the prior).
      num_warmup: sweeps/steps discarded on later fits (chain warm-started from the last sample).
      thin: MCMC steps between kept samples.
      map_restarts: prior draws the first MAP fit (and the first search for the mode of ``"elliptical"``) also
        starts from (later fits refine the last estimate).
      num_chains: slice sampling only: ``C`` independent chains of ``S / C`` samples each, every chain
        warm-started from its own last sample (:func:`slice_sample`); side by side on accelerators.
    """

    method: str = "slice"
    num_samples: int = 10
    num_burnin: int = 50
    num_warmup: int = 5
    thin: int = 1
    map_restarts: int = 4
    num_chains: int = 1

    def validate(self) -> "InferenceConfig":
        """The config itself, or a ``ValueError`` naming the invalid field."""
        if self.method not in METHODS:
            raise ValueError(f"unknown inference {self.method!r}; valid choices: {list(METHODS)}")
        for field, low in (("num_samples", 1), ("thin", 1), ("map_restarts", 0), ("num_burnin", 0),
                           ("num_warmup", 0), ("num_chains", 1)):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"{field} must be an integer >= {low}, got {value!r}")
        if self.num_chains > 1:
            if self.method != "slice":
                raise ValueError(f"num_chains > 1 applies to inference='slice', got inference={self.method!r}")
            _check_chains(self.num_samples, self.num_chains)
        return self


def num_params(surrogate: Surrogate, data) -> int:
    """Length ``P`` of the flat unconstrained hyperparameter vector of ``surrogate`` on data shaped
    like ``data`` (a :class:`Data`, or whatever the surrogate conditions on; only shapes are read)."""
    shape = jax.eval_shape(lambda k, d: prior_draw(k, surrogate, d), jax.random.key(0), _abstract(data))
    return int(shape.shape[-1])


def to_params(surrogate: Surrogate, data):
    """``z (P,) -> params``: the constrained params PyTree of a flat unconstrained vector."""
    return _flat_view(surrogate, data).to_params


def example_data(dim: int, dtype=jnp.float64) -> Data:
    """A one-row :class:`Data` of dimension ``dim`` (for shapes, e.g. :func:`num_params`)."""
    return Data(jnp.zeros((1, dim), dtype), jnp.zeros((1,), dtype), jnp.ones((1,), bool))


def cold_start(key, surrogate: Surrogate, data, config: InferenceConfig) -> Start:
    """The prior draws a run's first fit starts from (``data``: any data of the right shapes)."""
    k_z, k_restarts = jax.random.split(key)
    num = config.map_restarts if config.method == "map" else 0
    if config.method == "elliptical":  # the chain's position, the mode the next search starts from, its units
        draw = prior_draw(k_z, surrogate, data)
        z = jnp.stack([draw, draw, jnp.ones_like(draw)])
        num = config.map_restarts
    elif config.method == "map":  # the estimate the next search starts from, its units
        draw = prior_draw(k_z, surrogate, data)
        z = jnp.stack([draw, jnp.ones_like(draw)])
    elif config.num_chains == 1:
        z = prior_draw(k_z, surrogate, data)
    else:
        z = prior_draws(k_z, surrogate, data, config.num_chains)
    return Start(z, prior_draws(k_restarts, surrogate, data, num))


def fit(key, surrogate: Surrogate, data, config: InferenceConfig, start: Start, first) -> Samples:
    """Hyperparameter samples for one suggestion, cold or warm in one traceable program.

    The chain (or the MAP search) starts from ``start.z``: a prior draw before the first fit, the
    last sample afterwards (``(C, P)``, one per chain, with ``config.num_chains = C > 1``; the next fit
    starts from :func:`next_start` of the samples). Where ``first`` (may be traced) ``num_burnin`` sweeps are discarded (MAP:
    the search also starts from ``start.restarts``), otherwise ``num_warmup``. Slice sampling and MAP
    take these counts as arrays, so both cases are one compiled loop; NUTS adapts its step size over
    a static number of steps and compiles both branches of a ``lax.cond``.

    Args:
      key: PRNG key.
      surrogate: the model; data: padded observations.
      config: the method and its sizes.
      start: see :class:`Start` (:func:`cold_start` for a run's first fit).
      first: bool scalar.
    Returns:
      :class:`Samples` (``S = num_samples``; 1 for MAP).
    """
    flat = _flat_view(surrogate, data)
    z = start.z.astype(data_dtype(data))
    if config.method == "slice":
        num_warmup = jnp.where(first, config.num_burnin, config.num_warmup)
        options = dict(num_samples=config.num_samples, thin=config.thin, width=1.0, max_steps_out=10, max_shrink=50)
        if config.num_chains > 1:
            return _slice_chains(key, flat, z, num_warmup, **options)
        return _slice_chain(key, flat, z, num_warmup, **options)
    if config.method == "elliptical":
        num_warmup = jnp.where(first, config.num_burnin, config.num_warmup)
        return _elliptical_fit(key, flat, z[0], z[1], start.restarts.astype(z.dtype), first, num_warmup,
                               num_samples=config.num_samples, thin=config.thin, scale=z[2])
    if config.method == "map":
        return _scaled_map_fit(flat, z[0], z[1], start.restarts.astype(z.dtype), first, max_iter=100, tol=1e-5)
    options = dict(num_samples=config.num_samples, thin=config.thin)
    cold = lambda: nuts_sample(key, surrogate, data, z, num_warmup=config.num_burnin, **options)
    warm = lambda: nuts_sample(key, surrogate, data, z, num_warmup=config.num_warmup, **options)
    return jax.lax.cond(first, cold, warm)


def data_dtype(data):
    """The floating dtype of a data PyTree (its first floating leaf)."""
    for leaf in jax.tree_util.tree_leaves(data):
        if jnp.issubdtype(jnp.result_type(leaf), jnp.floating):
            return jnp.result_type(leaf)
    return jnp.result_type(float)


def infer(key, surrogate: Surrogate, data: Data, method: str = "slice", previous: Samples | jnp.ndarray | None = None,
          **options) -> Samples:
    """Hyperparameter samples by ``method`` (``"slice"``, ``"nuts"`` or ``"map"``), warm-started.

    Args:
      key: PRNG key.
      surrogate: the model.
      data: padded observations.
      method: inference method.
      previous: the last call's samples (or just an unconstrained ``(P,)`` vector, e.g. their
        ``z[-1]``); its last sample starts the new chain (or the MAP search, which then makes no
        restarts unless ``num_restarts`` says otherwise).
      **options: keyword options of :func:`slice_sample`, :func:`nuts_sample` or :func:`map_estimate`.
    Returns:
      :class:`Samples`.
    """
    if method not in METHODS:
        raise ValueError(f"unknown inference {method!r}; valid choices: {list(METHODS)}")
    init_z = None if previous is None else (previous.z[-1] if isinstance(previous, Samples) else jnp.asarray(previous))
    if method == "map" and previous is not None:
        options.setdefault("num_restarts", 0)  # refine the last estimate, as the BO loop does
    fn = {"slice": slice_sample, "elliptical": elliptical_sample, "nuts": nuts_sample, "map": map_estimate}[method]
    return fn(key, surrogate, data, init_z, **options)
