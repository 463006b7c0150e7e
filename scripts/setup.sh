#!/usr/bin/env bash
# Installs what epsjoin needs to build and test, from Debian's archive, when it is missing.
# Idempotent: does nothing (and needs no network) when everything is present.
# --fuzz: also clang and its libFuzzer and sanitizer runtimes, for the sanitized build (the
# `asan` preset: run-tests.sh's sanitize and fuzz stages, scripts/run-fuzz.sh).
# Open MPI is optional to the build (-DEPSJOIN_MPI=AUTO finds it or leaves it out); installed here
# so that the default build has `epsjoin mpi-join` and the test run covers it.
set -euo pipefail

packages=(cmake ninja-build g++ make libgtest-dev libgmock-dev libbenchmark-dev libboost-dev
          nlohmann-json3-dev python3 python3-venv python3-dev libopenmpi-dev openmpi-bin)
[[ ${1:-} == --fuzz ]] && packages+=(clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "epsjoin setup: installing ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "epsjoin setup: run as root or install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
# apt's own progress is the report; debconf's warning about apt-utils is noise here.
export DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "epsjoin setup: done" >&2
