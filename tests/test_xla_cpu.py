"""jbo's workaround for XLA:CPU's batched-LAPACK deadlock (jbo._xla_cpu): in jbo's own programs, batched
factorisations and solves are lowered on CPU to loops of unbatched LAPACK calls, with the same values; the user's
programs keep JAX's lowering."""

import os
import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.scipy.linalg import solve_triangular

import jbo
from jbo import _xla_cpu

pytestmark = [pytest.mark.skipif(jax.default_backend() != "cpu", reason="the workaround is CPU-only"),
              pytest.mark.skipif(_xla_cpu._cpu_lowerings() is None, reason="this JAX keeps its lowerings elsewhere")]


@pytest.fixture(autouse=True)
def _serial(monkeypatch):
    """The workaround on, whatever the installed jaxlib (JBO_SERIAL_LAPACK=1), inside the context jbo lowers in."""
    monkeypatch.setenv("JBO_SERIAL_LAPACK", "1")
    with _xla_cpu.serial_lapack():
        yield


def _spd(key, batch, n):
    a = jax.random.normal(key, (*batch, n, n))
    return a @ jnp.swapaxes(a, -1, -2) + n * jnp.eye(n)


def _lapack_batch_dims(text: str):
    """``num_batch_dims`` of every LAPACK custom call in lowered StableHLO text."""
    return [int(n) for n in re.findall(r'custom_call @lapack_\w+\(.*num_batch_dims = "(\d+)"', text)]


def test_batched_lapack_calls_are_lowered_unbatched():
    a, b = _spd(jax.random.PRNGKey(0), (3, 4), 20), jnp.ones((3, 4, 20, 5))
    fn = jax.jit(lambda a, b: solve_triangular(jnp.linalg.cholesky(a), b, lower=True))
    text = fn.lower(a, b).as_text()
    assert _lapack_batch_dims(text) == [0, 0]  # potrf and trsm, each on one matrix
    assert "stablehlo.while" in text


def test_unbatched_calls_keep_jax_lowering():
    a = _spd(jax.random.PRNGKey(1), (), 20)
    text = jax.jit(jnp.linalg.cholesky).lower(a).as_text()
    assert _lapack_batch_dims(text) == [0] and "stablehlo.while" not in text


def test_looped_lowering_gives_numpy_values():
    key = jax.random.PRNGKey(2)
    a = _spd(key, (2, 3), 12)
    b = jax.random.normal(key, (2, 3, 12, 4))
    a_np, b_np = np.asarray(a), np.asarray(b)
    chol = np.linalg.cholesky(a_np)
    np.testing.assert_allclose(jnp.linalg.cholesky(a), chol, atol=1e-12)
    expected = np.stack([[np.linalg.solve(chol[i, j], b_np[i, j]) for j in range(3)] for i in range(2)])
    np.testing.assert_allclose(jax.jit(lambda c, b: solve_triangular(c, b, lower=True))(jnp.asarray(chol), b),
                               expected, atol=1e-12)
    np.testing.assert_allclose(jnp.linalg.solve(a, b), np.linalg.solve(a_np, b_np), atol=1e-12)
    np.testing.assert_allclose(jnp.linalg.slogdet(a)[1], np.linalg.slogdet(a_np)[1], atol=1e-10)
    np.testing.assert_allclose(jnp.linalg.eigh(a)[0], np.linalg.eigh(a_np)[0], atol=1e-10)
    q, r = jnp.linalg.qr(a)
    np.testing.assert_allclose(q @ r, a_np, atol=1e-10)
    u, s, vt = jnp.linalg.svd(a)
    np.testing.assert_allclose(s, np.linalg.svd(a_np)[1], atol=1e-10)


def test_gradient_through_batched_solves_matches_finite_differences():
    key = jax.random.PRNGKey(3)
    a = _spd(key, (4,), 8)
    b = jax.random.normal(key, (4, 8))

    def loss(scale):
        chol = jnp.linalg.cholesky(a * scale[:, None, None])
        return jnp.sum(solve_triangular(chol, b[..., None], lower=True) ** 2)

    scale = jnp.linspace(0.5, 2.0, 4)
    grad = jax.jit(jax.grad(loss))(scale)
    step = 1e-6
    numeric = [(loss(scale.at[i].add(step)) - loss(scale.at[i].add(-step))) / (2 * step) for i in range(4)]
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)


def _child(script: str, **env_extra) -> subprocess.CompletedProcess:
    root = os.path.dirname(os.path.dirname(os.path.abspath(jbo.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]), **env_extra)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)


LOWER = """
import json, re
import jbo, jax, jax.numpy as jnp
from jbo import _xla_cpu
a = jnp.broadcast_to(jnp.eye(4), (3, 4, 4))
dims = lambda text: [int(n) for n in re.findall(r'custom_call @lapack_\\w+\\(.*num_batch_dims = "(\\d+)"', text)]
before = dims(jax.jit(lambda a: jnp.linalg.cholesky(a)).lower(a).as_text())
with _xla_cpu.serial_lapack():
    inside = dims(jax.jit(lambda a: jnp.linalg.cholesky(a) + 0.0).lower(a).as_text())
after = dims(jax.jit(lambda a: jnp.linalg.cholesky(a) * 1.0).lower(a).as_text())
print(json.dumps([before, inside, after]))
"""


def test_only_jbos_lowering_is_changed():
    """A user's program, lowered before or after jbo lowers its own, keeps JAX's batched call."""
    out = _child(LOWER, JBO_SERIAL_LAPACK="1")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[[1], [0], [1]]"


def test_opt_out_keeps_jax_batched_lowering():
    out = _child(LOWER, JBO_SERIAL_LAPACK="0")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[[1], [1], [1]]"


@pytest.mark.slow
def test_matern_suggestion_that_deadlocked_completes():
    """The program that waited forever on 2 cores before the workaround: the paper's Matérn baseline (one
    lengthscale, BOCK's 20 000-anchor search) in float64 on 200 observations of 20-d Rosenbrock. With the
    workaround the child takes ~12 s on 2 cores; without it, it never returned (the timeout fails the test).
    Slow: the lowering test above checks the workaround in the default suite."""
    script = """
import jax
jax.config.update("jax_enable_x64", True)
import numpy as np, jbo
from jbo import loop
from jbo.benchmarks import get_problem
problem = get_problem("rosenbrock", dim=20, normalized=True)
space = problem.space()
x = np.random.default_rng(0).random((200, 20))
y = np.asarray(problem.fn(jax.numpy.asarray(-5.0 + 15.0 * x)))
settings = loop.Settings.create(model="matern", seed=0)
state = loop.init(settings, space)._replace(x=x, y=y, n_suggested=200)
for _ in range(3):
    state, point, _ = loop.suggest(settings, space, state)
print(np.all((point >= 0) & (point <= 1)))
"""
    out = _child(script)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "True"
