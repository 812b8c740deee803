#!/usr/bin/env bash
# The compressed all-reduce of device buffers with its codecs run on
# the device, on a lent GPU (docs/gpu.md, "Compressed all-reduce of device
# buffers"; NOT yet run on a GPU when this was written: tested only against
# the emulated driver). Runs two real-GPU GoogleTests of
# spccl_gpu_collective_tests:
#   - GpuCollectives.CompressedAllReduceWithinBound: cudaMalloc buffers,
#     f32/f16/bf16, sum/avg, two-shot and ring, in place, the NULL stream
#     and a stream, results within the stated bound and the same bits on
#     every rank; its two-shot calls take the path (the ring's are staged
#     whole); no residual;
#   - GpuDevicePaths.CompressedAllReduceWithDeviceResidual: error feedback
#     with the residual in device memory, f32/f16/bf16, sum/avg, three
#     consecutive two-shot calls sharing it, outputs and final residual bit
#     for bit equal to the same calls on host memory; all 36 calls per rank
#     must run on the device and none be staged.
#   1. both on 1, 2 and 4 ranks sharing the GPU with SPCCL_DEVICE_CODECS=1
#      and small pieces (SPCCL_COMPRESS_PIECE_BYTES=4096); on 2 and 4 ranks
#      SPCCL_STAGING_REPORT=1 must count the calls run on the device on
#      every rank (else the path was not taken and the run fails);
#   2. the same on 2 ranks with SPCCL_DEVICE_CODECS=0 (staged whole), for
#      the bytes each path copied (the staging report);
#   3. both on 2 ranks under compute-sanitizer memcheck, the path on, small
#      sizes (SPCCL_GPU_COLL_SMALL=1).
# Usage: run_device_codecs.sh BUILD_DIR RESULTS_DIR. Exits non-zero if a run
# fails or the path was not taken.
source "$(dirname "$0")/lib/device_stage.sh" "$@"
export SPCCL_COMPRESS_PIECE_BYTES=4096
binary=$build/tests/gpu/spccl_gpu_collective_tests
bound=GpuCollectives.CompressedAllReduceWithinBound
residual=GpuDevicePaths.CompressedAllReduceWithDeviceResidual
ran="compressed all-reduce calls ran their codecs on the device"

if [[ ! -x $binary || ! -x $launcher ]]; then
  echo "== $binary or $launcher missing: not built"
  exit 1
fi

for n in 1 2 4; do
  # One rank: the report is not required (not checked whether a one-rank
  # call takes the path).
  reports=() exact=()
  ((n > 1)) && reports=("[1-9][0-9]* $ran") exact=("36 $ran")
  log=$results/codecs_n$n.log
  run_ranks "$n" "$log" 60 SPCCL_DEVICE_CODECS=1 -- "$binary" --gtest_filter=$bound
  gtest_verdict "compressed all-reduce, $n ranks, device path" "$log" $? "$n" 0 "${reports[@]}"
  rank0_report "$log"
  log=$results/codecs_residual_n$n.log
  run_ranks "$n" "$log" 60 SPCCL_DEVICE_CODECS=1 -- "$binary" --gtest_filter=$residual
  gtest_verdict "compressed all-reduce, device residual, $n ranks, device path" "$log" $? "$n" \
    $((n > 1)) "${exact[@]}"
  rank0_report "$log"
done

log=$results/codecs_n2_staged.log
run_ranks 2 "$log" 60 SPCCL_DEVICE_CODECS=0 -- "$binary" --gtest_filter=$bound:$residual
gtest_verdict "compressed all-reduce, 2 ranks, staged whole" "$log" $? 2 0
rank0_report "$log"

if find_sanitizer; then
  log=$results/codecs_memcheck_n2.log
  run_ranks 2 "$log" 150 SPCCL_DEVICE_CODECS=1 SPCCL_GPU_COLL_SMALL=1 -- \
    "$sanitizer" --tool memcheck --error-exitcode 97 "$binary" --gtest_filter=$bound:$residual
  gtest_verdict "memcheck, 2 ranks" "$log" $? 2 0 "[1-9][0-9]* $ran"
fi
exit $failed
