#!/usr/bin/env bash
# Downloads, here, the wheels epsjoin.dask needs on the GPU machine, whose python3 (3.12) has
# numpy, scipy, CuPy and PyTorch but neither Dask nor dask-cuda: dask, distributed, pandas and
# dask-cuda with their dependencies, as cp312 manylinux wheels, into WHEEL_DIR. Carry that
# folder (beside the epsjoin CUDA wheel, or as its own) and install it with
# scripts/device-python.sh, which installs every wheel of a folder without resolving anything.
#
# usage: scripts/fetch-dask-wheels.sh WHEEL_DIR [--ucx]
#   --ucx  also distributed-ucxx for CUDA 13, UCX and RMM (about 52 MB more), so that
#          dask-cuda's workers can move device arrays with protocol="ucx" (NVLink between GPUs).
#          With the epsjoin wheel that is more than one device call carries (64 MiB): carry
#          them in two calls to a warm machine, each installing into the same --target.
# Left out, as the GPU machine has them or nothing here needs them: numpy, pandas, pyarrow,
# cuda-core, cuda-pathfinder and cuda-bindings (its own, which CuPy and PyTorch were built
# beside), and bokeh, pillow, contourpy and xyzservices (the dashboard's, which the benchmarks
# turn off). About 6 MB.
set -euo pipefail
dir=${1:?usage: scripts/fetch-dask-wheels.sh WHEEL_DIR [--ucx]}
extra=()
[[ ${2:-} == --ucx ]] && extra=(distributed-ucxx-cu13)
mkdir -p "$dir"
python=${PYTHON:-python3}
"$python" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
  --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$dir" \
  "dask-cuda>=25" "dask[dataframe,distributed]" pandas "${extra[@]}"
for left_out in numpy pandas pyarrow cuda_core cuda_pathfinder cuda_bindings bokeh pillow \
    contourpy xyzservices; do
  rm -f "$dir/$left_out"-*.whl
done
du -sh "$dir"
