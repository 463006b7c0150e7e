#!/usr/bin/env bash
# The maintained benchmark set on the GPU machine: every scenario of bench/scenarios/ (one per
# headline of bench/RESULTS.md) through lbjoin_device.sh, then the brute-force runs of ted-join
# and meta-16q against cuBLAS. One join a scenario line (--repeat 1 here; the scenario files that
# want medians pass epsjoin's own --repeat).
# usage: bench/run_all.sh BUILD_DIR OUT_DIR [--list]
#   BUILD_DIR holds epsjoin and bench/cublas_join (scripts/device-bundle.sh's build-device).
#   --list prints the commands instead of running them.
# Writes OUT_DIR/<scenario>/results.{jsonl,csv,md} and OUT_DIR/brute-{ted-join,meta-16q}/.
set -euo pipefail
build=$1
out=$2
list=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
run() {
  if [[ $list == --list ]]; then echo "$*"; else "$@"; fi
}
for scenarios in "$here"/scenarios/*.txt; do
  name=$(basename "$scenarios" .txt)
  run "$here/lbjoin_device.sh" "$build/epsjoin" "$out/$name" "$scenarios" 1
done
run env ENGINES=ted-join "$here/brute_device.sh" "$build" "$out/brute-ted-join"
run env ENGINES=meta-16q DIMS=256 "$here/brute_device.sh" "$build" "$out/brute-meta-16q"
