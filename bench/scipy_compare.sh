#!/bin/bash
# Issue 3's outside target: cpu-grid (1 thread) against scipy's cKDTree.query_pairs (tree build
# included, one thread) and cpu-rtree, on the same file of Expo2D 1M points at S ~ 100.
# Rounds interleave the three so that a noisy machine disturbs them alike.
#   bench/scipy_compare.sh [BIN [OUT [EPS [ROUNDS]]]]
# Writes OUT/scipy_compare.jsonl (one JSON line a run; every line has "pairs" = ordered pairs).
set -euo pipefail
BIN=${1:-build-cpu/epsjoin}
OUT=${2:-bench-out/scipy}
EPS=${3:-0.000283515}
ROUNDS=${4:-3}
mkdir -p "$OUT"
DATA="$OUT/expo2d_1m.f64"
LOG="$OUT/scipy_compare.jsonl"
: > "$LOG"
"$BIN" gen expo:2:1000000 --output "$DATA" --format f64
for r in $(seq "$ROUNDS"); do
  "$BIN" join --input "$DATA" --dim 2 --eps "$EPS" --engine cpu-grid --threads 1 --json \
    --format count >> "$LOG"
  python3 bench/scipy_baseline.py "$DATA" --dim 2 --eps "$EPS" >> "$LOG"
  "$BIN" join --input "$DATA" --dim 2 --eps "$EPS" --engine cpu-rtree --threads 1 --json \
    --format count >> "$LOG"
done
python3 - "$LOG" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in runs:
    by.setdefault(r["engine"], []).append(r)
for e, rs in by.items():
    t = [r["seconds"] for r in rs]
    print(f'{e:14s} pairs {sorted({r["pairs"] for r in rs})} seconds {[round(x, 3) for x in t]} '
          f'median {statistics.median(t):.3f}')
PY
