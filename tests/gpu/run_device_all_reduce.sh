#!/usr/bin/env bash
# The device-resident collectives on a lent GPU (docs/gpu.md, "Device-
# resident collectives"; NOT yet run on a GPU when this was written):
#   1. correctness: all_reduce_perf --device, every type and op, out of
#      place and in place, checked (-c 1), on 1, 2 and 4 ranks sharing the
#      GPU; then reduce_scatter_perf, all_gather_perf, broadcast_perf,
#      reduce_perf and alltoall_perf the same way on 2 and 4 ranks,
#      smaller sizes (alltoall_perf's in-place half through the scratch);
#      SPCCL_STAGING_REPORT=1 must count each binary's calls as
#      device-resident (else the path was not taken and the run fails);
#   2. rank 0 of 2 under compute-sanitizer memcheck, small sizes;
#   3. (run last) the figures: f32 sum, 1 MiB to 256 MiB, 2 and 4 ranks,
#      the path on (SPCCL_DEVICE_ALLREDUCE=1) against off (staged, the
#      previous figures of docs/perf/gpu.md), each on the same machine in
#      the same minutes.
#   4. grouped collectives (core/device_group.h): spccl_gpu_collective_tests'
#      GroupedAllReduces (three all-reduces in one group, on a stream and
#      on the NULL stream) and GroupedCollectives (a reduce-scatter, an
#      all-gather, a broadcast and a reduce in one group, both stream
#      forms) on 2 and 4 ranks, checked element by element; the staging
#      report must count every call device-resident on every rank (6
#      all-reduces; 2 of each of the four), and nothing staged.
#   5. all-to-all(v) (test_gpu_device_paths.cc): GpuDevicePaths.
#      InPlaceAllToAllAndAllToAllv (in place through the communicator's
#      scratch: 3 types x 3 growing counts x both stream forms, all-to-allv
#      with uneven blocks and gaps) and GroupedAllToAllAndAllReduce (an
#      all-to-all out of place and in place, an all-to-allv out of place and
#      in place and an all-reduce in one group) on 2 and 4 ranks, checked
#      element by element; every rank's report must count every call
#      device-resident (18 all-to-all and 18 all-to-allv; 4, 4 and 2), and
#      nothing staged.
#   6. the migration calls and scatter/gather (docs/gpu.md, "Migration
#      calls of device buffers"): GpuCollectives.MigrationCollectives
#      (spcclMigrateAllReduce with a device `migrated`, spcclMigrateBroadcast,
#      spcclMigrateReduce; 3 types x both stream forms) and
#      GpuDevicePaths.ScatterAndGather on 2 and 4 ranks, checked element by
#      element; every rank's report must count 6 migrate-all-reduce, 6
#      migrate-broadcast and 6 migrate-reduce, and 12 scatter and 12 gather
#      calls device-resident, nothing staged.
# Usage: run_device_all_reduce.sh BUILD_DIR RESULTS_DIR. Exits non-zero if a
# run fails, a check finds a wrong element, or the path was not taken.
source "$(dirname "$0")/lib/device_stage.sh" "$@"
export SPCCL_TRANSPORT=${SPCCL_TRANSPORT:-cuda_ipc}
perf=$build/perf/all_reduce_perf

# check NAME LOG STATUS WANT_DEVICE [REPORTED]: a verdict line
# (lib/path_verdict.sh); WANT_DEVICE=1 needs the staging report's
# device-resident count of REPORTED calls (default all-reduce) on rank 0
# and nothing staged whole.
check() {
  local want=$4 reported=${5:-all-reduce}
  path_verdict "$1" "$2" "$3" "Out of bounds values : 0 OK" \
    "$([[ $want == 1 ]] && echo "rank 0/[0-9]+: [1-9][0-9]* $reported calls ran device-resident")" 1
}

