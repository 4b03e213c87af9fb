"""``import jbo`` changes nothing in a researcher's JAX program (issue: a good citizen).

Each check runs in a fresh interpreter without the suite's settings (the suite's conftest turns x64 on for
the tests): JAX's whole configuration and ``XLA_FLAGS`` are the same before and after ``import jbo`` (its
dependencies imported before; the one documented exception, ``OPENBLAS_NUM_THREADS``, is an environment variable
read by OpenBLAS, not JAX), JAX's backends are not started (the user can still set ``jax_num_cpu_devices``), and a
float32 flax network trained with optax inside an objective stays float32 while ``jbo.minimize`` runs it, with jbo's
own run in float64.
"""

import json
import os
import subprocess
import sys

import jbo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(jbo.__file__)))


def _fresh(code: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}  # the suite's XLA flags stay: same programs
    env.update(PYTHONPATH=os.pathsep.join([ROOT, env.get("PYTHONPATH", "")]), JBO_NO_CACHE="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# jbo's dependencies are imported first: on some JAX releases (0.10.1) flax and numpyro register a configuration
# option of JAX's own (``jax_pallas_enable_debug_checks``) when imported, which is theirs, not jbo's.
IMPORT = r"""
import json, os
import jax
import flax, numpyro, optax
before = {k: repr(v) for k, v in jax.config.values.items()}
flags = os.environ.get("XLA_FLAGS")
import jbo, jbo.benchmarks, jbo.integrations.optuna
after = {k: repr(v) for k, v in jax.config.values.items()}
try:  # refused once any JAX operation has started the backends
    jax.config.update("jax_num_cpu_devices", 2)
    backends = "not started"
except RuntimeError as error:
    backends = str(error)
import jax.numpy as jnp
print(json.dumps({"backends": backends,
                  "changed": sorted(k for k in before if before[k] != after.get(k)) + sorted(set(after) - set(before)),
                  "flags": [flags, os.environ.get("XLA_FLAGS")], "dtypes": [str(jnp.zeros(2).dtype),
                  str(jnp.arange(3).dtype)]}))
"""


def test_import_jbo_leaves_the_jax_configuration_and_xla_flags_alone():
    out = _fresh(IMPORT)
    assert out["backends"] == "not started"  # the user can still choose devices and platforms after import jbo
    assert out["changed"] == []
    assert out["flags"][0] == out["flags"][1]
    assert out["dtypes"] == ["float32", "int32"]


FLAX = r"""
import json
import flax.linen as nn
import jax, jax.numpy as jnp, numpy as np, optax
import jbo

class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(nn.tanh(nn.Dense(16)(x)))

x = jnp.asarray(np.random.default_rng(0).normal(size=(64, 3)), jnp.float32)
y = jnp.sin(x.sum(1, keepdims=True))
seen = []

def objective(config):
    model = MLP()
    params = model.init(jax.random.key(0), x)
    optimizer = optax.adam(config["lr"])

    @jax.jit
    def step(params, state):
        loss, grads = jax.value_and_grad(lambda p: jnp.mean((model.apply(p, x) - y) ** 2))(params)
        updates, state = optimizer.update(grads, state)
        return optax.apply_updates(params, updates), state, loss

    state = optimizer.init(params)
    for _ in range(20):
        params, state, loss = step(params, state)
    seen.append(sorted({str(leaf.dtype) for leaf in jax.tree_util.tree_leaves(params)} | {str(loss.dtype)}))
    return float(loss)

space = jbo.Space({"lr": jbo.Real(1e-4, 1e-1, log=True)})
result = jbo.minimize(objective, space, budget=7, inference="map", n_init=4)
opt = jbo.Optimizer(space, inference="map", n_init=1)
opt.tell({"lr": 0.01}, 1.0)
opt.tell({"lr": 0.001}, 2.0)
opt.ask()
print(json.dumps({"seen": seen, "best": result.best_value, "after": str(jnp.ones(1).dtype),
                  "hyperparameters": str(np.asarray(opt.state.model_state.params["noise"]).dtype)}))
"""


def test_a_float32_objective_stays_float32_while_jbo_runs_in_float64():
    out = _fresh(FLAX)
    assert len(out["seen"]) == 7 and all(dtypes == ["float32"] for dtypes in out["seen"])
    assert out["after"] == "float32" and out["hyperparameters"] == "float64"


SAME = r"""
import json
import jbo
from jbo.benchmarks import get_problem
problem = get_problem("branin")
result = jbo.minimize_many(problem.evaluate, problem.space(), budget=8, seeds=[0], n_init=5, inference="map",
                           maximize=dict(num_anchors=128, num_local=8, top_k=2, num_steps=10))
print(json.dumps({"values": result.values[0].tolist()}))
"""


def test_a_run_in_a_float32_program_computes_what_it_computes_under_global_float64():
    """jbo's float64 is its own: a run in a process that never turned x64 on gives, bit for bit, the values of the
    same run in this process (x64 on everywhere); a constant made in float32 at import would show here."""
    import numpy as np

    from jbo.benchmarks import get_problem

    problem = get_problem("branin")
    here = jbo.minimize_many(problem.evaluate, problem.space(), budget=8, seeds=[0], n_init=5, inference="map",
                             maximize=dict(num_anchors=128, num_local=8, top_k=2, num_steps=10))
    assert _fresh(SAME)["values"] == np.asarray(here.values[0]).tolist()


def test_without_jaxs_lowering_table_the_lapack_workaround_steps_aside(monkeypatch):
    """The fallback of jbo's feature-detected XLA:CPU workaround (``jbo._xla_cpu``): where a JAX keeps no table of
    CPU lowerings that jbo can find, ``serial_lapack`` registers nothing and programs lowered inside it still
    compute JAX's values (tests/test_xla_cpu.py covers the workaround where the table exists)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jbo import _xla_cpu

    monkeypatch.setenv("JBO_SERIAL_LAPACK", "1")
    monkeypatch.setattr(_xla_cpu, "_cpu_lowerings", lambda: None)
    a = np.random.default_rng(0).standard_normal((3, 4, 4))
    spd = a @ a.transpose(0, 2, 1) + 4 * np.eye(4)
    with _xla_cpu.serial_lapack():
        assert _xla_cpu._DEPTH[0] == 0  # nothing registered
        factor = jax.jit(jnp.linalg.cholesky)(jnp.asarray(spd, jnp.float32))
    np.testing.assert_allclose(np.asarray(factor), np.linalg.cholesky(spd), rtol=1e-4, atol=1e-4)
