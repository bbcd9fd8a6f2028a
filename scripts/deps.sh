#!/usr/bin/env bash
# Installs the Debian 12 packages ember needs that are missing (uses sudo when not root).
# Usage: scripts/deps.sh [--libtorch] [extra packages...]
#
# Configure and build need exactly these (checked from a debootstrap --variant=minbase system):
#   cmake make g++      the toolchain (g++ brings libgomp, OpenMP's runtime and omp.h)
#   libeigen3-dev       Eigen (private to the library: not in any installed header)
#   libdnnl-dev         oneDNN (found by header and library, so its config's OpenCL
#                       requirement, ocl-icd-opencl-dev, is not needed)
#   libgtest-dev        GoogleTest, for tests/
#   libbenchmark-dev    Google Benchmark, for bench/
#   libopenmpi-dev      OpenMPI: collectives between processes (HCCL over MPI, distributed/);
#   openmpi-bin         mpirun, for the multi-process tests (configure with -DEMBER_WITH_MPI=OFF
#                       to build without them)
# scripts/fuzz.sh and scripts/test.sh's sanitizer step ask for clang, libclang-rt-14-dev (libFuzzer
# and clang's sanitizer runtimes) and libomp-dev (clang's OpenMP runtime and omp.h) themselves.
# --libtorch adds what the side-by-side benchmark (bench/ember_vs_libtorch) needs for a fair
# comparison: libtorch-dev and libopenblas0 (without it libtorch runs on the reference BLAS).
set -euo pipefail
pkgs=(cmake make g++ libeigen3-dev libdnnl-dev libgtest-dev libbenchmark-dev libopenmpi-dev openmpi-bin)
if [ "${1:-}" = "--libtorch" ]; then
  shift
  pkgs+=(libtorch-dev libopenblas0)
fi
pkgs+=("$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
