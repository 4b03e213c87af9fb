"""Shared test configuration: float64 everywhere (the library's default on CPU/GPU).

x64 must be switched on before any array is created, so it is done when pytest imports this
conftest, before any test module is collected. Tests of the float32 path pass explicit dtypes.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("JBO_NO_CACHE", "1")  # ``import jbo`` turns on the persistent cache: never write ~/.cache

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
