#!/usr/bin/env bash
# The accelerator checks of issue #29, item 5, in one device lease (about 11 minutes), logs under $OUT:
#   OUT=DIR bash experiments/device_session.sh [STEP ...]     (STEPs: studies chains tests bock; default all)
# The JAX devices, whole studies (bench_devices.py), slice chains (bench_chains.py), the test suite on 12 workers and
# BOCK's Rosenbrock-20 study in the time left (BOCK_BUDGET evaluations, default 100). This device's rows are copied
# to $OUT: merge them into experiments/results/ and run experiments/report.py. Wheels in .whl are installed first.
set -u -o pipefail
OUT=${OUT:-/tmp/jbo_device_session}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
START=$SECONDS
export PYTHONPATH=. PYTHONUNBUFFERED=1 JBO_NO_CACHE=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
PYTHON=${PYTHON:-python3}
STEPS=("$@")
((${#STEPS[@]})) || STEPS=(studies chains tests bock)
wants() { [[ " ${STEPS[*]} " == *" $1 "* ]]; }
STUDY=(--seeds 10 --bock-seeds 5 --bock-budget "${BOCK_BUDGET:-100}")
if compgen -G ".whl/*.whl" > /dev/null; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=.:/tmp/site
fi
"$PYTHON" -c "import jax, numpyro, flax, optax; print(jax.devices()); print('jax', jax.__version__, 'numpyro',
numpyro.__version__, 'flax', flax.__version__, 'optax', optax.__version__)" 2>&1 | tee "$OUT/devices.txt"
step() {  # step NAME LIMIT COMMAND...: run it under its limit, logged to $OUT/NAME.log
  local name=$1 limit=$2; shift 2
  timeout "$limit" "$@" 2>&1 | tee "$OUT/$name.log"
  echo "$name: exit $? (limit $limit s)" | tee -a "$OUT/$name.log"
}
wants studies && step studies 90 "$PYTHON" experiments/bench_devices.py --studies gp-map-grid gp-default "${STUDY[@]}"
wants chains && step chains 90 "$PYTHON" experiments/bench_chains.py --n 200 400
if wants tests; then  # -v -v: a line per test, so that a run stopped at its limit says how far it got
  step tests 420 "$PYTHON" -m pytest -p no:cacheprovider -p no:benchmark -n 12 --dist loadfile -v -v --tb=short -rfEs \
    tests > /dev/null
  grep -E "^(FAILED|ERROR) |passed|failed" "$OUT/tests.log" | tail -20
fi
LEFT=$((660 - (SECONDS - START)))
wants bock && ((LEFT > 30)) && step bock "$LEFT" "$PYTHON" experiments/bench_devices.py --studies bock-rosenbrock20 "${STUDY[@]}"
for name in bench_devices.json bench_chains.json provenance.json; do
  cp "experiments/results/$name" "$OUT/$name" 2>/dev/null
done
