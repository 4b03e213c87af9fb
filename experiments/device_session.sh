#!/usr/bin/env bash
# The accelerator checks of issue #29, item 5, as one command that fits a device lease (about 9 minutes).
#
#   OUT=DIR bash experiments/device_session.sh [--quick]
#
# In order, each step under its own time limit, logs and results written under $OUT:
#   1. which JAX devices the process sees (devices.txt);
#   2. the tests that touch device-specific paths (float32/TF32, the CLI's CPU pinning, numerics, models,
#      the compiled many-seed path), stopped at the first failure (tests.log);
#   3. slice chains against one chain per suggestion at N = 200, 400, 800 on the accelerator
#      (experiments/bench_chains.py): the run's experiments/results/bench_chains.json, with this device's rows
#      merged beside the stored CPU rows, is copied to $OUT/bench_chains.json.
# Back on the development machine: copy $OUT/bench_chains.json over experiments/results/bench_chains.json and
# regenerate the report (python experiments/report.py). --quick: tiny settings, for trying the script on a CPU.
# jbo runs from the checkout (PYTHONPATH), with whatever jax the machine has; versions go to devices.txt.
set -u -o pipefail
OUT=${OUT:-/tmp/jbo_device_session}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
export PYTHONPATH=. PYTHONUNBUFFERED=1 JBO_NO_CACHE=1
PYTHON=${PYTHON:-python3}
if [[ "${1:-}" == "--quick" ]]; then
  TESTS=(tests/test_float32.py) CHAIN_N=(50) TEST_LIMIT=300 CHAIN_LIMIT=300
else
  TESTS=(tests/test_float32.py tests/test_cli.py tests/test_core_numerics.py tests/test_models.py tests/test_many.py)
  CHAIN_N=(200 400 800) TEST_LIMIT=240 CHAIN_LIMIT=270
fi

"$PYTHON" -c "import jax, numpyro, flax, optax; print(jax.devices()); print('jax', jax.__version__, 'numpyro',
numpyro.__version__, 'flax', flax.__version__, 'optax', optax.__version__)" 2>&1 | tee "$OUT/devices.txt"

timeout "$TEST_LIMIT" "$PYTHON" -m pytest -q -x -p no:cacheprovider "${TESTS[@]}" 2>&1 | tee "$OUT/tests.log"
echo "tests: exit $?" | tee -a "$OUT/tests.log"

timeout "$CHAIN_LIMIT" "$PYTHON" experiments/bench_chains.py --n "${CHAIN_N[@]}" 2>&1 | tee "$OUT/chains.log"
echo "bench_chains: exit $?" | tee -a "$OUT/chains.log"
cp experiments/results/bench_chains.json "$OUT/bench_chains.json"
