# shellcheck shell=bash disable=SC2034  # build, results, launcher, sanitizer: the caller's
# Sourced, with the script's arguments, by the device-path stage scripts
# (run_device_all_reduce.sh, run_device_sparse.sh, run_device_tokens.sh,
# run_device_codecs.sh): what each of them did alike.
#   source lib/device_stage.sh BUILD_DIR RESULTS_DIR
# sets build, results (created), launcher (spcclrun), failed=0 and
# SPCCL_TIMEOUT_MS (default 60 s), sources path_verdict.sh, and defines:
#   run_ranks N LOG LIMIT_S [VAR=VALUE...] -- COMMAND...
#     COMMAND on N ranks under spcclrun with SPCCL_STAGING_REPORT=1 and the
#     variables, within LIMIT_S seconds, its output in LOG; returns its
#     status (124: timed out).
#   gtest_verdict NAME LOG STATUS RANKS NO_STAGING [REPORT...]
#     a verdict line for a GoogleTest run on RANKS ranks: every rank passed
#     and nothing skipped (a skip on a GPU machine: the device was not
#     usable), each REPORT (an extended pattern such as "36 compressed
#     all-reduce calls ran their codecs on the device") in the staging
#     report of every rank, and with NO_STAGING=1 no call staged whole;
#     sets failed=1 unless PASS.
#   find_sanitizer
#     sets sanitizer to compute-sanitizer's path; where there is none,
#     says so, sets failed=1 and returns 1.
#   rank0_report LOG
#     prints rank 0's staging report lines (the bytes each path copied).
set -uo pipefail
build=$1 results=$2
mkdir -p "$results"
failed=0
# shellcheck source=path_verdict.sh
source "$(dirname "${BASH_SOURCE[0]}")/path_verdict.sh"
export SPCCL_TIMEOUT_MS=${SPCCL_TIMEOUT_MS:-60000}
launcher=$build/bin/spcclrun

run_ranks() {
  local n=$1 log=$2 limit=$3 vars=()
  shift 3
  while [[ $# -gt 0 && $1 != -- ]]; do
    vars+=("$1")
    shift
  done
  shift
  env SPCCL_STAGING_REPORT=1 "${vars[@]}" timeout "$limit" "$launcher" -n "$n" -- "$@" \
    >"$log" 2>&1
}

gtest_verdict() {
  local name=$1 log=$2 status=$3 ranks=$4 no_staging=$5 verdict=PASS
  shift 5
  local want counted missing=""
  for want in "$@"; do
    counted=$(grep -cE "^spccl staging report, rank [0-9]+/$ranks: $want" "$log")
    [[ $counted -eq $ranks ]] || missing+=" '$want' on $counted of $ranks ranks;"
  done
  if [[ $status -eq 124 ]]; then
    verdict="FAIL (timed out)"
  elif [[ $status -ne 0 ]]; then
    verdict="FAIL (exit $status)"
  elif grep -qE "^\[  (SKIPPED|FAILED)  \]" "$log" ||
    [[ $(grep -cE '^\[  PASSED  \] [1-9][0-9]* tests?\.' "$log") -ne $ranks ]]; then
    verdict="FAIL (the tests did not pass on every rank)"
  elif [[ -n $missing ]]; then
    verdict="FAIL (the device path was not taken:$missing)"
  elif [[ $no_staging == 1 ]] && grep -q "staged whole" "$log"; then
    verdict="FAIL (some calls were staged whole)"
  fi
  [[ $verdict == PASS ]] || failed=1
  echo "== $name: $verdict"
  [[ $verdict == PASS ]] || tail -n 12 "$log" | sed 's/^/    /'
}

find_sanitizer() {
  sanitizer=$(command -v compute-sanitizer || true)
  [[ -z $sanitizer && -x /usr/local/cuda/bin/compute-sanitizer ]] &&
    sanitizer=/usr/local/cuda/bin/compute-sanitizer
  [[ -n $sanitizer ]] && return 0
  echo "== compute-sanitizer not found: memcheck not run"
  failed=1
  return 1
}

rank0_report() { grep -E '^spccl staging report, rank 0/' "$1"; }

# gtest_stage PREFIX KNOB ONE_RANK WHAT LABEL FIRST SECOND CALLS: the runs
# of a stage whose calls no perf binary makes (run_device_tokens.sh,
# run_device_codecs.sh), with spccl_gpu_collective_tests' GoogleTests
# FIRST and SECOND (SECOND: CALLS device calls on each rank, none staged):
#   1. each on 1, 2 and 4 ranks with KNOB=1; every rank's staging report
#      must say "N WHAT" (N > 0 for FIRST, N = CALLS for SECOND), on one
#      rank only where ONE_RANK=1;
#   2. both on 2 ranks with KNOB=0 (staged whole), for the bytes each
#      path copied (rank 0's report);
#   3. both on 2 ranks under compute-sanitizer memcheck, KNOB=1, small
#      sizes (SPCCL_GPU_COLL_SMALL=1).
# Logs: RESULTS/PREFIX_*.log; verdict lines named "LABEL, ...".
gtest_stage() {
  local prefix=$1 knob=$2 one_rank=$3 what=$4 label=$5 first=$6 second=$7 calls=$8
  local binary=$build/tests/gpu/spccl_gpu_collective_tests n log required some=() all=()
  if [[ ! -x $binary || ! -x $launcher ]]; then
    echo "== $binary or $launcher missing: not built"
    failed=1
    return
  fi
  for n in 1 2 4; do
    required=$((n > 1 || one_rank == 1))
    some=() all=()
    ((required)) && some=("[1-9][0-9]* $what") all=("$calls $what")
    log=$results/${prefix}_n$n.log
    run_ranks "$n" "$log" 60 "$knob=1" -- "$binary" --gtest_filter="$first"
    gtest_verdict "$label, $n ranks, device path" "$log" $? "$n" 0 "${some[@]}"
    rank0_report "$log"
    log=$results/${prefix}_${second#*.}_n$n.log
    run_ranks "$n" "$log" 60 "$knob=1" -- "$binary" --gtest_filter="$second"
    gtest_verdict "$label, ${second#*.}, $n ranks, device path" "$log" $? "$n" "$required" \
      "${all[@]}"
    rank0_report "$log"
  done
  log=$results/${prefix}_n2_staged.log
  run_ranks 2 "$log" 60 "$knob=0" -- "$binary" --gtest_filter="$first:$second"
  gtest_verdict "$label, 2 ranks, $knob=0 (staged whole)" "$log" $? 2 0
  rank0_report "$log"
  if find_sanitizer; then
    log=$results/${prefix}_memcheck_n2.log
    run_ranks 2 "$log" 150 "$knob=1" SPCCL_GPU_COLL_SMALL=1 -- "$sanitizer" --tool memcheck \
      --error-exitcode 97 "$binary" --gtest_filter="$first:$second"
    gtest_verdict "$label, memcheck, 2 ranks" "$log" $? 2 0 "[1-9][0-9]* $what"
  fi
}
