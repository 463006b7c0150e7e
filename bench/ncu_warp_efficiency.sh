#!/usr/bin/env bash
# Warp execution efficiency of lbjoin's counting kernel under Nsight Compute, for each
# configuration given: the average number of active threads per executed warp instruction
# (smsp__thread_inst_executed_per_inst_executed.ratio, out of 32) and the kernel's duration.
# usage: bench/ncu_warp_efficiency.sh PATH/TO/epsjoin DATA.npy EPS CONFIG... (CONFIG: k=v,k=v or -)
set -euo pipefail
bin=$1 data=$2 eps=$3
shift 3
for config in "$@"; do
  params=()
  if [[ $config != - ]]; then
    IFS=, read -ra kv <<<"$config"
    for p in "${kv[@]}"; do params+=(--param "$p"); done
  fi
  echo "== $(basename "$data") eps $eps lbjoin ${config}"
  ncu --clock-control none --csv --kernel-name regex:'tiled_kernel|query_kernel' \
      --metrics smsp__thread_inst_executed_per_inst_executed.ratio,gpu__time_duration.sum \
      "$bin" join --input "$data" --eps "$eps" --engine lbjoin "${params[@]}" --format count --quiet \
    | grep -E 'smsp__thread_inst|gpu__time' | awk -F'","' '{print $(NF-2), $NF}' | tr -d '"'
done
