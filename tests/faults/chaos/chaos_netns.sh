#!/usr/bin/env bash
# The chaos cases that need a network between hosts (tests/netns/netlab):
# chaos_rank on 3 hosts over tcp, T = SPCCL_TIMEOUT_MS = 3000 ms.
#
#   link-short   host 2 cut off for T/4, then back: when the real outage was
#                at most 1.4 s (the stated bound at T = 3 s), every call
#                succeeds, every result right (TCP retransmits across the gap)
#   link-long    host 2 cut off for 2 T + 1 s, ranks stop at their first error
#                (--on-error exit): every rank fails, none succeeds wrongly,
#                each within T + 1 s of the cut
#   link-long-shrink  the same cut, ranks recover: hosts 1 and 3 agree that
#                rank 1 failed, shrink and finish right; rank 1 leaves
#   slow-peer    host 3 shaped to a tenth of the others' rate: no call fails
#                while it progresses, not even a 32 MiB all-reduce that takes
#                longer than T (the deadline is on progress, not on the call)
#
# Prints one table row per case (docs/perf/reliability.md). Exit 1 on a
# broken rule, 77 when no testbed can exist here.
# usage: chaos_netns.sh CHAOS_RANK [CASE...]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NETNS="$HERE/../../netns"
NETLAB="$NETNS/netlab"
export NETLAB_PREFIX=${NETLAB_PREFIX:-splchaos} NETLAB_SUBNET=${NETLAB_SUBNET:-10.77.6}
# shellcheck source=../../netns/lib/require_testbed.sh
source "$NETNS/lib/require_testbed.sh"
require_testbed chaos_netns
# shellcheck source=../../netns/lib/spawn_ranks.sh
source "$NETNS/lib/spawn_ranks.sh"

