#!/bin/bash
# The cpu-grid measurements of docs/bench-history/cpu.md ("eps-grid and cpu-grid: measurements"):
# run from the repository root after a Release build (B names another grid_bench binary); results go to $OUT/results.txt, or to
# ./results.txt. eps values give S ~ 100 on the bench's Expo data (found with --sel 100).
B=${B:-build/bench/grid_bench}
R=${OUT:-.}/results.txt
log() { echo "$@" | tee -a $R; }
run() { log "## grid_bench $*"; $B "$@" 2>&1 | tee -a $R; }
log "# $(date -u) $(nproc) cpus"; lscpu | grep -E "Model name|Core|L2|L3" | tee -a $R
E2=0.000283515
# Expo2D 1e6, S = 100: threads, sinks, precision, patterns, SIMD, gather.
run join --n 1e6 --eps $E2 --threads 1,2,4,16 --reps 3
run join --n 1e6 --eps $E2 --threads 1,2,16 --reps 3 precision=f32
run join --n 1e6 --eps $E2 --threads 1,2,16 --reps 3 --sink null
run join --n 1e6 --eps $E2 --threads 1,2 --reps 3 --sink null precision=f32
run join --n 1e6 --eps $E2 --threads 1,2 --reps 3 pattern=unicomp
run join --n 1e6 --eps $E2 --threads 1,2 --reps 3 pattern=full
run join --n 1e6 --eps $E2 --threads 1,2 --reps 3 gather=off
run join --n 1e6 --eps $E2 --threads 1,2 --reps 3 simd=baseline
# Expo3D..6D 1e6, S = 100.
run join --d 3 --n 1e6 --eps 0.00147652 --threads 1,2,16 --reps 3
run join --d 4 --n 1e6 --eps 0.00351967 --threads 1,2,16 --reps 3
run join --d 5 --n 1e6 --eps 0.00613647 --threads 1,2,16 --reps 1
run join --d 6 --n 1e6 --eps 0.00910595 --threads 1,2,16 --reps 1
# Expo2D 1e7, S ~ 100.
run join --n 1e7 --eps 8.9655e-05 --threads 1,2,16 --reps 1
# Index pieces.
run sort --n 1e7 --bits 26 --threads 1,2,16 --reps 2
run lookup --n 1e6 --eps $E2 --threads 1 --reps 3
# Early exit: row layout with a check every 0 (never) / 8 / 16 / 32 dims, and the column layout.
for ee in 0 8 16; do run join --d 8 --n 2e5 --eps 0.022 --threads 1 --reps 1 layout=rows early_exit=$ee; done
run join --d 8 --n 2e5 --eps 0.022 --threads 1 --reps 1 layout=columns
for ee in 0 16; do run join --dist uniform --d 16 --n 2e4 --eps 0.8123 --threads 1 --reps 1 early_exit=$ee; done
for ee in 0 8 16; do run join --dist uniform --d 64 --n 2e4 --eps 2.45 --threads 1 --reps 1 early_exit=$ee; done
for ee in 0 8 16; do run join --d 32 --n 5e4 --eps 0.09 --threads 1 --reps 1 early_exit=$ee; done
