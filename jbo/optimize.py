"""Acquisition maximisation inside the unit cube: anchors -> top-k -> jitted, vmapped Adam.

The recipe of Oh et al. (2018, BOCK §3.3): evaluate the acquisition on a fresh scrambled Sobol set
(plus, optionally, points near the best observations), keep the ``top_k`` best as starting points,
and run projected Adam on all of them at once; the best point visited wins. BOCK used 20 000
anchors, the top 20, learning rate 0.01 and up to 500 steps; jbo's defaults are smaller because a
GP's predictive variance costs ``O(N^2)`` per anchor (see :class:`MaximizeConfig`).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax


class MaximizeConfig(NamedTuple):
    r"""Sizes of the acquisition search (hashable: it is a static argument of the jitted step).

    Attributes:
      num_anchors: scrambled Sobol points scored per suggestion.
      num_local: extra anchors drawn around the best observations (Gaussian, clipped to the cube).
      local_scale: standard deviation of those perturbations (unit-cube units).
      top_k: anchors refined by Adam.
      num_steps: Adam steps.
      learning_rate: Adam step size (unit-cube units).
      screen: when positive and smaller than the anchors, the anchors are first scored under one hyperparameter
        sample and only the ``screen`` best are scored under all of them (a model's integrated score costs one
        prediction per sample and anchor); ``0``: every anchor under every sample.
      schedule: Adam's step size over the steps, one of :data:`SCHEDULES`: ``"constant"`` (``learning_rate``
        throughout) or ``"cosine"`` (from ``learning_rate`` down to zero along a half cosine, Loshchilov & Hutter
        2017): the iterates then settle on their local optimum instead of circling it at the step size.
      eps: Adam's :math:`\epsilon` (Kingma & Ba 2015, Algorithm 1): a step is :math:`\eta\,\hat m / (\sqrt{\hat
        v} + \epsilon)`, about :math:`\eta` per coordinate whatever the gradient's size while
        :math:`|g| \gg \epsilon` and proportional to the gradient below, so that a larger :math:`\epsilon`
        slows the iterates down where the score is flat (``experiments/bock_rounding.py`` measures it
        against round-off in BOCK's search).
    """

    num_anchors: int = 1024
    num_local: int = 256
    local_scale: float = 0.05
    top_k: int = 10
    num_steps: int = 100
    learning_rate: float = 0.01
    screen: int = 0
    schedule: str = "constant"
    eps: float = 1e-8


#: Step-size schedules of the acquisition search (:attr:`MaximizeConfig.schedule`).
SCHEDULES = ("constant", "cosine")


def step_sizes(learning_rate: float, num_steps: int, schedule: str = "constant"):
    """Adam's step size: a constant, or an optax schedule over ``num_steps`` steps (:attr:`MaximizeConfig.schedule`)."""
    if schedule == "constant":
        return learning_rate
    if schedule == "cosine":
        return optax.cosine_decay_schedule(learning_rate, max(int(num_steps), 1))
    raise ValueError(f"maximize.schedule must be one of {list(SCHEDULES)}, got {schedule!r}")


def local_anchors(rng: np.random.Generator, x_best: np.ndarray, num: int, scale: float) -> np.ndarray:
    """``num`` points scattered around the rows of ``x_best`` (clipped to the unit cube)."""
    if num == 0 or len(x_best) == 0:
        return np.zeros((0, x_best.shape[-1]))
    centres = x_best[rng.integers(0, len(x_best), size=num)]
    return np.clip(centres + scale * rng.standard_normal(centres.shape), 0.0, 1.0)


def maximize(score_fn: Callable, anchors, top_k: int = 10, num_steps: int = 100, learning_rate: float = 0.01,
             bounds=None, screen: tuple[Callable, int] | None = None, schedule: str = "constant", eps: float = 1e-8):
    """Maximise ``score_fn`` over the unit cube (or the box ``bounds``) from the best of ``anchors``.

    Traceable (call it inside your own ``jit``). Called outside ``jit`` with a score that is a
    :class:`jax.tree_util.Partial` (what :func:`jbo.acquisition.integrate` returns), it runs a
    compiled program that the next call reuses as long as the shapes and the Partial's functions are
    the same: the score's arrays are arguments, not constants baked into the program.

    Args:
      score_fn: pure ``(m, D) -> (m,)`` function of a batch of unit-cube points (the points must be
        scored independently: the gradient of the sum is then the per-point gradient).
      anchors: ``(A, D)`` candidate starting points.
      top_k: number of anchors refined.
      num_steps: projected Adam steps.
      learning_rate: Adam step size.
      bounds: ``(lower (D,), upper (D,))`` the steps are projected onto (the anchors should lie in it), or
        ``None``: the unit cube.
      screen: ``(cheap_score_fn, keep)``: only the ``keep`` anchors best under ``cheap_score_fn`` are scored by
        ``score_fn`` (:attr:`MaximizeConfig.screen`), or ``None``.
      schedule: Adam's step-size schedule (:attr:`MaximizeConfig.schedule`).
      eps: Adam's epsilon (:attr:`MaximizeConfig.eps`).
    Returns:
      ``(x, score)``: the best point visited ``(D,)`` and its score.
    """
    if isinstance(score_fn, jax.tree_util.Partial) and not isinstance(anchors, jax.core.Tracer) and screen is None:
        return _maximize_compiled(score_fn, anchors, top_k=top_k, num_steps=num_steps, learning_rate=learning_rate,
                                  bounds=bounds, schedule=schedule, eps=eps)
    return _maximize(score_fn, anchors, top_k, num_steps, learning_rate, bounds, screen, schedule, eps)


def _maximize(score_fn: Callable, anchors, top_k: int, num_steps: int, learning_rate: float, bounds=None,
              screen=None, schedule: str = "constant", eps: float = 1e-8):
    lower, upper = (0.0, 1.0) if bounds is None else bounds
    if screen is not None and 0 < screen[1] < anchors.shape[0]:
        cheap = screen[0](anchors)
        _, kept = jax.lax.top_k(jnp.where(jnp.isnan(cheap), -jnp.inf, cheap), screen[1])
        anchors = anchors[kept]
    anchor_scores = score_fn(anchors)
    anchor_scores = jnp.where(jnp.isnan(anchor_scores), -jnp.inf, anchor_scores)
    top_scores, top_idx = jax.lax.top_k(anchor_scores, min(top_k, anchors.shape[0]))
    starts = anchors[top_idx]
    if num_steps == 0:
        return starts[0], top_scores[0]

    optimizer = optax.adam(step_sizes(learning_rate, num_steps, schedule), eps=eps)

    def negative_total(x):
        scores = score_fn(x)
        return -jnp.sum(jnp.where(jnp.isfinite(scores), scores, 0.0)), scores

    value_and_grad = jax.value_and_grad(negative_total, has_aux=True)

    def track(best_x, best_s, x, s):
        improved = s > best_s
        return jnp.where(improved[:, None], x, best_x), jnp.where(improved, s, best_s)

    def step(carry, _):
        x, opt_state, best_x, best_s = carry
        (_, s), grad = value_and_grad(x)  # scores of x before this step
        best_x, best_s = track(best_x, best_s, x, s)
        grad = jnp.where(jnp.isfinite(grad), grad, 0.0)
        updates, opt_state = optimizer.update(grad, opt_state, x)
        x = jnp.clip(optax.apply_updates(x, updates), lower, upper)
        return (x, opt_state, best_x, best_s), None

    # One iteration more than there are steps: its scores are those of the last point (the update it
    # computes is dropped), so the program needs no separate copy of the score for that point.
    carry = (starts, optimizer.init(starts), starts, top_scores)
    (_, _, best_x, best_s), _ = jax.lax.scan(step, carry, None, length=num_steps + 1)
    i = jnp.argmax(best_s)
    return best_x[i], best_s[i]


_maximize_compiled = jax.jit(_maximize, static_argnames=("top_k", "num_steps", "learning_rate", "schedule", "eps"))
