#!/bin/bash
# The cpu-grid measurements of bench/RESULTS-grid.md: run from the repository root after a
# Release build; results go to $OUT/results.txt (or ./grid_results.txt).
B=${B:-build/bench/grid_bench}
R=${OUT:-.}/results.txt
log() { echo "$@" | tee -a $R; }
run() { log "## grid_bench $*"; $B "$@" 2>&1 | tee -a $R; }
log "# $(date -u) $(nproc) cpus"; lscpu | grep -E "Model name|Socket|Core|Thread|L2|L3|Flags" | sed 's/Flags:.*\(avx512f\).*/Flags: ... avx512f .../' | tee -a $R
E2=0.000283515
run join --n 1e6 --eps $E2 --threads 1,2,4,8,16 --reps 3
run join --n 1e6 --eps $E2 --threads 1,2,16 --reps 3 precision=f32
run join --n 1e6 --eps $E2 --threads 1,2,16 --reps 3 --sink null
run join --n 1e6 --eps $E2 --threads 1,2 --reps 3 --sink null precision=f32
run join --n 1e6 --eps $E2 --threads 1,2 --reps 3 pattern=unicomp
run join --n 1e6 --eps $E2 --threads 1,2 --reps 3 pattern=full
run join --n 1e6 --eps $E2 --threads 1,2 --reps 3 simd=baseline
run join --n 1e6 --eps $E2 --threads 1,2 --reps 3 --sink csr
for d in 3 4 5 6; do run join --d $d --n 1e6 --sel 100 --threads 1,2,16 --reps 2; done
run join --n 1e7 --sel 100 --threads 1,2,16 --reps 1
run sort --n 1e7 --bits 26 --threads 1,2,4,8,16 --reps 3
run lookup --n 1e6 --eps $E2 --threads 1 --reps 3
run lookup --d 4 --n 1e6 --eps 0.00351824 --threads 1 --reps 2
