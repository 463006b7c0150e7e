#!/usr/bin/env bash
# Runs hegjoin's host-side stress tests under ThreadSanitizer: the work deque
# (tests/unit/test_work_deque.cpp) and the CPU side sharing it with a fake GPU thread
# (tests/unit/test_split_join.cpp; its super-ego side too). Both build alone, from their few
# sources, in a minute or two, without a sanitized library.
# usage: scripts/tsan-deque.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cxx=${CXX:-g++}
flags=(-std=c++20 -O1 -g -fsanitize=thread -I"$root/src" -I"$root/include")
"$cxx" "${flags[@]}" "$root/tests/unit/test_work_deque.cpp" -lgtest -lgtest_main -pthread \
  -o "$out/test_work_deque"
TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" "$out/test_work_deque"

"$cxx" "${flags[@]}" "$root/tests/unit/test_split_join.cpp" "$root"/src/hetero/split_join_*.cpp \
  "$root/src/hetero/cpu_rows.cpp" "$root/src/hetero/partition.cpp" "$root/src/hetero/cpu_ego.cpp" "$root/src/core/table_memory.cpp" \
  "$root/src/base/thread_pool.cpp" "$root/src/base/float_band.cpp" \
  "$root"/src/cpu/super_ego/{dim_order,ego_chunks,ego_prepare,ego_sort,ego_tree,parallel_sort}.cpp \
  -lgtest -lgtest_main -pthread \
  -o "$out/test_split_join"
TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" "$out/test_split_join"
