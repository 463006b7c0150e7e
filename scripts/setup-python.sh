#!/usr/bin/env bash
# Builds and installs the Python package into a virtual environment (build/python-venv, or
# $EPSJOIN_VENV), with its build and test requirements from PyPI (python/requirements-dev.txt).
# Usage: scripts/setup-python.sh [--editable]
# The extension is compiled from this checkout's CMake project in build/python/ (incremental).
# EPSJOIN_CUDA=AUTO|ON|OFF chooses the GPU engines as for the C++ build; this script defaults to
# OFF (CPU-only), which is what the test run uses: there is no GPU to test them here, and nvcc
# would compile every CUDA source a second time. Set EPSJOIN_CUDA=AUTO for the GPU engines.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${EPSJOIN_VENV:-$root/build/python-venv}
python=${PYTHON:-python3}
editable=()
[[ ${1:-} == --editable ]] && editable=(--editable)

"$root/scripts/setup.sh"
if [[ ! -x $venv/bin/python ]]; then
  "$python" -m venv "$venv"
fi
# Satisfied pins need no network.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$root/python/requirements-dev.txt"

config=()
if command -v ccache >/dev/null; then
  config+=(-Ccmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache
           -Ccmake.define.CMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
fi
export EPSJOIN_CUDA=${EPSJOIN_CUDA:-OFF}
# No build isolation: the pinned nanobind and scikit-build-core above build it, offline. -v shows
# CMake's and Ninja's progress through the minutes a first build takes.
"$venv/bin/python" -m pip install -v --disable-pip-version-check --no-build-isolation \
  "${config[@]}" "${editable[@]}" "$root"
echo "epsjoin: Python package installed in $venv (EPSJOIN_CUDA=$EPSJOIN_CUDA)" >&2
