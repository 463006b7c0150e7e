#!/usr/bin/env bash
# On the GPU machine: install carried wheels (the CUDA build of the epsjoin extension for its
# python3, plus the test requirements it lacks) into a target folder, then run the Python tests
# there with EPSJOIN_REQUIRE_GPU=1, so test_gpu.py fails rather than skips without a GPU.
#
# usage: scripts/device-python.sh WHEEL_DIR [--target DIR] [--tests DIR] [-- PYTEST ARGS...]
# (pytest runs in the tests folder: every test there unless PYTEST ARGS name files, e.g.
# `-- test_gpu.py` or `-- --ignore=test_gpu.py`.)
#
# Here (no GPU needed), build the CUDA wheel for the device's Python (3.12: a cp312-abi3 wheel),
# all architectures or, quicker, sm_90 alone (docs/wheels.md):
#   PYTHON=python3.12 scripts/build-wheels.sh --cuda --dist WHEEL_DIR
#   EPSJOIN_WHEEL_CUDA_ARCHITECTURES=90-real PYTHON=python3.12 scripts/build-wheels.sh --cuda \
#     --dist WHEEL_DIR
# The device's python3 has numpy, scipy, scikit-learn and pytest; test_typing.py's mypy and
# scipy-stubs are not there: fetch them as cp312 wheels, or pass `-- --ignore=test_typing.py`:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
#     -d WHEEL_DIR mypy==2.4.1 ast-serialize librt mypy_extensions pathspec typing_extensions \
#     scipy-stubs==1.17.1.5 optype
# The device's own numpy, CuPy and PyTorch are used (the extension pins no numpy ABI: nanobind
# talks DLPack and the buffer protocol). Exit status: pytest's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
wheels=${1:?usage: scripts/device-python.sh WHEEL_DIR [--target DIR] [--tests DIR] [-- ARGS]}
shift
target=/tmp/epsjoin-site
tests=$root/python/tests
while (($#)); do
  case $1 in
    --target) target=$2; shift 2 ;;
    --tests) tests=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "device-python: unknown argument $1" >&2; exit 2 ;;
  esac
done
python=${PYTHON:-python3}
shopt -s nullglob
carried=("$wheels"/*.whl)
((${#carried[@]})) || { echo "device-python: no wheels in $wheels" >&2; exit 2; }
"$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target "$target" "${carried[@]}"
export PYTHONPATH=$target${PYTHONPATH:+:$PYTHONPATH}
export EPSJOIN_REQUIRE_GPU=1
"$python" -c 'import epsjoin, numpy; i = epsjoin.build_info(); print("epsjoin", epsjoin.__file__, "cuda", i["cuda"], i["cuda_architectures"], [d["name"] for d in i["cuda_devices"]], "numpy", numpy.__version__)'
cd "$tests"
exec "$python" -m pytest -p no:cacheprovider -q "$@"
