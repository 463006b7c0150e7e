#!/usr/bin/env bash
# The multi-GPU run of issues 29 and 30 on a machine of several GPUs: the GPU tests of the split
# (every GPU engine on every visible device against one device), then bench/multi_gpu.py on 1, 2,
# 4, ... of its GPUs in the same run. NVLink multicast stays off (NCCL_NVLS_ENABLE=0).
#
# usage: bench/multi_gpu_device.sh BUILD_DIR OUT_DIR [bench/multi_gpu.py options]
set -uo pipefail
build=$1 out=$2
shift 2
export NCCL_NVLS_ENABLE=0
mkdir -p "$out"
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader | tee "$out/gpus.txt"
nvidia-smi topo -m > "$out/topology.txt" 2>&1
gpus=$(nvidia-smi -L | wc -l)
counts=1
for g in 2 4 8; do [ "$g" -le "$gpus" ] && counts="$counts,$g"; done
EPSJOIN_REQUIRE_GPU=1 "$build"/tests/epsjoin_gpu_tests --gtest_filter='multi_gpu.*' \
  > "$out/gpu_tests.txt" 2>&1
echo "multi_gpu tests: exit $? ($(grep -c '^\[       OK' "$out/gpu_tests.txt") passed)"
tail -3 "$out/gpu_tests.txt"
python3 "$(dirname "$0")"/multi_gpu.py "$build"/epsjoin --gpus "$counts" --out "$out/multi_gpu.jsonl" "$@"
