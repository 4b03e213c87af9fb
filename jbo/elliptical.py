r"""Elliptical slice sampling against a Gaussian reference (Murray, Adams & MacKay 2010; Nishihara, Murray &
Adams 2014, §2), and the reference of a posterior's mode (a Laplace approximation).

Any density can be written :math:`\pi(z) = \mathcal{N}(z; \mu, \Sigma)\, f(z)` with
:math:`f = \pi / \mathcal{N}(\cdot; \mu, \Sigma)`. One step of elliptical slice sampling moves every coordinate
of :math:`z` at once along the ellipse through :math:`z` and an auxiliary draw
:math:`\nu \sim \mathcal{N}(0, \Sigma)`:

1. the slice height :math:`\log y = \log f(z) + \log u`, :math:`u \sim U(0, 1)`;
2. an angle :math:`\theta \sim U(0, 2\pi)` and the bracket :math:`[\theta - 2\pi, \theta]`;
3. :math:`z' = \mu + (z - \mu)\cos\theta + \nu \sin\theta`; accept if :math:`\log f(z') > \log y`, else
   shrink the bracket towards 0 on the side of :math:`\theta` and draw :math:`\theta` again.

The step leaves :math:`\pi` invariant for any reference that does not depend on the chain; it is efficient
where the reference is close to :math:`\pi`, and then costs a few density evaluations for all coordinates
together, where a sweep of univariate slice updates (:mod:`jbo.slice`) costs several per coordinate.
:func:`laplace` builds the reference from a mode of :math:`\pi`: the inverse of the negative Hessian's diagonal
there, inflated (a Laplace approximation is too narrow in heavy tails; a wider reference only costs shrinkage
steps).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp


class Reference(NamedTuple):
    r"""The Gaussian :math:`\mathcal{N}(\mu, \mathrm{diag}(s^2))`: ``mean`` and standard deviations ``scale``,
    both ``(P,)``."""

    mean: jnp.ndarray
    scale: jnp.ndarray

    def log_density(self, z):
        """Log density up to a constant."""
        return -0.5 * jnp.sum(((z - self.mean) / self.scale) ** 2)

    def draw(self, key, dtype):
        r"""A draw of the centred Gaussian :math:`\mathcal{N}(0, \mathrm{diag}(s^2))`."""
        return self.scale * jax.random.normal(key, self.mean.shape, dtype)


class EllipticalInfo(NamedTuple):
    """Diagnostics of one step: density evaluations, and whether the shrink cap was hit (the point kept)."""

    num_evals: jnp.ndarray
    stalled: jnp.ndarray


def laplace(logdensity_fn: Callable, mode, inflation: float = 1.5, min_curvature: float = 1e-2,
            max_curvature: float = 1e8, step_size: float = 1e-3) -> Reference:
    r"""A diagonal Laplace approximation of a density at ``mode``, widened: standard deviations
    :math:`c / \sqrt{-\partial_i^2 \log\pi}`.

    The curvatures are central second differences, :math:`2P + 1` evaluations of the density and no
    differentiation (a Hessian-vector product through a GP's likelihood costs many evaluations). A diagonal
    reference ignores the posterior's correlations, which costs shrinkage steps, not exactness. Curvatures are
    clipped to ``[min_curvature, max_curvature]`` (a flat or non-concave direction, a mode not quite reached,
    gets a standard deviation of at most 10 unconstrained units times ``c``).

    Args:
      logdensity_fn: ``(P,) -> scalar``; mode: ``(P,)`` where to expand it.
      inflation: ``c``.
      step_size: the differences' step ``h`` (unconstrained units).
    """
    size = mode.shape[0]
    centre = logdensity_fn(mode)

    def second_difference(i):
        shift = jnp.zeros_like(mode).at[i].set(step_size)
        return (logdensity_fn(mode + shift) - 2 * centre + logdensity_fn(mode - shift)) / step_size**2

    curvature = -jax.lax.map(second_difference, jnp.arange(size))
    curvature = jnp.where(jnp.isfinite(curvature), curvature, 0.0)
    curvature = jnp.clip(curvature, min_curvature, max_curvature)
    return Reference(mode, inflation / jnp.sqrt(curvature))


def step(key, z, log_f, logdensity_fn: Callable, reference: Reference, max_shrink: int = 100):
    """One elliptical slice step of ``logdensity_fn`` against ``reference``.

    Args:
      key: PRNG key.
      z: ``(P,)`` current point; ``log_f``: ``logdensity_fn(z) - reference.log_density(z)``, or ``nan`` when
        unknown (evaluated first).
      logdensity_fn: ``(P,) -> scalar`` unnormalised log density (``nan`` is ``-inf``).
      reference: the Gaussian (:class:`Reference`).
      max_shrink: cap on the angles drawn; reaching it keeps ``z`` (a valid, if lazy, move).
    Returns:
      ``(z, log_f, EllipticalInfo)``.
    """
    k_nu, k_height, k_angle = jax.random.split(key, 3)

    def log_factor(point):
        value = jnp.asarray(logdensity_fn(point), z.dtype)
        value = jnp.where(jnp.isnan(value), -jnp.inf, value)
        return value - reference.log_density(point)

    known = ~jnp.isnan(log_f)
    log_f = jnp.where(known, log_f, log_factor(z))
    evals = jnp.where(known, 0, 1)
    nu = reference.draw(k_nu, z.dtype)
    log_y = log_f + jnp.log(jax.random.uniform(k_height, dtype=z.dtype))
    theta = 2 * jnp.pi * jax.random.uniform(k_angle, dtype=z.dtype)
    centred = z - reference.mean

    def propose(theta):
        return reference.mean + centred * jnp.cos(theta) + nu * jnp.sin(theta)

    def cond(state):
        _, _, _, _, accepted, tries = state
        return ~accepted & (tries < max_shrink)

    def body(state):
        theta, low, high, _, _, tries = state
        value = log_factor(propose(theta))
        accepted = value > log_y
        low = jnp.where(~accepted & (theta < 0), theta, low)
        high = jnp.where(~accepted & (theta >= 0), theta, high)
        draw = low + (high - low) * jax.random.uniform(jax.random.fold_in(k_angle, tries + 1), dtype=z.dtype)
        return jnp.where(accepted, theta, draw), low, high, value, accepted, tries + 1

    init = (theta, theta - 2 * jnp.pi, theta, log_f, jnp.asarray(False), jnp.asarray(0))
    theta, _, _, value, accepted, tries = jax.lax.while_loop(cond, body, init)
    z_new = jnp.where(accepted, propose(theta), z)
    return z_new, jnp.where(accepted, value, log_f), EllipticalInfo(evals + tries, ~accepted)
