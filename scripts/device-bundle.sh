#!/usr/bin/env bash
# Builds, on a machine without a GPU, the slim Release build that scripts/device-check.sh runs on
# the GPU machine: the program, the GPU tests and the benchmarks for one architecture, with the
# object files removed so the folder stays small enough to carry (the binaries stay newer than
# the sources, so device-check skips its own build).
# usage: scripts/device-bundle.sh [ARCH (default 90-real: SASS only, no PTX, which would double
#        the size)] [BUILD_DIR (default build-device)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:-90-real}
build=${2:-$root/build-device}
# The build itself happens in BUILD_DIR-objects, which keeps its object files so the next bundle
# is incremental; BUILD_DIR receives a copy without them.
objects=$build-objects
"$root/scripts/setup.sh"
# The GPU machine has no MPI: a program linked to this machine's libmpi would not start there.
# experiments/ is built in, so every device check runs its GPU tests too (it needs a GPU).
cmake -S "$root" -B "$objects" -G Ninja ${EPSJOIN_CMAKE_ARGS:-} -DCMAKE_BUILD_TYPE=Release -DEPSJOIN_CUDA=ON -DEPSJOIN_MPI=OFF \
      -DEPSJOIN_EXPERIMENTS=ON \
      -DCMAKE_CUDA_ARCHITECTURES="$arch" -DEPSJOIN_GPU_TESTS_ONLY=ON >/dev/null
cmake --build "$objects" --parallel "$(nproc)"
rm -rf "$build"
cp -a "$objects" "$build"
find "$build" \( -name '*.o' -o -name '*.a' \) -delete
# Neither the compiler checks of the configure step nor the CPU-only grid benchmark is run there;
# without them the bundle stays within the 64 MiB a device call carries.
rm -rf "$build"/CMakeFiles/[0-9]* "$build"/CMakeFiles/CheckCUDA "$build"/bench/grid_bench \
  "$build"/bench/index_bench
# Host symbols and ninja's dependency log are not needed there either (3-5 MB at 16 engines).
find "$build" -maxdepth 2 -type f -perm -u+x \( -name epsjoin -o -name 'epsjoin_*tests' \) \
  -exec strip --strip-unneeded {} +
rm -f "$build"/.ninja_deps
du -sh "$build"
