"""The float32 path (TPUs have no fast float64): a run without jax_enable_x64 works end to end.

Runs in a subprocess because the test session enables x64 globally.
"""

import json
import os
import subprocess
import sys

SCRIPT = r"""
import json, jax, numpy as np
assert not jax.config.jax_enable_x64
import jbo
from jbo.benchmarks import get_problem
p = get_problem("branin")
opt = jbo.Optimizer(p.space(), inference="map", seed=0, n_init=5, dtype="float32")
for _ in range(9):
    c = opt.ask()
    opt.tell(c, p.evaluate(c))
params = opt.state.model_state.params
dtypes = sorted({str(l.dtype) for l in jax.tree_util.tree_leaves(params)})
print(json.dumps({"best": opt.best[1], "x64": jax.config.jax_enable_x64, "dtypes": dtypes,
                  "phase": opt.last_info["phase"]}))
"""


def test_float32_run_without_x64():
    env = dict(os.environ, JAX_ENABLE_X64="0")
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["x64"] is False
    assert result["dtypes"] == ["float32"]
    assert result["phase"] == "model"
    assert 0.39 < result["best"] < 50.0
