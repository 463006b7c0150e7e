#!/usr/bin/env bash
# Builds the libFuzzer targets (build-fuzz/, clang, ASan + UBSan, CPU only) and runs them one
# after the other, each on one core, from the seeds in fuzz/corpus/ plus what earlier runs found.
# Usage: scripts/run-fuzz.sh [--runs N | --seconds S] [TARGET...]
#   default: 60 seconds each, every target (fuzz_text fuzz_npy fuzz_raw fuzz_generate_spec
#   fuzz_cli_args fuzz_csr). Stops at the first crash, leak or hang; the input is kept under
#   build-fuzz/fuzz/work/TARGET/artifacts/. See docs/fuzzing.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${EPSJOIN_FUZZ_BUILD:-$root/build-fuzz}
limit=(-max_total_time=60)
targets=()
while (($#)); do
  case $1 in
    --runs) limit=(-runs="$2"); shift 2 ;;
    --seconds) limit=(-max_total_time="$2"); shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) ||
  targets=(fuzz_text fuzz_npy fuzz_raw fuzz_generate_spec fuzz_cli_args fuzz_csr)

"$root/scripts/setup.sh" --fuzz
generator=()
if command -v ninja >/dev/null && [[ ! -f $build/CMakeCache.txt ]]; then
  generator=(-G Ninja)
fi
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++-14 -DEPSJOIN_FUZZ=ON -DEPSJOIN_CUDA=OFF \
  -DEPSJOIN_BUILD_TESTS=OFF -DEPSJOIN_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]}"

declare -A seeds=([fuzz_text]=text [fuzz_npy]=npy [fuzz_raw]=raw [fuzz_generate_spec]=spec
                  [fuzz_cli_args]=cli [fuzz_csr]=csr)
for t in "${targets[@]}"; do
  seed=${seeds[$t]}
  work=$build/fuzz/work/$t
  mkdir -p "$work/corpus" "$work/artifacts"
  dict=()
  [[ -f $root/fuzz/$seed.dict ]] && dict=(-dict="$root/fuzz/$seed.dict")
  echo "== $t (${limit[*]})"
  "$build/fuzz/$t" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "${dict[@]}" -artifact_prefix="$work/artifacts/" "$work/corpus" "$root/fuzz/corpus/$seed" \
    2>&1 | tee "$work/last-run.log" | grep -E "INITED|DONE|ERROR|SUMMARY|broken|Test unit|^stat::"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "$t failed: see $work/last-run.log" >&2; exit 1; }
done
