#!/usr/bin/env bash
# The cuda_ipc transport on a lent GPU (docs/gpu.md, "cuda_ipc"):
#   1. spccl_cuda_ipc_tests against NVIDIA's driver: two processes export,
#      open and copy device memory through CUDA IPC, then send device
#      messages through the transport (in CI the same binary runs on the
#      emulated driver);
#   2. all_reduce_perf --device on 2 ranks with SPCCL_TRANSPORT=cuda_ipc
#      beside shm (the engine still stages through pinned memory, so both
#      should match: this checks the selection, not peer-to-peer speed).
# Usage: run_cuda_ipc.sh BUILD_DIR RESULTS_DIR. Exits non-zero if a run
# fails or a check finds a wrong element.
set -uo pipefail
build=$1 results=$2
mkdir -p "$results"
failed=0
export SPCCL_TIMEOUT_MS=${SPCCL_TIMEOUT_MS:-60000}

tests=$build/tests/cuda_emulation/spccl_cuda_ipc_tests
if [[ -x $tests ]]; then
  # On a GPU machine the loader finds NVIDIA's libcuda.so.1 (no emulation
  # on LD_LIBRARY_PATH here, unless the caller put it there to try this).
  timeout 60 "$tests" >"$results/cuda_ipc_tests.log" 2>&1
  status=$?
  echo "== spccl_cuda_ipc_tests (on the libcuda.so.1 the loader finds): exit $status"
  [[ $status -eq 0 ]] || failed=1
  grep -E '^\[ +(OK|FAILED) +\]|Failure|error' "$results/cuda_ipc_tests.log" | head -n 20
else
  echo "== spccl_cuda_ipc_tests not built (GoogleTest missing?): FAIL"
  failed=1
fi

for transport in shm cuda_ipc; do
  log=$results/all_reduce_device_$transport.log
  SPCCL_TRANSPORT=$transport timeout 40 "$build/bin/spcclrun" -n 2 -- \
    "$build/perf/all_reduce_perf" --device -b 1M -e 64M -f 8 -n 3 -w 1 -c 1 >"$log" 2>&1
  status=$?
  if [[ $status -ne 0 ]] || ! grep -q "Out of bounds values : 0 OK" "$log"; then
    echo "== all_reduce_perf --device, SPCCL_TRANSPORT=$transport: FAIL (exit $status)"
    failed=1
  else
    echo "== all_reduce_perf --device, SPCCL_TRANSPORT=$transport"
  fi
  grep -vE '^#  *(Rank|Using|nThread)' "$log" | tail -n 6
done
exit $failed
