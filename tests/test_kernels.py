"""Kernels as values: the new kernels against NumPy, composition, positive definiteness, priors, records."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jbo import kernels
from jbo.kernels import (Constant, KumaraswamyWarp, Linear, Matern52, Periodic, Polynomial, RationalQuadratic,
                         SquaredExponential)

DIM = 3


def draw_params(kernel, seed=0, dim=DIM):
    """A prior draw of ``kernel``'s params (its numpyro sites, seeded)."""
    with numpyro.handlers.seed(rng_seed=seed):
        return kernel.sample_params(dim)


def numpy_gram(fn, x1, x2):
    return np.array([[fn(a, b) for b in x2] for a in x1])


def matern(params, a, b):
    r = np.sqrt(np.sum(((a - b) / np.asarray(params["lengthscale"])) ** 2))
    return float(params["amplitude"]) * (1 + np.sqrt(5) * r + 5 * r**2 / 3) * np.exp(-np.sqrt(5) * r)


REFERENCES = {
    "linear": (Linear(), lambda p, a, b: np.sum(np.asarray(p["variance"]) * (a - 0.5) * (b - 0.5))),
    "linear-shared": (Linear(ard=False, centre=0.2), lambda p, a, b: float(p["variance"]) * np.dot(a - 0.2, b - 0.2)),
    "polynomial": (Polynomial(degree=3), lambda p, a, b: (float(p["offset"]) + np.sum(
        np.asarray(p["variance"]) * (a - 0.5) * (b - 0.5))) ** 3),
    "periodic": (Periodic(), lambda p, a, b: float(p["amplitude"]) * np.exp(-2 * np.sum(
        (np.sin(np.pi * (a - b) / np.asarray(p["period"])) / np.asarray(p["lengthscale"])) ** 2))),
    "constant": (Constant(), lambda p, a, b: float(p["variance"])),
    "fixed-constant": (Constant(2.5), lambda p, a, b: 2.5),
    "sum": (Matern52() + Linear(), lambda p, a, b: matern(p[0], a, b) + np.sum(
        np.asarray(p[1]["variance"]) * (a - 0.5) * (b - 0.5))),
    "product": (Matern52() * Periodic(ard=False), lambda p, a, b: matern(p[0], a, b) * float(p[1]["amplitude"])
                * np.exp(-2 * np.sum((np.sin(np.pi * (a - b) / float(p[1]["period"])) / float(p[1]["lengthscale"])) ** 2))),
    "scaled": (Matern52() * 3.0, lambda p, a, b: 3.0 * matern(p, a, b)),
    "plus-number": (Matern52() + 1.5, lambda p, a, b: matern(p[0], a, b) + 1.5),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_kernels_against_numpy(name):
    kernel, reference = REFERENCES[name]
    params = draw_params(kernel, seed=len(name))
    rng = np.random.default_rng(1)
    x1, x2 = rng.random((5, DIM)), rng.random((4, DIM))
    expected = numpy_gram(lambda a, b: reference(params, a, b), x1, x2)
    np.testing.assert_allclose(np.asarray(kernel.gram(params, jnp.asarray(x1), jnp.asarray(x2))), expected,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(kernel.diag(params, jnp.asarray(x1))), np.diag(numpy_gram(
        lambda a, b: reference(params, a, b), x1, x1)), rtol=1e-10, atol=1e-12)
    pair = float(kernel(params, jnp.asarray(x1[0]), jnp.asarray(x2[0])))
    assert pair == pytest.approx(expected[0, 0], rel=1e-10, abs=1e-12)


KERNEL_CHOICES = [Matern52(), SquaredExponential(), RationalQuadratic(), Periodic(), Linear(), Polynomial(degree=2),
                  Constant(), Matern52() + Linear(), Periodic() * SquaredExponential(), 2.0 * Matern52() + Constant(),
                  KumaraswamyWarp(Matern52() + Linear(ard=False))]


@settings(max_examples=25, deadline=None)
@given(index=st.integers(0, len(KERNEL_CHOICES) - 1), seed=st.integers(0, 10_000), n=st.integers(2, 12))
def test_gram_matrices_are_positive_semidefinite(index, seed, n):
    kernel = KERNEL_CHOICES[index]
    params = draw_params(kernel, seed)
    x = jax.random.uniform(jax.random.key(seed), (n, DIM))
    gram = np.asarray(kernel.gram(params, x, x))
    np.testing.assert_allclose(gram, gram.T, rtol=1e-9, atol=1e-12)
    scale = max(1.0, float(np.max(np.abs(gram))))
    assert np.min(np.linalg.eigvalsh(gram)) > -1e-9 * scale


def test_composites_name_their_parts_sites():
    trace = numpyro.handlers.trace(numpyro.handlers.seed(lambda: (Matern52() + Linear()).sample_params(DIM), 0)).get_trace()
    assert {"sum0/lengthscale", "sum0/amplitude", "sum1/variance"} <= set(trace)
    assert "variance" not in numpyro.handlers.trace(numpyro.handlers.seed(
        lambda: Constant(1.0).sample_params(DIM), 0)).get_trace()  # a fixed constant has no site


@pytest.mark.parametrize("kernel", KERNEL_CHOICES + [kernels.Arc(), kernels.Cylindrical(degree=2)])
def test_a_kernel_is_recorded_as_an_expression(kernel):
    record = json.loads(json.dumps(kernel.to_record()))
    assert kernels.from_record(record) == kernel
    assert hash(kernels.from_record(record)) == hash(kernel)


def test_names_are_fixed_and_objects_are_the_route():
    with pytest.raises(TypeError, match="pass a kernel object"):
        kernels.KERNELS["mine"] = Linear
    assert kernels.resolve("matern52") == Matern52()
    assert kernels.resolve("se", ard=False, warp=True) == KumaraswamyWarp(SquaredExponential(ard=False))
    assert kernels.resolve(Linear(), warp=True) == KumaraswamyWarp(Linear())
    for bad in (3, Linear, "linear"):
        with pytest.raises(ValueError, match="kernel"):
            kernels.check(bad)


def test_bad_kernel_fields_raise():
    with pytest.raises(ValueError, match="ard"):
        Linear(ard="yes")
    with pytest.raises(ValueError, match="degree"):
        Polynomial(degree=0)
    with pytest.raises(ValueError, match="value"):
        Constant(-1.0)
    with pytest.raises(ValueError, match="factor"):
        Matern52() * -2.0
    with pytest.raises(TypeError, match="combine"):
        Matern52() + "linear"