chaos_rank=${1:?usage: chaos_netns.sh CHAOS_RANK [CASE...]}
shift
cases=("$@")
((${#cases[@]})) || cases=(link-short link-long link-long-shrink slow-peer)
T=3000 RATE=1gbit SLOW=100mbit HOSTS=3
export SPCCL_TRANSPORT=tcp SPCCL_TIMEOUT_MS=$T
logs=$(mktemp -d /tmp/chaos_netns.XXXXXX)
failed=0
trap '"$NETLAB" down >/dev/null 2>&1 || true' EXIT
"$NETLAB" down >/dev/null
"$NETLAB" up "$HOSTS" "$RATE" >/dev/null

now_ms() { date +%s%3N; }
sleep_ms() { sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }
status_of() { cat "$1/rank$2.status"; }
first_fail() {  # first_fail DIR RANK: "t rc" of the rank's first failed call, or nothing
  sed -n 's/^chaos: fail t=\([0-9.]*\) .* rc=\([0-9]*\) .*/\1 \2/p' "$1/rank$2.log" | head -1
}
row() { echo "| $1 | tcp (netlab, $RATE) | $HOSTS | $2 | $3 |"; }
broke() { echo "chaos_netns: $1: FAIL: $2 (logs in $3)" >&2; failed=1; }

# run_job DIR SECONDS_LIMIT ARGS...: spawn, wait for every ready line.
run_job() {
  local dir=$1 limit=$2; shift 2
  spawn_ranks "$dir" "$HOSTS" "$limit" -- "$chaos_rank" --count 65536 --stats-every 0 "$@"
  ready_ranks 30 || { wait_ranks 1; return 1; }
}

# The stated guarantee (docs/fault-tolerance.md, "Link cuts"): Linux
# resends a segment lost in a cut 0.2, 0.6, 1.4, 3.0 s after the loss
# (minimum RTO 200 ms, doubled at each try), so an outage of at most
# 1.4 s = 7 x 200 ms is over by a resend that comes before T = 3 s.
SURVIVED_OUTAGE_MS=1400

case_link_short() {
  local dir="$logs/link-short" r t0 t1 t2 t3
  run_job "$dir" 120 --steps 300 --gap-ms 5 --on-error exit || { broke link-short "no start" "$dir"; return; }
  sleep 1
  # T/4 (the soak's short cut). netlab's link commands take time of their
  # own: the real outage lies between t2 - t1 and t3 - t0.
  t0=$(now_ms); "$NETLAB" link 2 down; t1=$(now_ms)
  sleep_ms $((T / 4))
  t2=$(now_ms); "$NETLAB" link 2 up; t3=$(now_ms)
  # TCP's own view of the outage: between its third resend (due 1.43 s
  # after a loss at the cut) and its fourth (3.06 s), a socket whose third
  # resend was lost as well still shows backoff:3.
  local backoff wait_ms=$((t0 + 2300 - $(now_ms)))
  ((wait_ms <= 0)) || sleep_ms "$wait_ms"
  backoff=$(max_tcp_backoff "$dir/ss-at-2300ms.txt")
  wait_ranks 110
  local outcome="" outage="$((t2 - t1))-$((t3 - t0)) ms" row_name
  row_name="link down $((T / 4)) ms (T/4), host 2: outage $outage"
  if ((t3 - t0 > SURVIVED_OUTAGE_MS)); then
    # The machine was too slow to cut for less than the bound: nothing to judge.
    row "$row_name" "not judged: the outage may exceed the stated $SURVIVED_OUTAGE_MS ms" "-"
    return
  fi
  local all_finished=1
  for ((r = 0; r < HOSTS; r++)); do
    [[ $(status_of "$dir" "$r") == 0 ]] || all_finished=0
    outcome+="r$r $(status_of "$dir" "$r") "
  done
  if ((!all_finished && backoff >= 3)); then
    # The cut commands took less than the bound, but the path stayed dead
    # for TCP past it: the stated guarantee does not cover this run.
    row "$row_name" "not judged: a socket was still at backoff:$backoff 2.3 s after the cut (TCP's resend at 1.43 s was lost too: the outage it saw exceeded $SURVIVED_OUTAGE_MS ms)" "exit statuses: $outcome"
    echo "chaos_netns: link-short: not judged: TCP's third resend was lost too (logs in $dir)" >&2
    return
  fi
  for ((r = 0; r < HOSTS; r++)); do
    [[ $(status_of "$dir" "$r") == 0 ]] || broke link-short "outage $outage (<= $SURVIVED_OUTAGE_MS ms), largest TCP backoff 2.3 s after the cut $backoff: rank $r ended with $(status_of "$dir" "$r"): $(first_fail "$dir" "$r")" "$dir"
  done
  grep -q "^chaos: WRONG" "$dir"/rank*.log && broke link-short "a wrong result" "$dir"
  local what="no error, 300 steps right on every rank"
  ((all_finished)) || what="FAILED: a call failed though TCP delivered within the bound"
  row "$row_name" "$what" "exit statuses: $outcome(0 = finished right)"
}

# max_tcp_backoff FILE: the largest retransmission backoff of any TCP
# socket in the lab's hosts now (0 when none is backing off); `ss -tin`'s
# output goes to FILE for the logs.
max_tcp_backoff() {
  local h
  for ((h = 1; h <= HOSTS; h++)); do
    echo "-- host $h"
    ip netns exec "$NETLAB_PREFIX-h$h" ss -tin 2>&1 || true
  done >"$1"
  local largest
  largest=$({ grep -o 'backoff:[0-9]*' "$1" || true; } | cut -d: -f2 | sort -n | tail -1)
  echo "${largest:-0}"
}

case_link_long() {  # case_link_long shrink|exit
  local mode=$1 name=link-long dir r t_cut
  [[ $mode == shrink ]] && name=link-long-shrink
  dir="$logs/$name"
  run_job "$dir" 120 --steps 100000 --seconds 14 --gap-ms 5 --on-error "$mode" || { broke "$name" "no start" "$dir"; return; }
  sleep 1
  t_cut=$(now_ms)
  "$NETLAB" link 2 down; sleep_ms $((2 * T + 1000)); "$NETLAB" link 2 up
  wait_ranks 110
  local outcome="" detect="" f d s
  for ((r = 0; r < HOSTS; r++)); do
    f=$(first_fail "$dir" "$r"); s=$(status_of "$dir" "$r")
    if [[ -z $f ]]; then broke "$name" "rank $r saw no failure (status $s)" "$dir"; continue; fi
    d=$(awk -v a="${f% *}" -v b="$t_cut" 'BEGIN { printf "%.0f", a - b }')
    ((d <= T + 1000)) || broke "$name" "rank $r failed $d ms after the cut (> T + 1 s)" "$dir"
    detect+="r$r ${d} ms rc ${f#* }; "
    outcome+="r$r $s "
    if [[ $mode == exit ]]; then
      [[ $s == 5 ]] || broke "$name" "rank $r ended with $s, not 5 (stopped at its error)" "$dir"
    elif ((r != 1)); then
      [[ $s == 0 ]] || broke "$name" "survivor rank $r ended with $s, not 0" "$dir"
      grep -q "^chaos: shrunk .* failed=1 " "$dir/rank$r.log" || broke "$name" "rank $r did not shrink rank 1 away" "$dir"
    else
      [[ $s =~ ^(3|4|5)$ ]] || broke "$name" "the cut rank 1 ended with $s" "$dir"
    fi
  done
  grep -q "^chaos: WRONG" "$dir"/rank*.log && broke "$name" "a wrong result" "$dir"
  local what="every rank's call fails (rc 5 RemoteError, 7 Timeout, 8 Revoked): $detect"
  [[ $mode == shrink ]] && what+=" ranks 0, 2 shrink rank 1 away and finish"
  row "link down $((2 * T + 1000)) ms (2T + 1 s), host 2, --on-error $mode" "$what" \
    "exit statuses: $outcome(0 finished right, 3 agreed failed, 4 alone, 5 stopped at its error)"
}

case_slow_peer() {
  local dir="$logs/slow-peer" base="$logs/slow-peer-baseline" r t0 t1 t2 t3
  t0=$(now_ms)
  run_job "$base" 200 --steps 150 --on-error exit || { broke slow-peer "no start" "$base"; return; }
  wait_ranks 190
  t1=$(now_ms)
  "$NETLAB" shape 3 "$SLOW" >/dev/null
  t2=$(now_ms)
  run_job "$dir" 200 --steps 150 --on-error exit || { broke slow-peer "no start" "$dir"; return; }
  wait_ranks 190
  t3=$(now_ms)
  # Calls longer than T: 32 MiB all-reduces through the slow host. The
  # deadline is on progress, not on the call: they must succeed.
  local big="$logs/slow-peer-big" longest
  run_job "$big" 200 --count 8388608 --steps 3 --on-error exit || { broke slow-peer "no start" "$big"; return; }
  wait_ranks 190
  "$NETLAB" shape 3 "$RATE" >/dev/null
  for ((r = 0; r < HOSTS; r++)); do
    [[ $(status_of "$big" "$r") == 0 ]] || broke slow-peer "32 MiB: rank $r ended with $(status_of "$big" "$r"): $(first_fail "$big" "$r")" "$big"
  done
  longest=$(sed -n 's/^chaos: done .*longest_call_ms=\([0-9.]*\).*/\1/p' "$big"/rank*.log | sort -n | tail -1)
  local outcome=""
  for ((r = 0; r < HOSTS; r++)); do
    [[ $(status_of "$dir" "$r") == 0 ]] || broke slow-peer "rank $r ended with $(status_of "$dir" "$r"): $(first_fail "$dir" "$r")" "$dir"
    outcome+="r$r $(status_of "$dir" "$r") "
  done
  grep -q "^chaos: WRONG" "$dir"/rank*.log "$base"/rank*.log "$big"/rank*.log && broke slow-peer "a wrong result" "$dir"
  row "host 3 shaped to $SLOW (10x slower)" "no false failure: 150 steps of 256 KiB in $((t3 - t2)) ms (unshaped: $((t1 - t0)) ms); 3 steps of 32 MiB, the longest call ${longest} ms (> T = $T ms while progressing), right" "exit statuses: $outcome"
}

echo "| fault | transport | n | outcome | statuses |"
echo "|---|---|---|---|---|"
for c in "${cases[@]}"; do
  case $c in
    link-short) case_link_short ;;
    link-long) case_link_long exit ;;
    link-long-shrink) case_link_long shrink ;;
    slow-peer) case_slow_peer ;;
    *) echo "chaos_netns: unknown case '$c'" >&2; exit 2 ;;
  esac
done
"$NETLAB" down >/dev/null
((failed == 0)) && rm -rf "$logs"
exit "$failed"
