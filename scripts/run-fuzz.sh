#!/usr/bin/env bash
# Builds the libFuzzer targets (CMakePresets.json's `asan`: build-asan/, clang, ASan + UBSan, CPU
# only, the build of run-tests.sh's sanitize stage) and runs them one after the other, each on one
# core, from the seeds in fuzz/corpus/ plus what earlier runs found.
# Usage: scripts/run-fuzz.sh [--runs N | --seconds S] [TARGET...]
#   default: 60 seconds each, every target (fuzz_text fuzz_npy fuzz_raw fuzz_generate_spec
#   fuzz_cli_args fuzz_csr). Stops at the first crash, leak or hang; the input is kept under
#   build-asan/fuzz/work/TARGET/artifacts/. EPSJOIN_FUZZ_BUILD=DIR builds in DIR instead.
#   See docs/fuzzing.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${EPSJOIN_FUZZ_BUILD:-$root/build-asan}
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
# cmake reads presets from the current folder.
(cd "$root" && cmake --preset asan -B "$build" >/dev/null)
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
