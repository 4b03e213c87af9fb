"""Shared test configuration: float64 everywhere (the library's default on CPU/GPU).

x64 must be switched on before any array is created, so it is done when pytest imports this
conftest, before any test module is collected. Tests of the float32 path pass explicit dtypes.
"""

import importlib.metadata
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("JBO_NO_CACHE", "1")  # ``import jbo`` turns on the persistent cache: never write ~/.cache
# The suite's time is nearly all XLA:CPU compilation of programs that then run for milliseconds: without LLVM's
# backend optimisations a program compiles faster and runs slower (figures in the commit that set this). Tests
# compare programs with each other and with NumPy, never with figures from an optimised build; an explicit
# setting wins.
# At that optimisation level XLA:CPU's older LLVM-IR fusion emitters compile faster than its MLIR ones (the
# default), with the same results here (figures in the commit that set it). XLA of jaxlib 0.11 no longer has that
# flag, and an unknown flag in XLA_FLAGS aborts the process (seen on a GPU machine's jax 0.11.2).
_flags = ["--xla_backend_optimization_level=0"]
if tuple(int(p) for p in importlib.metadata.version("jaxlib").split(".")[:2]) < (0, 11):
    _flags.append("--xla_cpu_use_fusion_emitters=false")
for _flag in _flags:
    if _flag.split("=")[0] not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_flag}".strip()

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)


import pytest  # noqa: E402

# The longest modules, started first: pytest-xdist's
# ``--dist loadfile`` hands out modules in collection order, and one of these started last runs alone at the end.
LONGEST_FIRST = ("test_tree_model.py", "test_readme.py", "test_bring_your_own.py", "test_bock.py")


def pytest_collection_modifyitems(items):
    def rank(item):
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: the order within a module, and of the other modules, is kept


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs after each test module.

    Every XLA:CPU executable keeps ~20 memory mappings for its code; the suite compiles a few thousand
    programs, and one process holding all of them reached the kernel's limit of 65 530 mappings
    (``vm.max_map_count``) and aborted inside XLA in the last test module.
    """
    yield
    jax.clear_caches()


@pytest.fixture
def sigkill_when():
    """``sigkill_when(script, path, ready, timeout)``: run ``python -c script path`` with this checkout's jbo
    importable, SIGKILL it as soon as ``ready()`` holds, and return its exit status (``-SIGKILL`` when it was
    killed). The test fails if the child exits first or ``ready()`` does not hold within ``timeout`` seconds."""
    import signal
    import subprocess
    import sys
    import time

    import jbo

    def run(script: str, path: str, ready, timeout: float) -> int:
        root = os.path.dirname(os.path.dirname(os.path.abspath(jbo.__file__)))
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1",
                   PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
        proc = subprocess.Popen([sys.executable, "-c", script, path], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + timeout
            while not ready():
                assert proc.poll() is None, f"child exited early: {proc.stderr.read().decode()[-2000:]}"
                assert time.monotonic() < deadline, f"child not ready within {timeout} s"
                time.sleep(0.02)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
            proc.stderr.close()
        return proc.returncode

    return run
