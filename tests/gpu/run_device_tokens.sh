#!/usr/bin/env bash
# The token top-k and mask all-reduces with the kept rows moved on the
# device, on a lent GPU (docs/gpu.md, "Token all-reduces of device
# buffers"; NOT yet run on a GPU when this was written: tested only against
# the emulated driver). No perf binary puts the token calls on device
# memory, so this runs two real-GPU GoogleTests of
# spccl_gpu_collective_tests:
#   - GpuCollectives.TokenTopkAndMask: cudaMalloc tensor, scores and
#     maskOut, f32/f16/bf16, keep 0, 16 and every token, both prune
#     policies, the NULL stream and a stream, results checked against the
#     exact sums;
#   - GpuDevicePaths.TokenAllReducesWithDeviceResidual: error feedback
#     (cfg->residual in device memory, its kept rows moved on the device),
#     f32/f16/bf16, three rounds of a top-k call and a mask call sharing
#     it, tensor, mask and final residual bit for bit equal to the same
#     calls on host memory; all 36 calls per rank must take the path and
#     none be staged.
#   1. both on 1, 2 and 4 ranks sharing the GPU with SPCCL_DEVICE_TOKENS=1;
#      SPCCL_STAGING_REPORT=1 must count the calls as moved on the device
#      on every rank (else the path was not taken and the run fails);
#   2. the same on 2 ranks with SPCCL_DEVICE_TOKENS=0 (staged whole), for
#      the bytes each path copied (the staging report);
#   3. both on 2 ranks under compute-sanitizer memcheck, the path on
#      (SPCCL_GPU_COLL_SMALL=1; the token tests have fixed sizes).
# Usage: run_device_tokens.sh BUILD_DIR RESULTS_DIR. Exits non-zero if a run
# fails or the path was not taken.
source "$(dirname "$0")/lib/device_stage.sh" "$@"
gtest_stage tokens SPCCL_DEVICE_TOKENS 1 \
  "token all-reduce calls moved their kept rows on the device" "token top-k and mask" \
  GpuCollectives.TokenTopkAndMask GpuDevicePaths.TokenAllReducesWithDeviceResidual 36
exit $failed
