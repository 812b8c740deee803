#!/usr/bin/env bash
# soak.sh DURATION: a job of chaos_rank processes (tests/faults/chaos/) on
# the netlab testbed, one per host, runs verified dense, sparse and
# compressed all-reduces for DURATION seconds while this script injects
# random faults into it; the survivors revoke, agree and shrink, and when
# fewer than 2 remain the job is started again. At the end it prints the
# faults injected by kind, the detection latency (fault -> first failed
# call on each survivor) p50/p99, the data mismatches (must be 0), the
# ranks' exit statuses and the leak trend of every process that ran to
# its end (fds, RSS, threads, /dev/shm mappings: first vs last), plus
# the entries of /dev/shm before and after (docs/perf/reliability.md).
#
#   sudo NETLAB_PREFIX=... NETLAB_SUBNET=... tests/netns/soak.sh DURATION
#        [--hosts N] [--rate RATE] [--timeout-ms T] [--count C]
#        [--kinds kill,stop,link-short,link-long] [--logdir D] [--seed S]
#        [--gap-ms G] [--chaos-rank PATH]
#
# Faults (one at a time, on a random live rank, 2 to 6 s apart):
#   kill        SIGKILL the rank's process
#   stop        SIGSTOP it, SIGCONT after 2T + 1 s (it must then leave, not disturb)
#   link-short  its host's link down for T/4, then up: no call may fail
#   link-long   its host's link down for 2T + 1 s, then up: the others shrink it away
# T is the communicator's deadline (SPCCL_TIMEOUT_MS, --timeout-ms).
#
# Exit status: 0 when no result was wrong, no rank crashed on its own and
# no short link outage failed a call; 1 otherwise; 77 when no testbed can
# exist here (not root, no `ip netns`).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NETLAB="$HERE/netlab"
export NETLAB_PREFIX=${NETLAB_PREFIX:-splsoak} NETLAB_SUBNET=${NETLAB_SUBNET:-10.77.5}

# shellcheck source=lib/require_testbed.sh
source "$HERE/lib/require_testbed.sh"
require_testbed soak
# shellcheck source=lib/spawn_ranks.sh
source "$HERE/lib/spawn_ranks.sh"

duration=${1:-}
[[ $duration =~ ^[0-9]+$ ]] && ((duration >= 10)) || { echo "usage: soak.sh DURATION(s, >= 10) [options]" >&2; exit 2; }
shift
hosts=4 rate=1gbit timeout_ms=3000 count=65536 kinds=kill,stop,link-short,link-long
gap_ms=10 logdir="" seed=$RANDOM chaos_rank="$ROOT/build/tests/faults/chaos_rank"
while (($#)); do
  case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --timeout-ms) timeout_ms=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --kinds) kinds=$2; shift 2 ;;
    --logdir) logdir=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --gap-ms) gap_ms=$2; shift 2 ;;
    --chaos-rank) chaos_rank=$2; shift 2 ;;
    *) echo "soak.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ -x $chaos_rank ]] || { echo "soak.sh: no chaos_rank at '$chaos_rank' (build it, or --chaos-rank PATH)" >&2; exit 2; }
((hosts >= 3)) || { echo "soak.sh: --hosts must be at least 3 (a fault leaves 2)" >&2; exit 2; }
IFS=, read -r -a fault_kinds <<<"$kinds"
for k in "${fault_kinds[@]}"; do
  [[ $k =~ ^(kill|stop|link-short|link-long)$ ]] || { echo "soak.sh: unknown fault kind '$k' in --kinds" >&2; exit 2; }
done
RANDOM=$seed
export SPCCL_TRANSPORT=tcp SPCCL_TIMEOUT_MS=$timeout_ms
[[ -n $logdir ]] || logdir=$(mktemp -d /tmp/soak.XXXXXX)
mkdir -p "$logdir"
faults="$logdir/faults.tsv"      # t_ms kind job host
: >"$faults"

