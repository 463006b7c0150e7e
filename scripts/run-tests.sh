#!/usr/bin/env bash
# The whole test run, as CI runs it (.ci/run), in four stages, each with one progress line when it
# starts and one summary line when it ends:
#   tests     installs what is missing, builds build/ (the GPU engines too when nvcc is there,
#             for sm_90 alone where there is no GPU)
#             and runs the whole CTest suite (GPU tests skip without a GPU). The whole CTest log
#             is printed only when a test fails (it is kept in build/Testing/ctest.log).
#   python    the CPU wheel, built once (scripts/build-wheels.sh --cpu: dist/, its own kept CMake
#             folder and ccache), installed into a new venv (build/wheel-test-venv) with the test
#             requirements, and python/tests run with pytest against that install.
#   sanitize  the CPU suite again, built with clang in build-asan/ under AddressSanitizer and
#             UBSan (every report fatal), with the fuzz targets; log in build-asan/Testing/ctest.log.
#   fuzz      each libFuzzer target for 30 s from its corpus (scripts/run-fuzz.sh, in build-asan/).
# Every stage runs its tests with TMPDIR set to a new empty folder and fails if they leave
# anything in it: a test keeps its files in its own temporary folder and removes it.
# Usage: scripts/run-tests.sh [--stages tests,python,sanitize,fuzz] [CTest arguments...]
# The CTest arguments (-R, -L, ...) go to both CTest stages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
stages=tests,python,sanitize,fuzz
if [[ ${1:-} == --stages ]]; then
  stages=$2
  shift 2
fi
ctest_args=("$@")
fuzz_seconds=30

run_start=$SECONDS
summaries=()
note() { echo "epsjoin tests: $*" >&2; }
minutes() { printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); }

# Runs "$@" with TMPDIR set to a new empty folder (under $fresh_tmp_parent, else $TMPDIR or /tmp),
# then fails if anything was left in it (and removes it). "$@" runs in a subshell under `set -e`,
# so a failing step inside a function stops it; call this as a plain command, not from `if`, `||`
# or `&&`, where bash ignores `set -e` in everything it runs, this subshell included.
in_fresh_tmpdir() {
  local tmp status=0 left
  tmp=$(mktemp -d "${fresh_tmp_parent:-${TMPDIR:-/tmp}}/epsjoin-test-run.XXXXXX")
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
    note "the tests left these behind in TMPDIR (now removed):"
    echo "$left" >&2
    ((status != 0)) || status=1
  fi
  return "$status"
}

# run_ctest BUILD_DIR LABEL [CTest arguments]: CTest on every core; one summary line, the whole
# log only when a test fails.
run_ctest() {
  local build=$1 label=$2
  shift 2
  mkdir -p "$build/Testing"
  local log=$build/Testing/ctest.log start=$SECONDS status=0
  note "$label: running the tests ($(nproc) at a time; log in $log)"
  (cd "$build" && ctest --output-on-failure --parallel "$(nproc)" "$@") >"$log" 2>&1 || status=$?
  local elapsed=$((SECONDS - start)) summary skipped
  summary=$(grep -E '[0-9]+% tests passed' "$log" | tail -1 || true)
  skipped=$(grep -c -F '***Skipped' "$log" || true)
  if ((status != 0)); then
    cat "$log"
    note "$label FAILED after ${elapsed} s: ${summary:-ctest exited with $status} (log: $log)"
    return "$status"
  fi
  note "$label: ${summary}, ${skipped} skipped, ${elapsed} s (log: $log)"
}

# Without a GPU to run them, the GPU engines are compiled for one architecture (sm_90, that of the
# GPU machine their tests run on) rather than two: every kernel is still compiled and linked, at
# half the cost (one architecture's CUDA objects took 900 s of one core in a build's log).
stage_tests() {
  local cuda_archs=()
  if ! { [[ -e /dev/nvidia0 ]] && nvidia-smi -L >/dev/null 2>&1; }; then
    cuda_archs=(-DCMAKE_CUDA_ARCHITECTURES="${EPSJOIN_CUDA_ARCHITECTURES:-90}")
  fi
  "$root/scripts/setup.sh"
  "$root/scripts/build.sh" "$root/build" -DEPSJOIN_CUDA="${EPSJOIN_CUDA:-AUTO}" "${cuda_archs[@]}"
  in_fresh_tmpdir run_ctest "$root/build" tests "${ctest_args[@]}"
}

