#!/usr/bin/env bash
# Builds spccl, runs the whole test suite (ctest) and ends with a summary:
# passed, failed, skipped, and why each skipped test skipped.
#   run-tests.sh             Release build in build/
#   run-tests.sh --sanitize  ASan+UBSan build (Debug, -O1) in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh build
dir=build
flags=(-DCMAKE_BUILD_TYPE=Release)
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  # Debug (assertions on) at -O1, as ASan's own documentation advises for
  # usable speed: the suite's heaviest tests ran 2.5x faster than at -O0
  # (141 s -> 56 s for ten of them), the whole ctest run 974 s -> 510 s
  # (this project's 2-core VM, idle). -g1: line tables and functions, all
  # a sanitizer's report prints (file and line of every frame), without
  # the local variables of full -g (the heavy test_device_group.cc: 30-33 s
  # at -g, 19-24 s at -g1, idle VM).
  flags=(-DCMAKE_BUILD_TYPE=Debug -DSPCCL_SANITIZE=address,undefined
         "-DCMAKE_C_FLAGS_DEBUG=-g1 -O1" "-DCMAKE_CXX_FLAGS_DEBUG=-g1 -O1")
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  export LSAN_OPTIONS="suppressions=$PWD/tests/lsan_libcrypto.supp:print_suppressions=0"
fi
# Through ccache where installed, as run-demo.sh builds.
source scripts/compiler-cache.sh
start=$SECONDS
cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
echo "run-tests: configured and built $dir in $((SECONDS - start)) s"
# The JUnit file says which tests ctest skipped and what they printed:
# test-summary.py ends the log with the counts and every skip's reason.
junit=$PWD/$dir/Testing/ctest-junit.xml
rm -f "$junit"
status=0
ctest --test-dir "$dir" --output-on-failure -j2 --timeout 600 --output-junit "$junit" || status=$?
python3 scripts/test-summary.py "$junit" "$dir" || true
exit "$status"
