#!/usr/bin/env bash
# Pipelined staging on a lent GPU (docs/gpu.md, "Pieces"): the same
# device-buffer calls with large calls cut into pieces whose copies overlap
# the transfers (SPCCL_STAGING_CHUNK_BYTES=8 MiB; the default is 0, off) and with the cut
# off (0), on 2 ranks sharing the GPU, each call on a stream, results
# checked (-c 1): all-reduce, all-gather and reduce-scatter, 16 and 64 MiB
# (9 runs of about 6 s each on the H200 figures of docs/gpu.md).
# Compare the busbw columns of "<coll>_pieces_<bytes>" with
# "<coll>_pieces_off" at equal sizes. Usage: run_staging_pieces.sh BUILD_DIR
# RESULTS_DIR (PIECES_MAX: largest size; PIECES_CHUNKS: the piece sizes to
# try; LD_LIBRARY_PATH=<build>/tests/cuda_emulation/emulated_driver tries the
# plumbing without a GPU). Exits non-zero if a run fails or a check finds a
# wrong element.
set -uo pipefail
build=$1 results=$2
mkdir -p "$results"
launcher=$build/bin/spcclrun
failed=0
export SPCCL_TRANSPORT=${SPCCL_TRANSPORT:-shm} SPCCL_TIMEOUT_MS=${SPCCL_TIMEOUT_MS:-60000}
# Staged calls are what this compares: off, these dense collectives of
# device buffers would run device-resident (docs/gpu.md).
export SPCCL_DEVICE_ALLREDUCE=${SPCCL_DEVICE_ALLREDUCE:-0}

# shellcheck disable=SC2034  # read by lib/checked_bench.sh
bench_timeout=25 bench_tail=8
# shellcheck source-path=SCRIPTDIR source=lib/checked_bench.sh
source "$(dirname "$0")/lib/checked_bench.sh"

for coll in all_reduce all_gather reduce_scatter; do
  [[ -x $build/perf/${coll}_perf ]] || {
    echo "== ${coll}_perf not built: skipped"
    continue
  }
  for chunk in 0 ${PIECES_CHUNKS:-8388608 2097152}; do
    label=$chunk
    [[ $chunk == 0 ]] && label=off
    SPCCL_STAGING_CHUNK_BYTES=$chunk bench "${coll}_pieces_$label" "$launcher" -n 2 -- \
      "$build/perf/${coll}_perf" --device -b 16M -e "${PIECES_MAX:-64M}" -f 4 -n 3 -w 1 -c 1
  done
done
exit $failed
