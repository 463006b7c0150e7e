#!/usr/bin/env bash
# Configures and builds epsjoin on every core. Usage: scripts/build.sh [BUILD_DIR] [extra CMake
# arguments]. Defaults: build/ in Release; set BUILD_TYPE=Debug for a debug build, or pass
# -DEPSJOIN_SANITIZE=ON for ASan/UBSan. TARGETS="epsjoin_cli ..." builds those targets alone
# (scripts/run-example.sh builds only the program), not every test. Uses Ninja when it is there.
# CMake's and the build tool's own output is the progress report.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
generator=()
if command -v ninja >/dev/null && [[ ! -f $build/CMakeCache.txt ]]; then
  generator=(-G Ninja)
fi
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "$@"
targets=()
[[ -z ${TARGETS:-} ]] || read -r -a targets <<<"--target $TARGETS"
cmake --build "$build" --parallel "$(nproc)" "${targets[@]}"