now_ms() { date +%s%3N; }
sleep_ms() { sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }
shm_entries() { find /dev/shm -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

job=0
SPAWNED=()
cleanup() {
  local p
  for p in "${SPAWNED[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done
  "$NETLAB" down >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$NETLAB" down >/dev/null   # an interrupted earlier run's leftovers
"$NETLAB" up "$hosts" "$rate" >/dev/null
shm_before=$(shm_entries)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(now_ms)
end=$((start + duration * 1000))

# One job: a chaos_rank per host, for the time that is left, under a hard
# limit of that plus a minute (lib/spawn_ranks.sh).
start_job() {
  job=$((job + 1))
  local left=$(((end - $(now_ms)) / 1000))
  spawn_ranks "$logdir/job$job" "$hosts" $((left + 60)) -- "$chaos_rank" --seconds "$left" \
    --count "$count" --seed "$seed" --gap-ms "$gap_ms" --stats-every 100
  ready_ranks $(((2 * timeout_ms + 10000) / 1000)) || true  # a rank that never starts fails the job's calls
  echo "soak: job $job started ($hosts ranks, ${left}s left)"
}

rank_pid() { sed -n 's/^chaos: ready .* pid=\([0-9]*\).*/\1/p' "$logdir/job$job/rank$1.log" 2>/dev/null; }
# A rank takes part while its process lives and it has not left.
live_ranks() {
  local i p out=()
  for ((i = 0; i < hosts; i++)); do
    p=$(rank_pid "$i")
    [[ -n $p ]] && kill -0 "$p" 2>/dev/null && ! grep -qE "^chaos: (excluded|alone|done|gave-up|agree-failed)" "$logdir/job$job/rank$i.log" \
      && out+=("$i")
  done
  echo "${out[@]}"
}
finish_job() { wait_ranks "$1"; }  # bounded; records every rank's status

link() { "$NETLAB" link "$1" "$2"; }

inject() {  # inject KIND RANK: one fault, and its own undoing, bounded
  local kind=$1 r=$2 p
  p=$(rank_pid "$r")
  printf '%s\t%s\t%s\t%s\n' "$(now_ms)" "$kind" "$job" "$r" >>"$faults"
  echo "soak: $(date -u +%T) job $job: $kind rank $r"
  case $kind in
    kill) kill -KILL "$p" 2>/dev/null || true ;;
    stop) kill -STOP "$p" 2>/dev/null || true
          sleep_ms $((2 * timeout_ms + 1000))
          kill -CONT "$p" 2>/dev/null || true ;;
    link-short) link $((r + 1)) down; sleep_ms $((timeout_ms / 4)); link $((r + 1)) up ;;
    link-long) link $((r + 1)) down
               sleep_ms $((2 * timeout_ms + 1000))
               link $((r + 1)) up ;;
  esac
}

settle_s=$(((3 * timeout_ms + 3000) / 1000))   # detection (T) + agreement (T) + margin
start_job
while (($(now_ms) < end - (settle_s + 8) * 1000)); do
  sleep "$((2 + RANDOM % 5))"
  read -r -a live <<<"$(live_ranks)"
  if ((${#live[@]} < 2)); then
    finish_job 15
    start_job
    continue
  fi
  inject "${fault_kinds[RANDOM % ${#fault_kinds[@]}]}" "${live[RANDOM % ${#live[@]}]}"
  sleep "$settle_s"
done
finish_job $((settle_s + 90))
shm_after=$(shm_entries)
echo "soak: load average (1, 5, 15 min) at the start $load_before, at the end $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores" \
  | tee "$logdir/load.txt"

python3 "$HERE/lib/soak_report.py" "$logdir" "$faults" "$timeout_ms" "$shm_before" "$shm_after" \
  | tee "$logdir/report.md"
status=${PIPESTATUS[0]}
echo "soak: logs in $logdir"
exit "$status"
