#!/usr/bin/env bash
# Issue 8's brute force against N (dissertation fig. 6.2) on the GPU machine: uniform points in
# 16, 64, 128 and 256 dimensions, N = 2^18, 2^19, 2^20, through meta-16q and ted-join (both with
# mode=brute-force; ted-join up to 128-D), counts only, one join each.
# usage: bench/meta_brute_sweep.sh PATH/TO/epsjoin OUT_DIR
#   ENGINES: the engines, ENGINE[:key=value,...] each (default "meta-16q ted-join"); LIMIT: the
#   seconds one join may take (default 300; a join past it is reported and the rest go on).
# Writes OUT_DIR/sweep.jsonl (one --json summary a line, with "config": the ENGINES entry) and
# OUT_DIR/sweep.md.
set -euo pipefail
bin=$1
out=$2
mkdir -p "$out" /tmp/epsjoin-bench
: > "$out/sweep.jsonl"
for d in 16 64 128 256; do
  # bench/brute_device.sh's radii: a few neighbours a point at 2^20.
  case $d in 16) eps=0.58 ;; 64) eps=2.2 ;; 128) eps=3.58 ;; 256) eps=5.0 ;; esac
  for n in 262144 524288 1048576; do
    file=/tmp/epsjoin-bench/Uniform${d}D${n}.npy
    [[ -f $file ]] || "$bin" gen "uniform:$d:$n" --output "$file"
    for spec in ${ENGINES:-meta-16q ted-join}; do
      engine=${spec%%:*}
      # ted-join's FP64 brute force at 256-D takes minutes (bench/RESULTS.md, issue 7).
      [[ $engine == ted-join ]] && ((d > 128)) && continue
      params=(--param mode=brute-force)
      if [[ $spec == *:* ]]; then
        IFS=, read -ra pairs <<< "${spec#*:}"
        for pair in "${pairs[@]}"; do params+=(--param "$pair"); done
      fi
      if line=$(timeout "${LIMIT:-300}" "$bin" join --input "$file" --eps "$eps" --engine "$engine" \
                  "${params[@]}" --json --quiet); then
        python3 -c 'import json, sys; r = json.loads(sys.argv[1]); r["config"] = sys.argv[2]; print(json.dumps(r))' \
          "$line" "$spec" >> "$out/sweep.jsonl"
      else
        echo "meta_brute_sweep.sh: $spec d=$d n=$n failed or passed ${LIMIT:-300} s" >&2
      fi
    done
  done
done
python3 - "$out" <<'PY' | tee "$out/sweep.md"
import json, os, sys
rows = [json.loads(l) for l in open(os.path.join(sys.argv[1], "sweep.jsonl")) if l.startswith("{")]
print("| d | N | engine | seconds | count kernel s | TFLOP/s (2 N^2 d / s) |")
print("| ---: | ---: | --- | ---: | ---: | ---: |")
for r in rows:
    n, d, s = r["n"], r["d"], r["seconds"]
    k = float(r["notes"].get("count kernel seconds", "nan"))
    print(f"| {d} | {n} | {r.get('config', r['engine'])} | {s:.3f} | {k:.3f} | {2 * n * n * d / s / 1e12:.1f} |")
PY
