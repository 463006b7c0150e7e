#!/usr/bin/env bash
# A short smoke benchmark: every available engine on a small Expo2D set, one JSON line each.
# usage: bench/smoke.sh PATH/TO/epsjoin [N]
set -euo pipefail
bin=$1
n=${2:-200000}
# eps for selectivity near 100 on Expo2D scales as 1/sqrt(N) (0.0017 at N = 3e4).
eps=$(python3 -c "print(0.0017 * (30000 / $n) ** 0.5)")
# The engine lines: indented under "engines:", up to the next heading.
for engine in $("$bin" info | awk '/^engines:/{on=1; next} /^[^ ]/{on=0} on && $1 != "auto" && !/unavailable/ {print $1}'); do
  if [[ $engine == brute-* && $n -gt 200000 ]]; then continue; fi
  "$bin" join --generate "expo:2:$n" --eps "$eps" --engine "$engine" --json
done
