#!/usr/bin/env bash
# lbjoin's benchmark on the GPU machine: writes the papers' Expo datasets once (as .npy, so each
# run loads them instead of regenerating), then runs a scenario file with run_scenarios.py.
# usage: bench/lbjoin_device.sh PATH/TO/epsjoin OUT_DIR SCENARIOS [REPEAT]
set -euo pipefail
bin=$1
out=$2
scenarios=$3
repeat=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
data=/tmp/epsjoin-bench
mkdir -p "$data" "$out"
# Every dataset the scenario file names as /tmp/epsjoin-bench/NAME.npy, NAME like Expo4D2M,
# Uniform4D2M or Expo2D10M.
for name in $(grep -o '/tmp/epsjoin-bench/[A-Za-z0-9]*\.npy' "$scenarios" | sort -u | xargs -r -n1 basename); do
  [[ -f $data/$name ]] && continue
  stem=${name%.npy}
  [[ $stem =~ ^(Expo|Uniform)([0-9]+)D([0-9]+)M$ ]] || { echo "cannot make $name" >&2; exit 2; }
  d=${BASH_REMATCH[2]}
  n=$((BASH_REMATCH[3] * 1000000))
  if [[ ${BASH_REMATCH[1]} == Expo ]]; then
    "$bin" gen "expo:$d:$n" --paper --output "$data/$name"
  else
    "$bin" gen "uniform:$d:$n" --output "$data/$name"
  fi
done
python3 "$here/run_scenarios.py" "$scenarios" --bin "$bin" --out "$out" --repeat "$repeat" --timeout 120
