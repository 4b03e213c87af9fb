#!/usr/bin/env bash
# The accelerator checks of issue #29, item 5, as one command that fits a device lease (about 11 minutes with
# every step).
#
#   OUT=DIR bash experiments/device_session.sh [--quick] [STEP ...]
#
# In order, the STEPs named (default: all of studies, chains, tests, bock), each under its own time limit, logs and
# results written under $OUT:
#   1. which JAX devices the process sees (devices.txt);
#   2. whole studies through jbo.study, runs per second (experiments/bench_devices.py: the GP-MAP ablation grid
#      and the default GP on Hartmann6; studies.log);
#   3. slice chains against one chain per suggestion at N = 200 and 400 (experiments/bench_chains.py; chains.log);
#   4. the test suite (tests.log, failures' tracebacks at its end), on 12 workers, the card's memory allocated on
#      demand (on an H200 it took about 350 s);
#   5. BOCK on Rosenbrock-20 through jbo.study with the time left before the deadline (bock.log; BOCK_BUDGET
#      evaluations, default 100: 200 is Table 1's cell).
# The results files with this device's rows merged beside the stored ones (bench_devices.json, bench_chains.json,
# provenance.json) are copied to $OUT. Back on the development machine: take this device's entries from them
# into experiments/results/ and regenerate the report (python experiments/report.py). Wheels in .whl (packages the
# machine lacks, e.g. optuna for its sampler's tests) are installed first when present. --quick: tiny settings,
# for trying the script on a CPU. jbo runs from the checkout (PYTHONPATH), with whatever jax the machine has;
# versions go to devices.txt.
set -u -o pipefail
OUT=${OUT:-/tmp/jbo_device_session}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
START=$SECONDS
export PYTHONPATH=. PYTHONUNBUFFERED=1 JBO_NO_CACHE=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
PYTHON=${PYTHON:-python3}
QUICK=0
if [[ "${1:-}" == "--quick" ]]; then QUICK=1; shift; fi
STEPS=("$@")
((${#STEPS[@]})) || STEPS=(studies chains tests bock)
wants() { [[ " ${STEPS[*]} " == *" $1 "* ]]; }
if ((QUICK)); then
  TESTS=(tests/test_float32.py) WORKERS=2 STUDY=(--seeds 2 --bock-seeds 2 --bock-budget 8) CHAIN_N=(50)
  LIMITS=(300 300 300) DEADLINE=900
else
  TESTS=(tests) WORKERS=12 STUDY=(--seeds 10 --bock-seeds 5 --bock-budget "${BOCK_BUDGET:-100}") CHAIN_N=(200 400)
  LIMITS=(90 90 420) DEADLINE=660
fi
if compgen -G ".whl/*.whl" > /dev/null; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=.:/tmp/site
fi

"$PYTHON" -c "import jax, numpyro, flax, optax; print(jax.devices()); print('jax', jax.__version__, 'numpyro',
numpyro.__version__, 'flax', flax.__version__, 'optax', optax.__version__)" 2>&1 | tee "$OUT/devices.txt"

if wants studies; then
  timeout "${LIMITS[0]}" "$PYTHON" experiments/bench_devices.py --studies gp-map-grid gp-default "${STUDY[@]}" 2>&1 \
    | tee "$OUT/studies.log"
  echo "bench_devices: exit $?" | tee -a "$OUT/studies.log"
fi

if wants chains; then
  timeout "${LIMITS[1]}" "$PYTHON" experiments/bench_chains.py --n "${CHAIN_N[@]}" 2>&1 | tee "$OUT/chains.log"
  echo "bench_chains: exit $?" | tee -a "$OUT/chains.log"
fi

if wants tests; then
  # -v -v: a line per test, so that a run stopped at its limit still says how far it got; pytest-benchmark (on
  # some machines) only warns under xdist
  timeout "${LIMITS[2]}" "$PYTHON" -m pytest -p no:cacheprovider -p no:benchmark -n "$WORKERS" --dist loadfile -v -v \
    --tb=short -rfEs "${TESTS[@]}" > "$OUT/tests.log" 2>&1
  echo "tests: exit $?" | tee -a "$OUT/tests.log"
  grep -E "^(FAILED|ERROR) |passed|failed" "$OUT/tests.log" | tail -20
fi

LEFT=$((DEADLINE - (SECONDS - START)))
if wants bock && ((LEFT > 30)); then
  timeout "$LEFT" "$PYTHON" experiments/bench_devices.py --studies bock-rosenbrock20 "${STUDY[@]}" 2>&1 \
    | tee "$OUT/bock.log"
  echo "bock: exit $? (limit $LEFT s)" | tee -a "$OUT/bock.log"
fi
for name in bench_devices.json bench_chains.json provenance.json; do
  cp "experiments/results/$name" "$OUT/$name" 2>/dev/null
done
