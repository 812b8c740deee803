#!/usr/bin/env bash
# The device-buffer figures of docs/gpu.md on a lent GPU: every rank on the
# one GPU (device rank % count), buffers in device memory, each call on a
# stream (perf --device), results checked (-c 1):
#   - dense all-reduce, 1 MiB .. 256 MiB, 2 and 4 ranks (shm between the
#     ranks, staged through pinned host memory);
#   - sparse all-reduce, 64 MiB f32 at 0.1 %, 1 % and 5 %, 2 and 4 ranks,
#     beside the dense all-reduce of the same buffer (the binary times both);
#   - host-staged tcp on loopback, 64 MiB, 2 ranks, with SPCCL_STAGING_REPORT:
#     each rank's time in the copies in, on the host and in the copies out;
#   - the kernels libspccl embeds, alone (perf/device_kernels_bench): checked
#     against host references, then GB/s at 16M and 256M f32 elements against
#     a device-to-device copy of the same bytes (KERNEL_SIZES; at most 90 s).
# Usage: run_device_bench.sh BUILD_DIR RESULTS_DIR (DENSE_MAX, SPARSE_BYTES: sizes;
# LD_LIBRARY_PATH=<build>/tests/cuda_emulation/emulated_driver tries it without a GPU, on
# the emulated driver: the plumbing, not figures). Each run under `timeout`;
# exits non-zero if a run fails or a check finds a wrong element.
set -uo pipefail
build=$1 results=$2
mkdir -p "$results"
launcher=$build/bin/spcclrun
failed=0
export SPCCL_TRANSPORT=${SPCCL_TRANSPORT:-shm} SPCCL_TIMEOUT_MS=${SPCCL_TIMEOUT_MS:-60000}

# shellcheck disable=SC2034  # read by lib/checked_bench.sh
bench_timeout=60 bench_tail=14
# shellcheck source-path=SCRIPTDIR source=lib/checked_bench.sh
source "$(dirname "$0")/lib/checked_bench.sh"

for n in 2 4; do
  bench "all_reduce_device_n$n" "$launcher" -n "$n" -- "$build/perf/all_reduce_perf" --device \
    -b 1M -e "${DENSE_MAX:-256M}" -f 4 -n 5 -w 2 -c 1
  for density in 0.001 0.01 0.05; do
    bench "sparse_device_n${n}_d$density" "$launcher" -n "$n" -- \
      "$build/perf/sparse_all_reduce_perf" --device -b "${SPARSE_BYTES:-64M}" -e "${SPARSE_BYTES:-64M}" -D "$density" -n 5 -w 2 -c 1
  done
done
# Host-staged tcp on loopback: each rank's time split into the copies in,
# the call on the host (CPU reductions and the network) and the copies
# out (SPCCL_STAGING_REPORT, docs/gpu.md); no kernel runs in this path yet.
SPCCL_TRANSPORT=tcp SPCCL_STAGING_REPORT=1 bench "all_reduce_device_tcp_split_n2" "$launcher" -n 2 -- \
  "$build/perf/all_reduce_perf" --device -b 64M -e 64M -n 5 -w 2 -c 1
# The embedded kernels alone: the whole table (checks, then one row per
# kernel and size). Without a usable device (the emulated driver) the
# binary says so and exits 0.
kernel_log=$results/device_kernels.log
timeout 90 "$build/perf/device_kernels_bench" -n "${KERNEL_SIZES:-16M,256M}" -w 2 -i 10 \
  >"$kernel_log" 2>&1
status=$?
if [[ $status -ne 0 ]]; then
  echo "== device_kernels: FAIL (exit $status)"
  failed=1
else
  echo "== device_kernels"
fi
cat "$kernel_log"
# migrate_perf --device (docs/gpu.md "Migration calls of device buffers"):
# the layer's migration calls on device buffers, 2 ranks, the device path
# and SPCCL_DEVICE_ALLREDUCE=0 (staged) on the same sizes (MIGRATE_B,
# MIGRATE_H, MIGRATE_C; docs/gpu.md's emulated table is at 256, 1024, 256),
# checked (-c 1: plain-loop GEMMs, the image has no OpenBLAS), rank 0's
# staging report kept. The device path must count every migration kind
# device-resident and nothing staged whole; the staged run none
# device-resident. 38 s and 37 s on the emulated driver of a loaded
# 2-core machine; 45 s each at most here (the stage's limit counts them).
migrate_kinds="migrate-broadcast migrate-reduce migrate-all-reduce scatter gather"
for knob in 1 0; do
  name=migrate_device_allreduce${knob}_n2
  log=$results/$name.log
  SPCCL_DEVICE_ALLREDUCE=$knob SPCCL_STAGING_REPORT=1 timeout "${BENCH_TIMEOUT:-45}" \
    "$launcher" -n 2 -- "$build/perf/migrate_perf" --device -x 2,4 \
    -b "${MIGRATE_B:-512}" -H "${MIGRATE_H:-2048}" -C "${MIGRATE_C:-512}" \
    -r 5 -n 10 -w 2 -c 1 --compute sleep --flops 1e12 >"$log" 2>&1
  status=$?
  problem=
  [[ $status -ne 0 ]] && problem="exit $status"
  grep -q '^# check: OK' "$log" || problem+=" no '# check: OK'"
  for kind in $migrate_kinds; do
    resident=$(grep -cE "rank 0/2: [1-9][0-9]* $kind calls ran device-resident" "$log")
    if [[ $knob == 1 && $resident == 0 ]]; then
      problem+=" no device-resident $kind"
    elif [[ $knob == 0 && $resident != 0 ]]; then
      problem+=" $kind device-resident though SPCCL_DEVICE_ALLREDUCE=0"
    fi
  done
  grep -q 'staged whole' "$log" && [[ $knob == 1 ]] && problem+=" a call staged whole"
  if [[ -n $problem ]]; then
    echo "== $name: FAIL (${problem# })"
    failed=1
  else
    echo "== $name"
  fi
  grep -E '^ |^# check|staging report, rank 0/' "$log" | tail -n 20
done
exit $failed
