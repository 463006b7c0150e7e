#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job on built-in example data: a generated
# 2-D exponential point set (the papers' Expo2D) joined at a selectivity near 100.
#
# usage: scripts/run-example.sh [--cuda] [join options...]
# Without a GPU (nvidia-smi -L fails or /dev/nvidia0 is absent) the build is CPU-only, which
# takes a few minutes instead of a quarter of an hour; --cuda builds the GPU engines anyway (as
# a machine with a GPU and nvcc does by default). Other arguments go to 'epsjoin join'.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

cuda=AUTO
join_args=()
for arg in "$@"; do
  if [[ $arg == --cuda ]]; then cuda=ON; else join_args+=("$arg"); fi
done
if [[ $cuda == AUTO ]] && ! { [[ -e /dev/nvidia0 ]] && nvidia-smi -L >/dev/null 2>&1; }; then
  cuda=OFF
  echo "epsjoin: no GPU here, building the CPU engines only (scripts/run-example.sh --cuda builds the GPU engines too)" >&2
fi

"$root/scripts/setup.sh"
start=$SECONDS
# The program alone: the tests (most of the project's targets) are run-tests.sh's to build.
TARGETS=epsjoin_cli "$root/scripts/build.sh" "$root/build" -DEPSJOIN_CUDA="$cuda"
echo "epsjoin: built in $((SECONDS - start)) s; running the example join" >&2
# Sized so the engines that exist finish in seconds; grow it as faster engines land.
exec "$root/build/epsjoin" join --generate expo:2:2000000 --eps 0.0002 \
  "${join_args[@]+"${join_args[@]}"}"
