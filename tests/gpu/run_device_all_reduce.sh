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
#   3. the figures: f32 sum, 1 MiB to 256 MiB, 2 and 4 ranks, the path on
#      (SPCCL_DEVICE_ALLREDUCE=1) against off (staged, the previous figures
#      of docs/perf/gpu.md), each on the same machine in the same minutes.
#   4. grouped collectives (core/device_group.h): spccl_gpu_collective_tests'
#      GroupedAllReduces (three all-reduces in one group, on a stream and
#      on the NULL stream) and GroupedCollectives (a reduce-scatter, an
#      all-gather, a broadcast and a reduce in one group, both stream
#      forms) on 2 and 4 ranks, checked element by element; the staging
#      report must count every call device-resident on every rank (6
#      all-reduces; 2 of each of the four), and nothing staged.
# Usage: run_device_all_reduce.sh BUILD_DIR RESULTS_DIR. Exits non-zero if a
# run fails, a check finds a wrong element, or the path was not taken.
set -uo pipefail
build=$1 results=$2
mkdir -p "$results"
failed=0
source "$(dirname "$0")/lib/path_verdict.sh"
export SPCCL_TIMEOUT_MS=${SPCCL_TIMEOUT_MS:-60000}
export SPCCL_TRANSPORT=${SPCCL_TRANSPORT:-cuda_ipc}
launcher=$build/bin/spcclrun
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
  SPCCL_STAGING_REPORT=1 SPCCL_DEVICE_ALLREDUCE=1 timeout 120 "$launcher" -n "$n" -- \
    "$perf" --device -b 4 -e 4M -f 32 -n 2 -w 1 -c 1 -d all -o all >"$log" 2>&1
  check "every type and op, $n ranks, device path" "$log" $? 1
done

for coll in reduce_scatter:reduce-scatter all_gather:all-gather broadcast:broadcast reduce:reduce \
  alltoall:all-to-all; do
  for n in 2 4; do
    log=$results/correct_${coll%%:*}_n$n.log
    SPCCL_STAGING_REPORT=1 SPCCL_DEVICE_ALLREDUCE=1 timeout 60 "$launcher" -n "$n" -- \
      "$build/perf/${coll%%:*}_perf" --device -b 4 -e 1M -f 64 -n 1 -w 1 -c 1 -d all -o all \
      >"$log" 2>&1
    check "${coll#*:}, every type and op, $n ranks, device path" "$log" $? 1 "${coll#*:}"
  done
done

sanitizer=$(command -v compute-sanitizer || true)
[[ -z $sanitizer && -x /usr/local/cuda/bin/compute-sanitizer ]] &&
  sanitizer=/usr/local/cuda/bin/compute-sanitizer
if [[ -n $sanitizer ]]; then
  log=$results/memcheck_n2.log
  SPCCL_STAGING_REPORT=1 SPCCL_DEVICE_ALLREDUCE=1 timeout 150 "$launcher" -n 2 -- \
    "$sanitizer" --tool memcheck --error-exitcode 97 \
    "$perf" --device -b 4 -e 64K -f 16 -n 1 -w 1 -c 1 -d float -o all >"$log" 2>&1
  check "memcheck, 2 ranks, f32 every op" "$log" $? 1
else
  echo "== compute-sanitizer not found: memcheck not run"
  failed=1
fi

for n in 2 4; do
  for path in 1 0; do
    log=$results/figures_n${n}_path$path.log
    SPCCL_STAGING_REPORT=1 SPCCL_DEVICE_ALLREDUCE=$path timeout 90 "$launcher" -n "$n" -- \
      "$perf" --device -b 1M -e 256M -f 4 -n 5 -w 2 -c 1 -d float -o sum >"$log" 2>&1
    check "figures, $n ranks, SPCCL_DEVICE_ALLREDUCE=$path" "$log" $? "$path"
    grep -vE '^#  *(Rank|Using|nThread)|^spccl staging' "$log" | grep -E '^ +[0-9]' | head -n 6
  done
done
# check_grouped NAME LOG STATUS RANKS COUNTED...: the gtest run passed on
# every rank and each rank's staging report counts each COUNTED ("6
# all-reduce", "2 broadcast") as calls that ran device-resident.
check_grouped() {
  local name=$1 log=$2 status=$3 ranks=$4 verdict=PASS
  shift 4
  local want counted missing=""
  for want in "$@"; do
    counted=$(grep -cE "rank [0-9]+/$ranks: $want calls ran device-resident" "$log")
    [[ $counted -eq $ranks ]] || missing+=" '$want' on $counted of $ranks ranks;"
  done
  if [[ $status -eq 124 ]]; then
    verdict="FAIL (timed out)"
  elif [[ $status -ne 0 ]]; then
    verdict="FAIL (exit $status)"
  elif grep -q "SKIPPED" "$log" || [[ $(grep -c "\[  PASSED  \] 1 test" "$log") -ne $ranks ]]; then
    verdict="FAIL (the test did not pass on every rank)"
  elif [[ -n $missing ]]; then
    verdict="FAIL (the device path was not taken:$missing)"
  elif grep -q "staged whole" "$log"; then
    verdict="FAIL (some calls were staged)"
  fi
  [[ $verdict == PASS ]] || failed=1
  echo "== $name: $verdict"
  [[ $verdict == PASS ]] || tail -n 12 "$log" | sed 's/^/    /'
}

gtests=$build/tests/gpu/spccl_gpu_collective_tests
for n in 2 4; do
  log=$results/grouped_n$n.log
  SPCCL_STAGING_REPORT=1 SPCCL_DEVICE_ALLREDUCE=1 GTEST_FILTER=GpuCollectives.GroupedAllReduces \
    timeout 120 "$launcher" -n "$n" -- "$gtests" >"$log" 2>&1
  check_grouped "grouped all-reduces, $n ranks, device path" "$log" $? "$n" "6 all-reduce"
  log=$results/grouped_collectives_n$n.log
  SPCCL_STAGING_REPORT=1 SPCCL_DEVICE_ALLREDUCE=1 GTEST_FILTER=GpuCollectives.GroupedCollectives \
    timeout 120 "$launcher" -n "$n" -- "$gtests" >"$log" 2>&1
  check_grouped "grouped reduce-scatter, all-gather, broadcast, reduce, $n ranks, device path" \
    "$log" $? "$n" "2 reduce-scatter" "2 all-gather" "2 broadcast" "2 reduce"
done
exit $failed
