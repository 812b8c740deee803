#!/bin/sh
# spcclrun --keep-going: a rank killed by a signal stops nobody, the job's
# status is the survivors' (0 when they all exited 0, else the first
# non-zero one), and the dead are listed with how they died. Without the
# flag the first death still ends the job with 128 + the signal.
# usage: spcclrun_keep_going.sh SPCCLRUN
set -u
run=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }

# Rank 1 dies at once; the others finish 0.5 s later: status 0.
"$run" --keep-going -n 3 sh -c 'if [ "$SPCCL_RANK" = 1 ]; then kill -9 $$; fi; sleep 0.5; touch "'"$out"'.$SPCCL_RANK"; exit 0' >"$out" 2>&1
status=$?
[ "$status" = 0 ] || fail "survivors exited 0 but spcclrun --keep-going returned $status"
[ -e "$out.0" ] && [ -e "$out.2" ] || fail "the survivors did not run to their end"
rm -f "$out.0" "$out.2"
grep -q "rank 1 (killed by signal SIGKILL)" "$out" || fail "the dead rank is not listed"
grep -q "2 survived; exit status 0" "$out" || fail "no summary"

# A survivor's failure is the job's status.
"$run" --keep-going -n 3 sh -c 'if [ "$SPCCL_RANK" = 1 ]; then kill -9 $$; fi; if [ "$SPCCL_RANK" = 2 ]; then exit 3; fi; exit 0' >"$out" 2>&1
status=$?
[ "$status" = 3 ] || fail "a survivor exited 3 but spcclrun --keep-going returned $status"

# Every rank dead: the first death's status.
"$run" --keep-going -n 2 sh -c 'kill -9 $$' >"$out" 2>&1
status=$?
[ "$status" = 137 ] || fail "every rank died but spcclrun --keep-going returned $status"

# Without --keep-going the death ends the job at once (the others sleep 30 s).
start=$(date +%s)
"$run" -n 3 sh -c 'if [ "$SPCCL_RANK" = 1 ]; then kill -9 $$; fi; sleep 30' >"$out" 2>&1
status=$?
[ "$status" = 137 ] || fail "without --keep-going a SIGKILLed rank gave status $status, not 137"
[ $(( $(date +%s) - start )) -lt 10 ] || fail "without --keep-going the others were not stopped"
echo "spcclrun --keep-going: 4 scenarios passed"
