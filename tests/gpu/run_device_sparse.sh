#!/usr/bin/env bash
# The sparse all-reduce's non-zero extraction on the device on a lent GPU
# (docs/gpu.md, "Sparse all-reduce of device buffers"; NOT yet run on a GPU
# when this was written: tested only against the emulated driver):
#   1. correctness: sparse_all_reduce_perf --device, every type it makes
#      (-d all: f32, f64, bf16), densities 0.1 %, 1 % and 50 %, sum and avg,
#      checked (-c 1), on 1, 2 and 4 ranks
#      sharing the GPU; SPCCL_STAGING_REPORT=1 must count the calls as
#      extracted on the device (else the path was not taken and the run
#      fails), and no call may be staged whole;
#      Balanced Parallelism forced (zen-hash, permutation), 2 and 4 ranks:
#      the report must count the calls as bucketed on the device;
#   2. rank 0 of 2 under compute-sanitizer memcheck, small sizes, BP with
#      the permutation (every kernel of the path: extraction, buckets and
#      their radix passes, scatter);
#   3. the figures: f32 sum, 1 M to 16 M elements, densities 0.1 % and 1 %,
#      2 ranks, the path on (SPCCL_DEVICE_SPARSE=1) against off (staged
#      whole), on the same machine in the same minutes, with the bytes each
#      copied (the staging report).
# Usage: run_device_sparse.sh BUILD_DIR RESULTS_DIR. Exits non-zero if a run
# fails, a check finds a wrong element, or the path was not taken.
source "$(dirname "$0")/lib/device_stage.sh" "$@"
perf=$build/perf/sparse_all_reduce_perf

# check NAME LOG STATUS WANT_DEVICE: a verdict line (lib/path_verdict.sh);
# WANT_DEVICE=1 needs the staging report's count of calls extracted on the
# device on rank 0, and nothing staged whole.
check() {
  path_verdict "$1" "$2" "$3" "Out of bounds values : 0 OK" \
    "$([[ $4 == 1 ]] && echo "rank 0/[0-9]+: [1-9][0-9]* sparse all-reduce calls extracted on the device")" 1
}

for n in 1 2 4; do
  for op in sum avg; do
    for density in 0.001 0.01 0.5; do
      log=$results/correct_n${n}_${op}_d$density.log
      run_ranks "$n" "$log" 60 SPCCL_DEVICE_SPARSE=1 -- \
        "$perf" --device -b 64K -e 4M -f 8 -n 2 -w 1 -c 1 -d all -o "$op" -D "$density"
      check "every type, $op, density $density, $n ranks, device path" "$log" $? 1
    done
  done
done

# Balanced Parallelism forced with each partitioner that buckets: the push
# buckets must be made on the device (sparse/device_buckets.h: the report
# counts the calls), every type checked.
for n in 2 4; do
  for partitioner in zen-hash permutation; do
    log=$results/bp_buckets_n${n}_$partitioner.log
    run_ranks "$n" "$log" 60 SPCCL_DEVICE_SPARSE=1 -- \
      "$perf" --device -b 64K -e 4M -f 8 -n 2 -w 1 -c 1 -d all -o sum -D 0.01 -a bp -P "$partitioner"
    check "BP, $partitioner, $n ranks, device path" "$log" $? 1
    grep -qE "rank 0/$n: [1-9][0-9]* sparse all-reduce calls bucketed their pairs by owner on the device" "$log" ||
      { echo "FAIL: BP, $partitioner, $n ranks: no call bucketed on the device ($log)"; failed=1; }
  done
done

if find_sanitizer; then
  log=$results/memcheck_n2.log
  run_ranks 2 "$log" 150 SPCCL_DEVICE_SPARSE=1 -- "$sanitizer" --tool memcheck --error-exitcode 97 \
    "$perf" --device -b 4K -e 256K -f 8 -n 1 -w 1 -c 1 -d float -o sum -D 0.01 -a bp -P permutation
  check "memcheck, 2 ranks, f32, BP permutation (extraction, buckets, scatter)" "$log" $? 1
fi

for density in 0.001 0.01; do
  for path in 1 0; do
    log=$results/figures_n2_d${density}_path$path.log
    run_ranks 2 "$log" 90 SPCCL_DEVICE_SPARSE=$path -- \
      "$perf" --device -b 4M -e 64M -f 4 -n 5 -w 2 -c 1 -d float -o sum -D "$density"
    check "figures, 2 ranks, density $density, SPCCL_DEVICE_SPARSE=$path" "$log" $? "$path"
    grep -E '^ +[0-9]' "$log" | head -n 4
    rank0_report "$log"
  done
done
exit $failed
