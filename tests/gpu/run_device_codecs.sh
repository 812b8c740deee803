#!/usr/bin/env bash
# The compressed all-reduce of device buffers with its codecs run on
# the device, on a lent GPU (docs/gpu.md, "Compressed all-reduce of device
# buffers"; NOT yet run on a GPU when this was written: tested only against
# the emulated driver). Runs the real-GPU GoogleTest of the compressed call
# (GpuCollectives.CompressedAllReduceWithinBound of
# spccl_gpu_collective_tests: cudaMalloc buffers, f32/f16/bf16, sum/avg,
# two-shot and ring, in place, the NULL stream and a stream, results within
# the stated bound and the same bits on every rank; its two-shot calls, f32,
# f16 and bf16, take the path; none has a residual):
#   1. on 1, 2 and 4 ranks sharing the GPU with SPCCL_DEVICE_CODECS=1 and
#      small pieces (SPCCL_COMPRESS_PIECE_BYTES=4096); on 2 and 4 ranks
#      SPCCL_STAGING_REPORT=1 must count calls run on the device on
#      rank 0 (else the path was not taken and the run fails);
#   2. the same on 2 ranks with SPCCL_DEVICE_CODECS=0 (staged whole), for
#      the bytes each path copied (the staging report);
#   3. rank 0 of 2 under compute-sanitizer memcheck, the path on.
# Usage: run_device_codecs.sh BUILD_DIR RESULTS_DIR. Exits non-zero if a run
# fails or the path was not taken.
set -uo pipefail
build=$1 results=$2
mkdir -p "$results"
failed=0
source "$(dirname "$0")/lib/path_verdict.sh"
export SPCCL_TIMEOUT_MS=${SPCCL_TIMEOUT_MS:-60000}
export SPCCL_COMPRESS_PIECE_BYTES=4096
launcher=$build/bin/spcclrun
binary=$build/tests/gpu/spccl_gpu_collective_tests
filter=--gtest_filter=GpuCollectives.CompressedAllReduceWithinBound
report="rank 0/[0-9]+: [1-9][0-9]* compressed all-reduce calls ran their codecs on the device"

# check NAME LOG STATUS WANT_DEVICE: a verdict line (lib/path_verdict.sh);
# WANT_DEVICE=1 needs the staging report's count of calls run on the device on rank 0.
check() {
  path_verdict "$1" "$2" "$3" "[  PASSED  ]" "$([[ $4 == 1 ]] && echo "$report")" 0
}

if [[ ! -x $binary || ! -x $launcher ]]; then
  echo "== $binary or $launcher missing: not built"
  exit 1
fi

for n in 1 2 4; do
  log=$results/codecs_n$n.log
  SPCCL_STAGING_REPORT=1 SPCCL_DEVICE_CODECS=1 timeout 60 "$launcher" -n "$n" -- \
    "$binary" "$filter" >"$log" 2>&1
  # One rank: the report is not required (not checked whether a one-rank
  # call takes the path).
  check "compressed all-reduce, $n ranks, device path" "$log" $? $((n > 1 ? 1 : 0))
  grep -E '^spccl staging report, rank 0' "$log"
done

log=$results/codecs_n2_staged.log
SPCCL_STAGING_REPORT=1 SPCCL_DEVICE_CODECS=0 timeout 60 "$launcher" -n 2 -- \
  "$binary" "$filter" >"$log" 2>&1
check "compressed all-reduce, 2 ranks, staged whole" "$log" $? 0
grep -E '^spccl staging report, rank 0' "$log"

sanitizer=$(command -v compute-sanitizer || true)
[[ -z $sanitizer && -x /usr/local/cuda/bin/compute-sanitizer ]] &&
  sanitizer=/usr/local/cuda/bin/compute-sanitizer
if [[ -n $sanitizer ]]; then
  log=$results/codecs_memcheck_n2.log
  SPCCL_STAGING_REPORT=1 SPCCL_DEVICE_CODECS=1 timeout 150 "$launcher" -n 2 -- \
    "$sanitizer" --tool memcheck --error-exitcode 97 "$binary" "$filter" >"$log" 2>&1
  check "memcheck, 2 ranks" "$log" $? 1
else
  echo "== compute-sanitizer not found: memcheck not run"
  failed=1
fi
exit $failed
