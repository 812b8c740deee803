#!/usr/bin/env bash
# Installs the spccl wheel the way a user would — `pip install
# ./bindings/python` into a fresh virtualenv — and runs wheel_smoke.py
# from outside the source tree. Usage: wheel_in_venv.sh WORKDIR [PYTHON]
#
# The wheel builds libspccl and the extension with CMake (scikit-build-core;
# only those two targets): about 5 minutes on 2 cores the first time. pip
# fetches scikit-build-core and pybind11 from PyPI (or the index pip is
# configured with). WORKDIR keeps CMake's build directory between runs, so
# a rerun recompiles only what changed; the virtualenv is made anew each
# time (--system-site-packages: Debian's numpy). ccache is used when
# installed; SPCCL_WHEEL_CC and SPCCL_WHEEL_CXX name the compilers (ctest
# sets the enclosing build's), so that its cache holds that build's objects.
#
# Exit 77 (skipped) only when the interpreter has no venv module or the
# virtualenv gets no pip (Debian: python3-venv); any other failure fails.
set -euo pipefail
work=${1:?usage: wheel_in_venv.sh WORKDIR [PYTHON]}
python=${2:-python3}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)

if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
  echo "skipped: $python has no venv/ensurepip module (Debian: apt-get install python3-venv)"
  exit 77
fi
rm -rf "$work/venv"
if ! "$python" -m venv --system-site-packages "$work/venv"; then
  echo "skipped: '$python -m venv' failed: no usable venv/pip (Debian: python3-venv)"
  exit 77
fi
pip=("$work/venv/bin/python" -m pip)
if ! "${pip[@]}" --version >/dev/null 2>&1; then
  echo "skipped: the virtualenv has no pip (Debian: python3-venv, python3-pip)"
  exit 77
fi

cmake_args=${CMAKE_ARGS:-}
# The compilers of the build that runs this test (tests/python/CMakeLists.txt):
# ccache keys on the compiler's name, so only the same names let this
# build reuse that build's objects.
[ -z "${SPCCL_WHEEL_CC:-}" ] || cmake_args="$cmake_args -DCMAKE_C_COMPILER=$SPCCL_WHEEL_CC"
[ -z "${SPCCL_WHEEL_CXX:-}" ] || cmake_args="$cmake_args -DCMAKE_CXX_COMPILER=$SPCCL_WHEEL_CXX"
if command -v ccache >/dev/null; then
  cmake_args="$cmake_args -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
fi
start=$(date +%s)
echo "wheel_in_venv: pip install $top/bindings/python (build directory $work/cmake-build)"
if ! CMAKE_ARGS="$cmake_args" "${pip[@]}" install --disable-pip-version-check \
    --config-settings=build-dir="$work/cmake-build" "$top/bindings/python" >"$work/pip.log" 2>&1; then
  tail -n 40 "$work/pip.log"
  echo "wheel_in_venv: pip install failed (whole log: $work/pip.log); it needs PyPI, or a" \
       "configured index, for scikit-build-core and pybind11"
  exit 1
fi
echo "wheel_in_venv: built and installed in $(( $(date +%s) - start )) s"

# From an empty directory, so that nothing of the checkout is importable.
mkdir -p "$work/run"
cd "$work/run"
cp "$here/wheel_smoke.py" .
env -u PYTHONPATH "$work/venv/bin/python" wheel_smoke.py
