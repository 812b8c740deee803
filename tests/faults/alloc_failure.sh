#!/usr/bin/env bash
# A failed allocation (issue 20): on a 2-rank job of alloc_victim, rank 1's
# k-th allocation after it starts fails (fail_alloc.c, preloaded): each of
# the first 100, then k spread over the rest, then each of the last 30
# (spcclCommDestroy's, which no error can report), then for each made by
# spccl's own threads (the fault service's: FAIL_ALLOC_THREADS=other).
# Each run must end with the right results or a clear error on every rank,
# within the deadline: never a crash (a signal), a hang or a wrong result.
#   alloc_failure.sh SPCCLRUN ALLOC_VICTIM LIBFAIL_ALLOC [RUNS]
set -uo pipefail
spcclrun=$1 victim=$2 preload=$3 runs=${4:-60}
export SPCCL_TIMEOUT_MS=5000 FAIL_ALLOC_RANK=1 SPCCL_TRANSPORT=${SPCCL_TRANSPORT:-tcp}

total=$(FAIL_ALLOC_COUNT=1 LD_PRELOAD=$preload timeout 60 "$spcclrun" -n 2 -- "$victim" 2>&1 |
  grep -oP 'fail_alloc: \K[0-9]+' | head -1)
[[ -n $total && $total -gt 0 ]] || { echo "alloc_failure: could not count the allocations"; exit 1; }
echo "alloc_failure: rank 1 makes $total allocations; failing one of them in $runs runs"

others=$(FAIL_ALLOC_THREADS=other FAIL_ALLOC_COUNT=1 LD_PRELOAD=$preload timeout 60 "$spcclrun" -n 2 -- "$victim" 2>&1 |
  grep -oP 'fail_alloc: \K[0-9]+' | head -1)
echo "alloc_failure: its own threads make ${others:-?} of them"
ok=0 clean=0 bad=0
# The first 100 one by one (init: the environment, the job secret,
# libcrypto's set-up), then `runs` more spread evenly over the rest, then
# the last 30 one by one (the counts vary a little from run to run: a few
# past the end fail nothing, which is fine).
first=100
step=$(((total - first + runs - 1) / runs))
((step > 0)) || step=1
ks=$(seq 1 $first; [[ $total -gt $first ]] && seq $((first + 1)) $step "$total"
  [[ $total -gt 50 ]] && seq $((total - 29)) "$total")
# Then each allocation of spccl's own threads (a few more than counted).
ks="$ks $(seq 1 $((${others:-0} + 3)) | sed 's/^/other:/')"
for k in $ks; do
  threads=
  [[ $k == other:* ]] && threads=other && k=${k#other:}
  out=$(FAIL_ALLOC_THREADS=$threads FAIL_ALLOC_AT=$k LD_PRELOAD=$preload timeout 60 "$spcclrun" -n 2 -- "$victim" 2>&1)
  status=$?
  if [[ $status == 124 ]]; then
    echo "FAIL k=$k${threads:+ (other threads)}: no answer within 60 s"
    bad=$((bad + 1))
  elif grep -qE 'killed by signal|status 4|want ' <<<"$out"; then
    echo "FAIL k=$k${threads:+ (other threads)}: a crash or a wrong result:"
    tail -n 8 <<<"$out"
    bad=$((bad + 1))
  elif [[ $status == 0 ]]; then
    ok=$((ok + 1))
  elif grep -qE 'victim: (.* failed: |malloc failed)' <<<"$out"; then
    clean=$((clean + 1))
  else
    echo "FAIL k=$k${threads:+ (other threads)}: exit $status without a named error:"
    tail -n 8 <<<"$out"
    bad=$((bad + 1))
  fi
done
echo "alloc_failure: $ok runs correct, $clean clean errors, $bad failures"
[[ $bad == 0 ]]
