#!/usr/bin/env bash
# Runs hegjoin's work-deque stress test (tests/unit/test_work_deque.cpp) under ThreadSanitizer.
# The deque is header-only, so the test builds alone, in seconds, without a sanitized library.
# usage: scripts/tsan-deque.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"${CXX:-g++}" -std=c++20 -O1 -g -fsanitize=thread -I"$root/src" -I"$root/include" \
  "$root/tests/unit/test_work_deque.cpp" -lgtest -lgtest_main -pthread -o "$out/test_work_deque"
TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" "$out/test_work_deque"
