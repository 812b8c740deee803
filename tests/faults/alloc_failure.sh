#!/usr/bin/env bash
# A failed allocation (issue 20): on a 2-rank job of VICTIM, one rank's
# k-th allocation after it starts fails (fail_alloc.c, preloaded): each of
# the first 100, then k spread over the rest, then each of the last 30
# (spcclCommDestroy's, which no error can report); then the same over the
# allocations made by spccl's own threads (the fault service's, a
# rendezvous root's: FAIL_ALLOC_THREADS=other). FAIL_ALLOC_FIRST and
# FAIL_ALLOC_LAST change the 100 and the 30. Each run must end with the
# right results or a clear error on every rank, within the deadline:
# never a crash (a signal, also one that came as the process exited), a
# hang or a wrong result.
#   alloc_failure.sh SPCCLRUN VICTIM PRELOAD [RUNS [VICTIM_ARGS...]]
# VICTIM: alloc_victim (spccl's C API) or tests/nccl's nccl_alloc_victim
# (nccl.h's, PRELOAD then also names libspccl_nccl.so: a colon list).
# FAIL_ALLOC_RANK picks the rank (1 unless set).
set -uo pipefail
spcclrun=$1 victim=$2 preload=$3 runs=${4:-60}
shift $(($# < 4 ? $# : 4))
# @IDDIR@ in VICTIM_ARGS becomes a fresh directory, removed at the end
# (nccl_alloc_victim's unique-id files: a killed rank 0 leaves its own).
work=$(mktemp -d /tmp/spccl-alloc-failure.XXXXXX)
trap 'rm -rf "$work"' EXIT
victim=("$victim")
for arg in "$@"; do victim+=("${arg//@IDDIR@/$work}"); done
# A run whose failure a peer waits for ends at the deadline (5 s unless
# SPCCL_TIMEOUT_MS is set): a clean error, however short.
export SPCCL_TIMEOUT_MS=${SPCCL_TIMEOUT_MS:-5000} FAIL_ALLOC_RANK=${FAIL_ALLOC_RANK:-1}
export SPCCL_TRANSPORT=${SPCCL_TRANSPORT:-tcp}

total=$(FAIL_ALLOC_COUNT=1 LD_PRELOAD=$preload timeout 60 "$spcclrun" -n 2 -- "${victim[@]}" 2>&1 |
  grep -oP 'fail_alloc: \K[0-9]+' | head -1)
[[ -n $total && $total -gt 0 ]] || { echo "alloc_failure: could not count the allocations"; exit 1; }
echo "alloc_failure: rank $FAIL_ALLOC_RANK makes $total allocations; failing one of them in $runs runs"

others=$(FAIL_ALLOC_THREADS=other FAIL_ALLOC_COUNT=1 LD_PRELOAD=$preload timeout 60 "$spcclrun" -n 2 -- "${victim[@]}" 2>&1 |
  grep -oP 'fail_alloc: \K[0-9]+' | head -1)
echo "alloc_failure: its own threads make ${others:-?} of them"
[[ -n $others ]] || others=0
ok=0 clean=0 bad=0
# points TOTAL: the first FAIL_ALLOC_FIRST (100) one by one (init: the
# environment, the job secret, libcrypto's set-up), then `runs` more
# spread evenly over the rest, then the last FAIL_ALLOC_LAST (30) one by
# one (the counts vary a little from run to run: a few past the end fail
# nothing, which is fine).
points() {
  local total=$1 first=${FAIL_ALLOC_FIRST:-100} last=${FAIL_ALLOC_LAST:-30}
  if ((total <= first + runs + last)); then
    seq 1 $((total + 3))
    return
  fi
  seq 1 "$first"
  seq $((first + 1)) $(((total - first - last + runs - 1) / runs)) $((total - last))
  seq $((total - last + 1)) $((total + 3))
}
ks=$(points "$total")
# Then the allocations of spccl's own threads (the same way: each of them,
# where they are few).
ks="$ks $(points "${others:-0}" | sed 's/^/other:/')"
for k in $ks; do
  threads=
  [[ $k == other:* ]] && threads=other && k=${k#other:}
  out=$(FAIL_ALLOC_THREADS=$threads FAIL_ALLOC_AT=$k LD_PRELOAD=$preload timeout 60 "$spcclrun" -n 2 -- "${victim[@]}" 2>&1)
  status=$?
  if [[ $status == 124 ]]; then
    echo "FAIL k=$k${threads:+ (other threads)}: no answer within 60 s"
    bad=$((bad + 1))
  elif grep -qE 'killed by signal|status 4|want |fail_alloc: pid .* signal' <<<"$out"; then
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