pytest_in_tmpdir() {
  # Run from the tests' folder so the installed package, not python/epsjoin, is imported. pytest
  # keeps its tmp_path folders under --basetemp for inspection; they go with it here.
  local status=0
  cd "$root/python/tests"
  "$venv/bin/python" -m pytest -q -p no:cacheprovider --basetemp "$TMPDIR/pytest" . || status=$?
  rm -rf "$TMPDIR/pytest"
  return "$status"
}

# The tests run against what a user installs: the CPU wheel (CPU-only as there is no GPU to test
# the GPU engines here, and nvcc would compile every CUDA source again), in a venv made anew each
# run, so nothing of the source tree or of an earlier install is imported.
stage_python() {
  local python=${PYTHON:-python3} start=$SECONDS version cmake_version program_version=""
  cmake_version=$(sed -n 's/^project(epsjoin VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
  "$root/scripts/build-wheels.sh" --cpu
  note "python: CPU wheel built in $((SECONDS - start)) s"
  venv=${EPSJOIN_VENV:-$root/build/wheel-test-venv}
  "$python" -m venv --clear "$venv"
  # Satisfied pins come from pip's cache, without network. Then the wheel from dist/ alone (pip
  # picks the one for this Python, and no index can offer another epsjoin).
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r "$root/python/requirements-test.txt"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index \
    --find-links "$root/dist" "epsjoin==$cmake_version"
  version=$(cd / && "$venv/bin/python" -c 'import epsjoin; print(epsjoin.__version__)')
  note "python: installed epsjoin $version from dist/ into $venv ($("$venv/bin/python" --version))"
  # One version: the installed package's is CMakeLists.txt's, and the program's when it is built.
  if [[ -x $root/build/epsjoin ]]; then program_version=$("$root/build/epsjoin" --version); fi
  if [[ $version != "$cmake_version" ||
        ( -n $program_version && $program_version != "epsjoin $version" ) ]]; then
    note "python: epsjoin.__version__ is $version; CMakeLists.txt says $cmake_version," \
         "build/epsjoin --version '${program_version:-not built}'"
    return 1
  fi
  in_fresh_tmpdir pytest_in_tmpdir
}

sanitized_ctest() {
  # Every sanitizer report is fatal (the build says so); UBSan's also shows where it came from.
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
  run_ctest "$root/build-asan" sanitize -L cpu "${ctest_args[@]}"
}

# The CPU suite under AddressSanitizer and UBSan: CMakePresets.json's `asan` preset, build-asan/
# (-O1 with line tables: the longest tests take a third to a quarter of their CPU time at -O0; the
# GPU code is not instrumented, and without a GPU its tests skip anyway). clang, not g++: it
# builds the same folder's fuzz targets too, and compiles cpu-grid's largest file under the
# sanitizers in 2 min where g++ took 19.
stage_sanitize() {
  "$root/scripts/setup.sh" --fuzz
  # cmake reads presets from the current folder.
  (cd "$root" && cmake --preset asan && cmake --build --preset asan --parallel "$(nproc)")
  in_fresh_tmpdir sanitized_ctest
}

# /dev/shm when there is one: the text, .npy and raw targets write and read back a file on every
# input, 4-5x slower on a disk (fuzz_text: 3,700-5,800 executions a second against 19,000-25,000).
# After the sanitize stage the targets are built already.
stage_fuzz() {
  "$root/scripts/setup.sh" --fuzz
  local fresh_tmp_parent=${TMPDIR:-/tmp}
  if [[ -d /dev/shm && -w /dev/shm ]]; then fresh_tmp_parent=/dev/shm; fi
  in_fresh_tmpdir "$root/scripts/run-fuzz.sh" --seconds "$fuzz_seconds"
}

IFS=, read -r -a selected <<<"$stages"
for s in "${selected[@]}"; do
  case $s in
    tests|python|sanitize|fuzz) ;;
    *) echo "run-tests.sh: unknown stage '$s' (tests, python, sanitize, fuzz)" >&2; exit 2 ;;
  esac
done
i=0
for s in "${selected[@]}"; do
  i=$((i + 1))
  note "[$i/${#selected[@]}] $s ($(minutes $((SECONDS - run_start))) so far)"
  start=$SECONDS
  "stage_$s"
  summaries+=("$s $(minutes $((SECONDS - start)))")
done
times=$(printf '%s, ' "${summaries[@]}")
note "all ${#selected[@]} stages passed in $(minutes $((SECONDS - run_start))) (${times%, })"
