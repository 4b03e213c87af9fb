r"""Univariate slice sampling with stepping out and shrinkage (Neal, 2003, §4, Figs. 3 and 5).

One *sweep* updates each coordinate of the unconstrained parameter vector in a random order. For
coordinate :math:`i` with current value :math:`x_0`:

1. draw the slice height :math:`\log y = \log p(x_0) - e`, :math:`e \sim \mathrm{Exp}(1)`;
2. place an interval of width :math:`w_i` at random around :math:`x_0` and step it out by
   :math:`w_i` on each side while the end is still above the slice, at most ``max_steps_out`` steps
   in all (the steps are split at random between the two sides, Neal's Fig. 3);
3. draw uniformly from the interval, shrinking it towards :math:`x_0` after every rejection (Fig. 5).

Shrinkage ends in finitely many steps in exact arithmetic, but a density that is ``nan``, has a
spike, or is flat below round-off can make the interval collapse onto :math:`x_0` (the classic
"slice shrank to zero" error of other implementations). Here shrinkage is capped at
``max_shrink`` draws; a capped update keeps :math:`x_0` (still a valid, if lazy, Markov move) and is
counted in :attr:`SliceInfo.num_stalled` instead of raising.

:func:`sweep` is the pure functional core. :class:`SliceSampler` wraps it as a
``numpyro.infer.mcmc.MCMCKernel`` so it also runs under ``numpyro.infer.MCMC`` like NUTS.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree
from numpyro.infer.mcmc import MCMCKernel
from numpyro.infer.util import initialize_model, potential_energy


class SliceInfo(NamedTuple):
    """Diagnostics of one sweep: log-density evaluations and updates that hit the shrink cap."""

    num_evals: jnp.ndarray
    num_stalled: jnp.ndarray


def _safe(logdensity_fn):
    def fn(z):
        # In z's dtype: with float64 enabled, a float32 model's prior terms built from Python floats
        # come back as float64, which the sampler's loops would not carry.
        value = jnp.asarray(logdensity_fn(z), z.dtype)
        return jnp.where(jnp.isnan(value), -jnp.inf, value)

    return fn


def update_coordinate(key, z, logp, i, logdensity_fn, width, max_steps_out: int = 10, max_shrink: int = 50):
    """One univariate slice-sampling update of ``z[i]`` (Neal 2003, Figs. 3 and 5).

    Stepping out to the left, to the right and shrinkage are written as the three phases of a single
    ``while_loop`` that evaluates the density once per iteration, so the compiled program holds one
    copy of ``logdensity_fn`` rather than five.

    Args:
      key: PRNG key.
      z: ``(P,)`` current point; ``logp`` its log density, or ``nan`` when unknown: the loop then
        evaluates it first (so a chain needs no second copy of the density for its start).
      i: coordinate to update (may be traced).
      logdensity_fn: ``(P,) -> scalar`` unnormalised log density (``nan`` is treated as ``-inf``).
      width: initial interval width ``w``.
      max_steps_out: ``m``, the cap on stepping-out steps.
      max_shrink: cap on shrinkage draws; reaching it keeps ``z`` unchanged.
    Returns:
      ``(z, logp, num_evals, stalled)``.
    """
    logdensity_fn = _safe(logdensity_fn)
    k_height, k_place, k_split, k_shrink = jax.random.split(key, 4)
    x0 = z[i]
    drop = jax.random.exponential(k_height, dtype=z.dtype)
    left = x0 - width * jax.random.uniform(k_place, dtype=z.dtype)
    steps_left = jnp.floor(max_steps_out * jax.random.uniform(k_split, dtype=z.dtype)).astype(jnp.int32)
    steps_right = max_steps_out - 1 - steps_left
    CURRENT, STEP_LEFT, STEP_RIGHT, SHRINK, DONE = -1, 0, 1, 2, 3

    def cond(state):
        return state[0] != DONE

    def body(state):
        phase, left, right, steps_left, steps_right, _, _, tries, evals, logp, log_y = state
        u = jax.random.uniform(jax.random.fold_in(k_shrink, tries), dtype=z.dtype)
        point = jnp.select([phase == CURRENT, phase == STEP_LEFT, phase == STEP_RIGHT], [x0, left, right],
                           left + u * (right - left))
        fx = logdensity_fn(z.at[i].set(point))
        # The density at x0, when the caller did not know it, sets the slice height.
        logp = jnp.where(phase == CURRENT, fx, logp)
        log_y = jnp.where(phase == CURRENT, fx - drop, log_y)
        above = fx > log_y
        # Stepping out: move the end out while it is above the slice and steps remain.
        grow_left = (phase == STEP_LEFT) & above & (steps_left > 0)
        grow_right = (phase == STEP_RIGHT) & above & (steps_right > 0)
        # Shrinkage: a rejected draw becomes the new end on its side of x0.
        shrinking = phase == SHRINK
        rejected = shrinking & ~above
        left = jnp.where(grow_left, left - width, jnp.where(rejected & (point < x0), point, left))
        right = jnp.where(grow_right, right + width, jnp.where(rejected & (point >= x0), point, right))
        tries = tries + shrinking.astype(tries.dtype)
        next_phase = jnp.select(
            [phase == CURRENT, phase == STEP_LEFT, phase == STEP_RIGHT],
            [STEP_LEFT, jnp.where(grow_left, STEP_LEFT, STEP_RIGHT), jnp.where(grow_right, STEP_RIGHT, SHRINK)],
            jnp.where(above | (tries >= max_shrink), DONE, SHRINK),
        )
        return (next_phase, left, right, steps_left - grow_left, steps_right - grow_right, point, fx, tries,
                evals + 1, logp, log_y)

    known = ~jnp.isnan(logp)
    init = (jnp.where(known, STEP_LEFT, CURRENT), left, left + width, steps_left, steps_right, x0, logp,
            jnp.asarray(0), jnp.asarray(0), logp, logp - drop)
    _, _, _, _, _, x, fx, tries, evals, logp, log_y = jax.lax.while_loop(cond, body, init)
    accepted = fx > log_y
    z_new = jnp.where(accepted, z.at[i].set(x), z)
    logp_new = jnp.where(accepted, fx, logp)
    return z_new, logp_new, evals, ~accepted


def sweep(key, z, logp, logdensity_fn: Callable, widths, max_steps_out: int = 10, max_shrink: int = 50):
    """Update every coordinate of ``z`` once, in a random order.

    Args:
      key: PRNG key.
      z: ``(P,)`` current point (unconstrained).
      logp: ``logdensity_fn(z)``.
      logdensity_fn: unnormalised log density of a flat ``(P,)`` vector.
      widths: ``(P,)`` or scalar initial interval widths.
      max_steps_out, max_shrink: see :func:`update_coordinate`.
    Returns:
      ``(z, logp, SliceInfo)``.
    """
    widths = jnp.broadcast_to(jnp.asarray(widths, z.dtype), z.shape)
    k_perm, k_updates = jax.random.split(key)
    order = jax.random.permutation(k_perm, z.shape[0])

    def body(t, carry):
        z, logp, evals, stalled = carry
        i = order[t]
        z, logp, n, s = update_coordinate(
            jax.random.fold_in(k_updates, t), z, logp, i, logdensity_fn, widths[i], max_steps_out, max_shrink
        )
        return z, logp, evals + n, stalled + s.astype(jnp.int32)

    z, logp, evals, stalled = jax.lax.fori_loop(0, z.shape[0], body, (z, logp, 0, 0))
    return z, logp, SliceInfo(evals, stalled)


class SliceState(NamedTuple):
    """State of :class:`SliceSampler`: ``z`` is the unconstrained sample (a dict of sites)."""

    i: jnp.ndarray
    z: dict
    potential_energy: jnp.ndarray
    num_evals: jnp.ndarray
    num_stalled: jnp.ndarray
    rng_key: jnp.ndarray


class SliceSampler(MCMCKernel):
    """Univariate slice sampler as a numpyro ``MCMCKernel`` (numpyro ships none).

    Each ``sample`` call is one :func:`sweep` over all coordinates. Use it like NUTS::

        mcmc = numpyro.infer.MCMC(SliceSampler(model), num_warmup=100, num_samples=500)
        mcmc.run(key, *model_args)

    Args:
      model: a numpyro model (or give ``potential_fn`` and pass ``init_params`` to ``init``).
      potential_fn: negative log density of the unconstrained params.
      width: initial interval width (unconstrained units).
      max_steps_out, max_shrink: caps of :func:`update_coordinate`.
    """

    sample_field = "z"

    def __init__(self, model=None, potential_fn=None, width: float = 1.0, max_steps_out: int = 10,
                 max_shrink: int = 50):
        if (model is None) == (potential_fn is None):
            raise ValueError("give exactly one of model and potential_fn")
        self._model = model
        self._potential_fn = potential_fn
        self._width = width
        self._max_steps_out = max_steps_out
        self._max_shrink = max_shrink
        self._postprocess_fn = None

    @property
    def model(self):
        return self._model

    def _potential(self, model_args, model_kwargs):
        if self._potential_fn is not None:
            return self._potential_fn
        return lambda z: potential_energy(self._model, model_args, model_kwargs, z)

    def init(self, rng_key, num_warmup, init_params, model_args, model_kwargs):
        rng_key, init_key = jax.random.split(rng_key)
        if self._model is not None:
            info = initialize_model(init_key, self._model, model_args=model_args, model_kwargs=model_kwargs,
                                    dynamic_args=True)
            self._postprocess_fn = info.postprocess_fn
            if init_params is None:
                init_params = info.param_info.z
        elif init_params is None:
            raise ValueError("init_params is required with potential_fn")
        pe = self._potential(model_args, model_kwargs)(init_params)
        zero = jnp.zeros((), jnp.int32)
        return SliceState(zero, init_params, pe, zero, zero, rng_key)

    def postprocess_fn(self, args, kwargs):
        if self._postprocess_fn is None:
            return lambda z: z
        return self._postprocess_fn(*args, **kwargs)

    def sample(self, state, model_args, model_kwargs):
        flat, unravel = ravel_pytree(state.z)
        potential = self._potential(model_args, model_kwargs)
        logdensity = lambda v: -potential(unravel(v))
        key, sweep_key = jax.random.split(state.rng_key)
        flat, logp, info = sweep(sweep_key, flat, -state.potential_energy, logdensity, self._width,
                                 self._max_steps_out, self._max_shrink)
        return SliceState(state.i + 1, unravel(flat), -logp, state.num_evals + info.num_evals,
                          state.num_stalled + info.num_stalled, key)