for n in 1 2 4; do
  log=$results/correct_n$n.log
  run_ranks "$n" "$log" 120 SPCCL_DEVICE_ALLREDUCE=1 -- \
    "$perf" --device -b 4 -e 4M -f 32 -n 2 -w 1 -c 1 -d all -o all
  check "every type and op, $n ranks, device path" "$log" $? 1
done

for coll in reduce_scatter:reduce-scatter all_gather:all-gather broadcast:broadcast reduce:reduce \
  alltoall:all-to-all; do
  for n in 2 4; do
    log=$results/correct_${coll%%:*}_n$n.log
    run_ranks "$n" "$log" 60 SPCCL_DEVICE_ALLREDUCE=1 -- \
      "$build/perf/${coll%%:*}_perf" --device -b 4 -e 1M -f 64 -n 1 -w 1 -c 1 -d all -o all
    check "${coll#*:}, every type and op, $n ranks, device path" "$log" $? 1 "${coll#*:}"
  done
done

if find_sanitizer; then
  log=$results/memcheck_n2.log
  run_ranks 2 "$log" 150 SPCCL_DEVICE_ALLREDUCE=1 -- "$sanitizer" --tool memcheck \
    --error-exitcode 97 "$perf" --device -b 4 -e 64K -f 16 -n 1 -w 1 -c 1 -d float -o all
  check "memcheck, 2 ranks, f32 every op" "$log" $? 1
fi

# gtest NAME FILTER RANKS REPORTED...: the GoogleTests of FILTER on RANKS
# ranks with the path on; every rank's report must count each REPORTED
# ("6 all-reduce") as calls that ran device-resident, nothing staged whole.
gtest() {
  local name=$1 filter=$2 n=$3 log=$results/${2#*.}_n$3.log reported want=()
  shift 3
  for reported in "$@"; do want+=("$reported calls ran device-resident"); done
  run_ranks "$n" "$log" 120 SPCCL_DEVICE_ALLREDUCE=1 -- \
    "$build/tests/gpu/spccl_gpu_collective_tests" --gtest_filter="$filter"
  gtest_verdict "$name, $n ranks, device path" "$log" $? "$n" 1 "${want[@]}"
}

for n in 2 4; do
  gtest "grouped all-reduces" GpuCollectives.GroupedAllReduces "$n" "6 all-reduce"
  gtest "grouped reduce-scatter, all-gather, broadcast, reduce" \
    GpuCollectives.GroupedCollectives "$n" "2 reduce-scatter" "2 all-gather" "2 broadcast" \
    "2 reduce"
  gtest "in-place all-to-all and all-to-allv" GpuDevicePaths.InPlaceAllToAllAndAllToAllv "$n" \
    "18 all-to-all" "18 all-to-allv"
  gtest "grouped all-to-all(v) and all-reduce" GpuDevicePaths.GroupedAllToAllAndAllReduce "$n" \
    "4 all-to-all" "4 all-to-allv" "2 all-reduce"
  gtest "migration calls" GpuCollectives.MigrationCollectives "$n" "6 migrate-all-reduce" \
    "6 migrate-broadcast" "6 migrate-reduce"
  gtest "scatter and gather" GpuDevicePaths.ScatterAndGather "$n" "12 scatter" "12 gather"
done
# The figures last: a stage cut short by its cap loses them, not a check.
for n in 2 4; do
  for path in 1 0; do
    log=$results/figures_n${n}_path$path.log
    run_ranks "$n" "$log" 90 SPCCL_DEVICE_ALLREDUCE=$path -- \
      "$perf" --device -b 1M -e 256M -f 4 -n 5 -w 2 -c 1 -d float -o sum
    check "figures, $n ranks, SPCCL_DEVICE_ALLREDUCE=$path" "$log" $? "$path"
    grep -vE '^#  *(Rank|Using|nThread)|^spccl staging' "$log" | grep -E '^ +[0-9]' | head -n 6
  done
done
exit $failed
