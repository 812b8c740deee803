#!/usr/bin/env bash
# Installs the Debian packages spccl needs. Usage: install-deps.sh [build|bench]
#   build: compilers, CMake, GoogleTest, Google Benchmark, iproute2, python3,
#          libssl-dev (libcrypto: the handshake's HMAC-SHA256, required),
#          Open MPI (launcher tests), OpenBLAS (perf/migrate_perf), UCX and
#          libibverbs (optional transport plugins), pybind11, numpy, pytest,
#          PyTorch (the Python bindings and their tests), python3-venv and
#          python3-pip (the wheel test), python3-mypy (the stub checks),
#          clang-format and clang-tidy (the checks .ci/run makes), clang and
#          libclang-rt-14-dev (libFuzzer and the sanitizer runtimes for
#          scripts/fuzz.sh's harnesses, tests/fuzz), Slurm and
#          MUNGE (ctest slurm_cluster runs a throw-away cluster on the netns
#          testbed), ccache (run-tests.sh compiles through it, so that the
#          wheel test's own CMake build of libspccl reuses the Release
#          build's objects) (default)
#   bench: build + PyTorch (Gloo peer), numpy, matplotlib
set -euo pipefail
what=${1:-build}
packages=(build-essential cmake ninja-build pkg-config libgtest-dev libgmock-dev
          libbenchmark-dev iproute2 libhwloc-dev libssl-dev python3 openmpi-bin libopenmpi-dev
          python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pytest python3-torch
          python3-venv python3-pip python3-mypy
          libopenblas-dev libucx-dev libibverbs-dev clang-format clang-tidy
          clang libclang-rt-14-dev
          slurm-wlm munge ccache)
if [ "$what" = bench ]; then
  packages+=(python3-torch python3-numpy python3-matplotlib)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  echo "install-deps: installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
