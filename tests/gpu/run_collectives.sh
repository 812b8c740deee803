#!/usr/bin/env bash
# Runs spccl_gpu_collective_tests (test_gpu_collectives.cc: every collective
# on CUDA memory) on a GPU machine: at 1, 2 and 4 ranks (one process per
# rank, all on device 0, under spcclrun), each under `timeout 120`, then at
# 2 ranks with small sizes under compute-sanitizer memcheck. One log per
# run in RESULTS_DIR and a one-line verdict per run on stdout.
#
#   tests/gpu/run_collectives.sh BUILD_DIR RESULTS_DIR
#
# BUILD_DIR is a configured build tree (SPCCL_BUILD_CUDA=ON); the binary and
# spcclrun are built there if missing. Exits non-zero if any run fails or
# skips (on a GPU machine a skip means the device could not be used), or if
# compute-sanitizer is missing.
# Environment: SPCCL_TRANSPORT (default shm), SPCCL_GPU_COLL_RANKS (default
# "1 2 4"), SPCCL_GPU_COLL_TIMEOUT (seconds per run, 120), SPCCL_GPU_COLL_SANITIZE=0 to leave out the memcheck run,
# GTEST_FILTER to run some tests only.
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR RESULTS_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && results=$(cd "$2" && pwd) || exit 2
binary=$build/tests/gpu/spccl_gpu_collective_tests
launcher=$build/bin/spcclrun
summary=$results/collectives-summary.txt
: >"$summary"
failed=0

note() { echo "$*" | tee -a "$summary"; }

if [[ ! -x $binary || ! -x $launcher ]]; then
  note "building spccl_gpu_collective_tests and spcclrun in $build"
  if ! cmake --build "$build" --target spccl_gpu_collective_tests spcclrun \
      >"$results/collectives-build.log" 2>&1; then
    note "build FAILED (see $results/collectives-build.log)"
    tail -20 "$results/collectives-build.log"
    exit 1
  fi
fi

export SPCCL_TRANSPORT=${SPCCL_TRANSPORT:-shm}
export SPCCL_TIMEOUT_MS=${SPCCL_TIMEOUT_MS:-60000}

# run NAME COMMAND...: logs to $results/NAME.log; a failure or a skip fails the script.
run() {
  local name=$1
  shift
  local log=$results/$name.log
  local t0=$(date +%s)
  "$@" >"$log" 2>&1
  local status=$?
  # Every rank prints gtest's summary; count rank 0's worth (the largest).
  local passed skipped
  passed=$(grep -oP '^\[  PASSED  \] \K[0-9]+' "$log" | sort -n | tail -1)
  skipped=$(grep -oP '^\[  SKIPPED \] \K[0-9]+(?= tests?,)' "$log" | sort -n | tail -1)
  passed=${passed:-0} skipped=${skipped:-0}
  local verdict=PASS
  if [[ $status -eq 124 ]]; then
    verdict="FAIL (timed out)"
  elif [[ $status -ne 0 ]]; then
    verdict="FAIL (exit $status)"
  elif [[ $skipped -ne 0 ]]; then
    verdict="SKIPPED ($skipped)"
  elif [[ $passed -eq 0 ]]; then
    verdict="FAIL (no test ran)"
  fi
  [[ $verdict == PASS ]] || failed=1
  note "$(printf '%-40s %-24s %4s tests ok  %4s s' "$name" "$verdict" "$passed" $(($(date +%s) - t0)))"
  if [[ $verdict != PASS ]]; then
    grep -E '^\[  FAILED  \]|Failure|FATAL|spcclrun:' "$log" | head -8 | sed 's/^/    /'
  fi
}

filter=()
[[ -n ${GTEST_FILTER:-} ]] && filter=("--gtest_filter=$GTEST_FILTER")

note "== spccl GPU collectives, $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), transport $SPCCL_TRANSPORT"
# Each communicator reports at its end how many all-reduces ran
# device-resident (docs/gpu.md): with the path on (the default) the device
# all-reduces must have taken it.
export SPCCL_STAGING_REPORT=1
for n in ${SPCCL_GPU_COLL_RANKS:-1 2 4}; do
  run "collectives_n$n" timeout "${SPCCL_GPU_COLL_TIMEOUT:-120}" "$launcher" -n "$n" -- "$binary" "${filter[@]}"
  if [[ ${SPCCL_DEVICE_ALLREDUCE:-1} != 0 ]] &&
    ! grep -q "all-reduce calls ran device-resident" "$results/collectives_n$n.log"; then
    note "collectives_n$n: no all-reduce took the device-resident path: FAIL"
    failed=1
  fi
done

if [[ ${SPCCL_GPU_COLL_SANITIZE:-1} != 0 ]]; then
  sanitizer=$(command -v compute-sanitizer || true)
  for candidate in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    [[ -z $sanitizer && -x $candidate ]] && sanitizer=$candidate
  done
  if [[ -z $sanitizer ]]; then
    note "compute-sanitizer NOT FOUND: the memcheck run did not run"
    failed=1
  else
    # Small sizes; each rank under its own memcheck. The 64 MiB test is
    # left out by name (it skips itself at small sizes, and a skip fails).
    small_filter=("--gtest_filter=${GTEST_FILTER:-*}:-GpuCollectives.AllReduce64MiB")
    SPCCL_GPU_COLL_SMALL=1 run collectives_n2.memcheck timeout 300 "$launcher" -n 2 -- \
      "$sanitizer" --tool memcheck --error-exitcode 97 "$binary" "${small_filter[@]}"
  fi
fi

note "== collectives: $([[ $failed == 0 ]] && echo ALL PASSED || echo FAILURES) (logs: $results)"
exit $failed
