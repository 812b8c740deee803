#!/usr/bin/env bash
# The compressed all-reduce of device buffers with its codecs run on
# the device, on a lent GPU (docs/gpu.md, "Compressed all-reduce of device
# buffers"; NOT yet run on a GPU when this was written: tested only against
# the emulated driver). Runs two real-GPU GoogleTests of
# spccl_gpu_collective_tests:
#   - GpuCollectives.CompressedAllReduceWithinBound: cudaMalloc buffers,
#     f32/f16/bf16, sum/avg, two-shot and ring, in place, the NULL stream
#     and a stream, results within the stated bound and the same bits on
#     every rank; its two-shot and ring calls take the path; no residual;
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
# One rank: the report is not required (not checked whether a one-rank
# call takes the path).
gtest_stage codecs SPCCL_DEVICE_CODECS 0 "compressed all-reduce calls ran their codecs on the device" \
  "compressed all-reduce" GpuCollectives.CompressedAllReduceWithinBound \
  GpuDevicePaths.CompressedAllReduceWithDeviceResidual 36
exit $failed
