#!/usr/bin/env bash
# The token top-k and mask all-reduces with the kept rows moved on the
# device, on a lent GPU (docs/gpu.md, "Token all-reduces of device
# buffers"; NOT yet run on a GPU when this was written: tested only against
# the emulated driver). No perf binary puts the token calls on device
# memory, so this runs the real-GPU GoogleTest of those calls
# (GpuCollectives.TokenTopkAndMask of spccl_gpu_collective_tests: cudaMalloc
# tensor, scores and maskOut, f32/f16/bf16, keep 0, 16 and every token,
# both prune policies, the NULL stream and a stream, results checked
# against the exact sums):
#   1. on 1, 2 and 4 ranks sharing the GPU with SPCCL_DEVICE_TOKENS=1;
#      SPCCL_STAGING_REPORT=1 must count the calls as moved on the device
#      on rank 0 (else the path was not taken and the run fails);
#   2. the same on 2 ranks with SPCCL_DEVICE_TOKENS=0 (staged whole), for
#      the bytes each path copied (the staging report);
#   3. rank 0 of 2 under compute-sanitizer memcheck, the path on.
# Usage: run_device_tokens.sh BUILD_DIR RESULTS_DIR. Exits non-zero if a run
# fails or the path was not taken.
set -uo pipefail
build=$1 results=$2
mkdir -p "$results"
failed=0
source "$(dirname "$0")/lib/path_verdict.sh"
export SPCCL_TIMEOUT_MS=${SPCCL_TIMEOUT_MS:-60000}
launcher=$build/bin/spcclrun
binary=$build/tests/gpu/spccl_gpu_collective_tests
filter=--gtest_filter=GpuCollectives.TokenTopkAndMask
report="rank 0/[0-9]+: [1-9][0-9]* token all-reduce calls moved their kept rows on the device"

# check NAME LOG STATUS WANT_DEVICE: a verdict line (lib/path_verdict.sh);
# WANT_DEVICE=1 needs the staging report's count of calls moved on the device on rank 0.
check() {
  path_verdict "$1" "$2" "$3" "[  PASSED  ]" "$([[ $4 == 1 ]] && echo "$report")" 0
}

if [[ ! -x $binary || ! -x $launcher ]]; then
  echo "== $binary or $launcher missing: not built"
  exit 1
fi

for n in 1 2 4; do
  log=$results/tokens_n$n.log
  SPCCL_STAGING_REPORT=1 SPCCL_DEVICE_TOKENS=1 timeout 60 "$launcher" -n "$n" -- \
    "$binary" "$filter" >"$log" 2>&1
  check "token top-k and mask, $n ranks, device path" "$log" $? 1
  grep -E '^spccl staging report, rank 0' "$log"
done

log=$results/tokens_n2_staged.log
SPCCL_STAGING_REPORT=1 SPCCL_DEVICE_TOKENS=0 timeout 60 "$launcher" -n 2 -- \
  "$binary" "$filter" >"$log" 2>&1
check "token top-k and mask, 2 ranks, staged whole" "$log" $? 0
grep -E '^spccl staging report, rank 0' "$log"

sanitizer=$(command -v compute-sanitizer || true)
[[ -z $sanitizer && -x /usr/local/cuda/bin/compute-sanitizer ]] &&
  sanitizer=/usr/local/cuda/bin/compute-sanitizer
if [[ -n $sanitizer ]]; then
  log=$results/tokens_memcheck_n2.log
  SPCCL_STAGING_REPORT=1 SPCCL_DEVICE_TOKENS=1 timeout 150 "$launcher" -n 2 -- \
    "$sanitizer" --tool memcheck --error-exitcode 97 "$binary" "$filter" >"$log" 2>&1
  check "memcheck, 2 ranks" "$log" $? 1
else
  echo "== compute-sanitizer not found: memcheck not run"
  failed=1
fi
exit $failed
