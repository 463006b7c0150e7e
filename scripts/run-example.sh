#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job on built-in example data: a generated
# 2-D exponential point set (the papers' Expo2D) joined at a selectivity near 100.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$root/build" >/dev/null
# Sized so the engines that exist finish in seconds; grow it as faster engines land.
exec "$root/build/epsjoin" join --generate expo:2:2000000 --eps 0.0002 --engine auto "$@"
