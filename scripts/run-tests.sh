#!/usr/bin/env bash
# Installs what is missing, builds (the GPU engines too when nvcc is there), and runs the whole
# test suite (GPU tests skip without a GPU). Prints one summary line; the whole CTest log only
# when a test fails (it is kept in build/Testing/ctest.log either way). Arguments go to ctest.
# Then the Python package: built CPU-only into build/python-venv (scripts/setup-python.sh says
# why) and its tests run with pytest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$root/build" -DEPSJOIN_CUDA="${EPSJOIN_CUDA:-AUTO}"
cd "$root/build"
mkdir -p Testing
log=$root/build/Testing/ctest.log
echo "epsjoin: running the tests ($(nproc) at a time; log in $log)" >&2
start=$SECONDS
status=0
ctest --output-on-failure --parallel "$(nproc)" "$@" >"$log" 2>&1 || status=$?
elapsed=$((SECONDS - start))
summary=$(grep -E '[0-9]+% tests passed' "$log" | tail -1 || true)
skipped=$(grep -c -F '***Skipped' "$log" || true)
if ((status != 0)); then
  cat "$log"
  echo "epsjoin tests FAILED after ${elapsed} s: ${summary:-ctest exited with $status} (log: $log)" >&2
  exit "$status"
fi
echo "epsjoin tests: ${summary}, ${skipped} skipped, ${elapsed} s (log: $log)"
"$root/scripts/setup-python.sh"
venv=${EPSJOIN_VENV:-$root/build/python-venv}
# Run from the tests' folder so the installed package, not python/epsjoin, is imported.
cd "$root/python/tests"
"$venv/bin/python" -m pytest -q -p no:cacheprovider .
