#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: build Release for the local GPU (unless a build folder with
# up-to-date binaries is already there, e.g. carried from another machine), run the tests
# labelled `gpu` with EPSJOIN_REQUIRE_GPU=1, run compute-sanitizer over a small GPU case and a
# short smoke benchmark, and copy the logs to --logs DIR (or $EPSJOIN_LOG_DIR).
#
# usage: scripts/device-check.sh [--logs DIR] [--build DIR] [--rebuild] [--no-sanitizer]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-device
logs=${EPSJOIN_LOG_DIR:-}
rebuild=0
sanitizer=1
while (($#)); do
  case $1 in
    --logs) logs=$2; shift 2 ;;
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --rebuild) rebuild=1; shift ;;
    --no-sanitizer) sanitizer=0; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "device-check: unknown argument $1" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
log=$work/device-check.log
status=0
say() { echo "device-check: $*" | tee -a "$log"; }
step() {  # step NAME COMMAND...: runs, logs to NAME.log, records failure without stopping
  local name=$1; shift
  say "== $name: $*"
  if "$@" >"$work/$name.log" 2>&1; then say "   $name: ok"; else say "   $name: FAILED (exit $?)"; status=1; fi
  tail -n 25 "$work/$name.log" | tee -a "$log"
}
finish() {
  if [[ -n $logs ]]; then mkdir -p "$logs" && cp "$work"/*.log "$logs"/ && say "logs copied to $logs"; fi
  exit $status
}

export EPSJOIN_REQUIRE_GPU=1
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader | tee -a "$log"
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1 | tr -d '. ')
else
  say "no nvidia-smi: this machine has no usable NVIDIA GPU"; status=1; finish
fi

# A build folder carried from another machine still names that machine's paths; point its
# CTest files at this checkout instead, so ctest runs the carried binaries here.
relocate() {
  local cache=$build/CMakeCache.txt old_src old_bin
  old_src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
  old_bin=$(sed -n 's/^epsjoin_BINARY_DIR:STATIC=//p' "$cache")
  if [[ -n $old_bin && $old_bin != "$build" ]]; then
    say "build folder was made at $old_bin; relocating its CTest files to $build"
    grep -rlF --include='*.cmake' "$old_bin" "$build" | xargs -r sed -i "s|$old_bin|$build|g"
  fi
  if [[ -n $old_src && $old_src != "$root" ]]; then
    grep -rlF --include='*.cmake' "$old_src" "$build" | xargs -r sed -i "s|$old_src|$root|g"
  fi
}

up_to_date() {  # binaries present and newer than every source file
  [[ -x $build/epsjoin && -f $build/CMakeCache.txt ]] || return 1
  local newest
  newest=$(find "$root/src" "$root/include" "$root/tools" "$root/tests" "$root/CMakeLists.txt" \
                -type f -newer "$build/epsjoin" -print -quit)
  [[ -z $newest ]]
}

if ((rebuild == 0)) && up_to_date; then
  say "binaries in $build are newer than the sources: skipping the build"
  relocate
else
  if [[ -f $build/CMakeCache.txt ]]; then
    maker=$(sed -n 's/^CMAKE_MAKE_PROGRAM:FILEPATH=//p' "$build/CMakeCache.txt")
    if [[ -n $maker && ! -x $maker ]]; then
      stale=$(find "$root/src" "$root/include" "$root/tools" "$root/tests" "$root/CMakeLists.txt" \
                   -type f -newer "$build/epsjoin" -print -quit 2>/dev/null)
      say "$build was configured on another machine ($maker is not here) and is out of date"
      say "(${stale:-its binaries are missing} is newer): rebuild it there with scripts/device-bundle.sh"
      status=1; finish
    fi
    relocate
  fi
  gen=(); command -v ninja >/dev/null && [[ ! -f $build/CMakeCache.txt ]] && gen=(-G Ninja)
  step configure cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
       -DEPSJOIN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch"
  step build cmake --build "$build" --parallel "$(nproc)"
  ((status == 0)) || finish
fi

step info "$build/epsjoin" info
if (cd "$build" && ctest -N -L gpu | grep -q 'Total Tests: 0'); then
  say "no tests are labelled gpu yet: nothing to run on the GPU"
else
  step gpu-tests bash -c "cd '$build' && ctest -L gpu -V --timeout 600"
fi
# Memcheck runs the tests sized for the sanitizers and the small tests of the delivery paths (the
# pinned ring, rows placed on the host, device-resident inputs, the shards of a multi-device join,
# DBSCAN's device merge). Racecheck, which only sees shared memory and is 10-50x slower, runs the
# engines' own cases and the merge: the delivery paths add no kernel of their own.
memcheck_tests='*sanitizer_case*:gpu_row_blocks.*:device_views.*:dbscan_gpu.device_merge_small'
racecheck_tests='*sanitizer_case*:dbscan_gpu.device_merge_small:-multi_gpu.*'
if ((sanitizer)) && command -v compute-sanitizer >/dev/null && [[ -x $build/tests/epsjoin_gpu_tests ]]; then
  step sanitizer-memcheck compute-sanitizer --tool memcheck --error-exitcode 1 \
       "$build/tests/epsjoin_gpu_tests" --gtest_filter="$memcheck_tests"
  step sanitizer-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 \
       "$build/tests/epsjoin_gpu_tests" --gtest_filter="$racecheck_tests"
fi
step smoke-bench bash "$root/bench/smoke.sh" "$build/epsjoin"
finish
