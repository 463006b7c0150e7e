#!/usr/bin/env bash
# Installs what is missing, builds (the GPU engines too when nvcc is there), and runs the whole
# test suite (GPU tests skip without a GPU). Prints one summary line; the whole CTest log only
# when a test fails (it is kept in build/Testing/ctest.log either way). Arguments go to ctest.
# Then the Python package: built CPU-only into build/python-venv (scripts/setup-python.sh says
# why) and its tests run with pytest.
# Both test runs get TMPDIR set to a new empty folder and fail if the tests leave anything in it:
# a test keeps its files in its own temporary folder and removes it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# Runs "$@" with TMPDIR set to a new empty folder, then fails if anything was left in it (and
# removes it). The command runs in a subshell where `set -e` holds: a function called from an
# `if` or `||` would run with it switched off.
in_fresh_tmpdir() {
  local tmp status=0 left
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/epsjoin-test-run.XXXXXX")
  set +e
  (
    set -e
    export TMPDIR=$tmp
    "$@"
  )
  status=$?
  set -e
  left=$(find "$tmp" -mindepth 1 -maxdepth 1 -printf '  %f\n' | sort | head -20)
  rm -rf "$tmp"
  if [[ -n $left ]]; then
    echo "epsjoin tests: the tests left these behind in TMPDIR (now removed):" >&2
    echo "$left" >&2
    ((status != 0)) || status=1
  fi
  return "$status"
}

run_ctest() { ctest --output-on-failure --parallel "$(nproc)" "$@" >"$log" 2>&1; }

pytest_in_tmpdir() {
  # pytest keeps its tmp_path folders under --basetemp for inspection; they go with it here.
  local status=0
  "$venv/bin/python" -m pytest -q -p no:cacheprovider --basetemp "$TMPDIR/pytest" . || status=$?
  rm -rf "$TMPDIR/pytest"
  return "$status"
}

"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$root/build" -DEPSJOIN_CUDA="${EPSJOIN_CUDA:-AUTO}"
cd "$root/build"
mkdir -p Testing
log=$root/build/Testing/ctest.log
echo "epsjoin: running the tests ($(nproc) at a time; log in $log)" >&2
start=$SECONDS
status=0
in_fresh_tmpdir run_ctest "$@" || status=$?
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
in_fresh_tmpdir pytest_in_tmpdir
