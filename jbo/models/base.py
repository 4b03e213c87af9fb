"""The surrogate contract every model in jbo implements."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple


class Surrogate(NamedTuple):
    """A probabilistic surrogate as a tuple of pure functions.

    Attributes:
      name: short name (``"gp"``, ...).
      prior: numpyro model fragment ``prior(data) -> params``: samples every hyperparameter as a
        site and returns them as the params PyTree that ``condition`` takes (``data`` gives shapes).
      log_likelihood: ``log_likelihood(params, data) -> scalar``, the marginal likelihood. Prior plus
        this is the log joint that MAP maximises and the samplers sample
        (:func:`jbo.inference.joint_model`).
      condition: ``condition(params, data) -> posterior``, the per-sample work (a Cholesky
        factorisation, say) done once before the acquisition is evaluated many times.
      predict: ``predict(posterior, x) -> (mean, var)`` of the latent function at ``x`` ``(m, D)``,
        both ``(m,)``, on the standardised scale, noise excluded.
      fantasize: ``fantasize(posterior, x, mask) -> posterior`` conditioned on extra points ``x``
        (rows where ``mask``) at their own predictive mean (the kriging believer), for pending
        evaluations.
      predict_joint: ``predict_joint(posterior, x) -> (mean (m,), cov (m, m))``, for Thompson sampling.
    """

    name: str
    prior: Callable[[Any], Any]
    log_likelihood: Callable[[Any, Any], Any]
    condition: Callable[[Any, Any], Any]
    predict: Callable[[Any, Any], tuple[Any, Any]]
    fantasize: Callable[..., Any]
    predict_joint: Callable[[Any, Any], tuple[Any, Any]]
