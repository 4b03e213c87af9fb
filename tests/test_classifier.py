"""Constraint classifiers against independent NumPy/SciPy computations."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import scipy.optimize
import scipy.stats
from scipy.special import expit

from jbo import kernels
from jbo.data import pad_data
from jbo.models import classifier

# The classifiers' maths as the loop runs it, compiled: one program per function instead of one per primitive.
laplace_logistic, logistic_predict = jax.jit(classifier.laplace_logistic), jax.jit(classifier.logistic_predict)
classifier_condition, classifier_predict = (jax.jit(f, static_argnums=0) for f in (classifier.classifier_condition,
                                                                                   classifier.classifier_predict))
log_probability = jax.jit(classifier.log_probability, static_argnums=2)


def compiled(surrogate):
    """``(condition, predict, log_likelihood)`` of ``surrogate``, each compiled."""
    return jax.jit(surrogate.condition), jax.jit(surrogate.predict), jax.jit(surrogate.log_likelihood)


def probit_probability(mean, var):
    return expit(mean / np.sqrt(1 + np.pi * var / 8))


def test_laplace_logistic_matches_scipy():
    rng = np.random.default_rng(0)
    phi = rng.normal(size=(40, 4))
    labels = (phi @ np.array([1.5, -2.0, 0.5, 0.0]) + 0.3 * rng.normal(size=40) > 0).astype(float)
    alpha = 0.8

    def negative_log_posterior(w):
        f = phi @ w
        return -np.sum(labels * np.log(expit(f)) + (1 - labels) * np.log(expit(-f))) + 0.5 * alpha * w @ w

    w = scipy.optimize.minimize(negative_log_posterior, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).x
    p = expit(phi @ w)
    hessian = (phi * (p * (1 - p))[:, None]).T @ phi + alpha * np.eye(4)
    query = rng.normal(size=(6, 4))
    mean, var = query @ w, np.einsum("ij,jk,ik->i", query, np.linalg.inv(hessian), query)
    # padded rows (mask False) change nothing
    padded_phi = np.vstack([phi, rng.normal(size=(5, 4))])
    padded_labels, mask = np.append(labels, np.ones(5)), np.arange(45) < 40
    post = laplace_logistic(jnp.asarray(padded_phi), jnp.asarray(padded_labels), jnp.asarray(mask), alpha)
    np.testing.assert_allclose(post.mean, w, rtol=1e-5, atol=1e-6)
    m, v = logistic_predict(post, jnp.asarray(query))
    np.testing.assert_allclose(m, mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v, var, rtol=1e-5)
    np.testing.assert_allclose(np.exp(log_probability(m, v, False)), probit_probability(mean, var), rtol=1e-5)
    np.testing.assert_allclose(np.exp(log_probability(m, v, True)), scipy.stats.norm.cdf(mean / np.sqrt(var)),
                               rtol=1e-5)


def numpy_gp_classifier(gram, labels, mean, cross, prior_var):
    """R&W Algorithms 3.1 and 3.2 (logistic likelihood, constant mean), in NumPy, iterated to convergence."""
    n = len(labels)
    f = np.zeros(n)
    for _ in range(100):
        p = expit(f + mean)
        grad, w = labels - p, p * (1 - p)
        root = np.sqrt(w)
        b_mat = np.eye(n) + root[:, None] * gram * root[None, :]
        b = w * f + grad
        a = b - root * np.linalg.solve(b_mat, root * (gram @ b))
        f = gram @ a
    p = expit(f + mean)
    grad, root = labels - p, np.sqrt(p * (1 - p))
    b_mat = np.eye(n) + root[:, None] * gram * root[None, :]
    logp = np.sum(labels * np.log(expit(f + mean)) + (1 - labels) * np.log(expit(-(f + mean))))
    log_marginal = -0.5 * grad @ f + logp - 0.5 * np.linalg.slogdet(b_mat)[1]
    pred_mean = mean + cross.T @ grad
    v = np.linalg.solve(np.linalg.cholesky(b_mat), root[:, None] * cross)
    return log_marginal, pred_mean, prior_var - np.sum(v * v, axis=0)


def test_gp_classifier_matches_numpy():
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(1)
    x = rng.random((25, 2))
    labels = (np.sin(6 * x[:, 0]) + x[:, 1] > 0.7).astype(float)
    kernel = kernels.Matern52()
    params = {"kernel": {"lengthscale": jnp.array([0.3, 0.4]), "amplitude": jnp.array(2.0)}, "mean": jnp.array(0.3)}
    data = pad_data(x, labels, size=32)
    post = classifier_condition(kernel, params, data)
    query = rng.random((7, 2))
    gram = np.asarray(jax.jit(kernel.gram)(params["kernel"], jnp.asarray(x), jnp.asarray(x)))
    cross = np.asarray(jax.jit(kernel.gram)(params["kernel"], jnp.asarray(x), jnp.asarray(query)))
    log_marginal, mean, var = numpy_gp_classifier(gram, labels, 0.3, cross, 2.0)
    np.testing.assert_allclose(float(post.log_marginal), log_marginal, rtol=1e-8)
    m, v = classifier_predict(kernel, post, jnp.asarray(query))
    np.testing.assert_allclose(m, mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(v, var, rtol=1e-8, atol=1e-10)
    # the probability of feasibility is high where the labelled data are feasible, low where not
    prob = np.exp(np.asarray(log_probability(*classifier_predict(kernel, post, jnp.asarray(x)), True)))
    assert prob[labels == 1].mean() > 0.7 and prob[labels == 0].mean() < 0.3


def test_gp_classifier_hyperparameters_fit_through_inference():
    from jbo import inference

    rng = np.random.default_rng(2)
    x = rng.random((30, 2))
    labels = (x[:, 0] < 0.5).astype(float)
    surrogate = classifier.gp_classifier(kernels.Matern52())
    data = pad_data(x, labels, size=32)
    samples = inference.infer(jax.random.key(0), surrogate, data, "map")
    assert np.isfinite(float(samples.log_density[0]))
    condition, predict, _ = compiled(surrogate)
    post = condition(jax.tree_util.tree_map(lambda a: a[0], samples.params), data)
    left, right = jnp.array([[0.1, 0.5]]), jnp.array([[0.9, 0.5]])
    assert float(log_probability(*predict(post, left), True)[0]) > np.log(0.8)
    assert float(log_probability(*predict(post, right), True)[0]) < np.log(0.2)


def test_label_regression_matches_numpy_gp_on_signed_labels():
    """Least-squares classification: the GP regression of the labels coded ±1 (zero mean), against
    R&W eqs. 2.25–2.26 and 2.30 in NumPy, and P[feasible] = Φ(μ / s) against SciPy."""
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(3)
    x = rng.random((20, 3))
    labels = (x[:, 0] + x[:, 1] ** 2 < 0.8).astype(float)
    kernel = kernels.Matern52()
    params = {"kernel": {"lengthscale": jnp.array([0.3, 0.5, 0.7]), "amplitude": jnp.array(1.5)},
              "noise": jnp.array(1e-3), "mean": jnp.array(0.0)}
    surrogate = classifier.label_regression(kernel)
    data = pad_data(x, labels, size=24)
    query = rng.random((6, 3))
    gram = np.asarray(jax.jit(kernel.gram)(params["kernel"], jnp.asarray(x), jnp.asarray(x)))
    cross = np.asarray(jax.jit(kernel.gram)(params["kernel"], jnp.asarray(x), jnp.asarray(query)))
    cov = gram + (1e-3 + 1e-6) * np.eye(len(x))  # the GP's noise floor, 1e-6, is part of its noise
    signed = 2 * labels - 1
    mean = cross.T @ np.linalg.solve(cov, signed)
    var = 1.5 - np.sum(cross * np.linalg.solve(cov, cross), axis=0)
    log_marginal = scipy.stats.multivariate_normal(np.zeros(len(x)), cov).logpdf(signed)
    condition, predict, log_likelihood = compiled(surrogate)
    np.testing.assert_allclose(float(log_likelihood(params, data)), log_marginal, rtol=1e-6)
    m, v = predict(condition(params, data), jnp.asarray(query))
    np.testing.assert_allclose(m, mean, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(v, var, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(np.exp(log_probability(m, v, True)), scipy.stats.norm.cdf(mean / np.sqrt(var)),
                               rtol=1e-5, atol=1e-12)


def test_label_regression_rules_out_a_repeated_crash_and_stays_uncertain_far_away():
    """Where an evaluation crashed (twice) the probability of feasibility is near zero; far from every
    observation it stays well above that (the zero mean pulls it towards 1/2), though most evaluations
    crashed."""
    from jbo import inference

    jax.config.update("jax_enable_x64", True)
    x = np.array([[0.66, 0.84], [0.96, 0.62], [0.21, 0.0], [0.42, 0.22], [0.57, 0.07], [0.0, 0.0], [0.0, 0.0],
                  [1.0, 0.0], [0.26, 0.0]])
    labels = np.array([1, 0, 0, 1, 1, 0, 0, 0, 0], float)
    surrogate = classifier.default_classifier()
    data = pad_data(x, labels, size=16)
    samples = inference.infer(jax.random.key(0), surrogate, data, "map")
    condition, predict, _ = compiled(surrogate)
    post = condition(jax.tree_util.tree_map(lambda a: a[0], samples.params), data)
    prob = np.exp(np.asarray(log_probability(*predict(post, jnp.array([[0.0, 0.0], [0.0, 1.0]])), True)))
    assert prob[0] < 0.01
    assert 0.05 < prob[1] < 0.8
