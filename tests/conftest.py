"""Shared test configuration: float64 everywhere (the library's default on CPU/GPU).

x64 must be switched on before any array is created, so it is done when pytest imports this
conftest, before any test module is collected. Tests of the float32 path pass explicit dtypes.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("JBO_NO_CACHE", "1")  # ``import jbo`` turns on the persistent cache: never write ~/.cache

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)


import pytest  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs after each test module.

    Every XLA:CPU executable keeps ~20 memory mappings for its code; the suite compiles a few thousand
    programs, and one process holding all of them reached the kernel's limit of 65 530 mappings
    (``vm.max_map_count``) and aborted inside XLA in the last test module.
    """
    yield
    jax.clear_caches()
