#!/usr/bin/env bash
# link_cut_rto.sh: how long after a link cut TCP takes to resend, measured.
# A job of chaos_rank (verified all-reduces, as in soak.sh) runs on a lab
# of HOSTS hosts while this script cuts one host off for each length in
# --cuts, REPEATS times each (the host rotates), and samples
# `ss -tino` in every host meanwhile. For each cut it prints one line:
#
#   cut=MS outage=MIN-MAX host=K failed=0|1 longest_call=MS pending_after_up=MS
#       rto_max=MS backoff_max=N sample_lag=MS
#
# outage: the real cut lies between MIN and MAX ms (netlab's link commands
# take time of their own).
#
# longest_call: the longest all-reduce of any rank in the job (the stall
# the cut caused, plus one call's ordinary length). pending_after_up: the
# longest any established socket still had to wait for its retransmission
# (or zero-window probe) timer when the link came back, from the last
# sample before link-up: a timer due before link-up fires into the cut and
# is re-armed at twice the rto (Linux's exponential backoff), until one is
# due after link-up. rto_max and backoff_max: the largest rto (ms) and
# backoff count in that sample; sample_lag: its age at link-up. failed=1
# when a rank's call failed. At the end: the load averages before and
# after. Root only (netlab).
#
#   sudo NETLAB_PREFIX=... NETLAB_SUBNET=... tests/netns/link_cut_rto.sh CHAOS_RANK
#        [--cuts "750 1000 1250"] [--repeats N] [--hosts N] [--timeout-ms T]
#        [--count C] [--gap-ms G] [--rate RATE] [--logdir D] [--host-setup CMD]
#
# --host-setup CMD runs `sh -c CMD` in every host after the lab is up (a
# kernel setting to compare, e.g. "sysctl -qw net.ipv4.tcp_thin_linear_timeouts=1"
# or "ip route change SUBNET.0/24 dev veth0 rto_min 50ms").
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NETLAB="$HERE/netlab"
export NETLAB_PREFIX=${NETLAB_PREFIX:-splrto} NETLAB_SUBNET=${NETLAB_SUBNET:-10.77.7}
# shellcheck source=lib/require_testbed.sh
source "$HERE/lib/require_testbed.sh"
require_testbed link_cut_rto
# shellcheck source=lib/spawn_ranks.sh
source "$HERE/lib/spawn_ranks.sh"

chaos_rank=${1:?usage: link_cut_rto.sh CHAOS_RANK [options]}
shift
cuts="750 1000 1250" repeats=3 hosts=4 T=3000 count=65536 gap_ms=10 rate=1gbit logdir=""
host_setup=""
while (($#)); do
  case $1 in
    --cuts) cuts=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --hosts) hosts=$2; shift 2 ;;
    --timeout-ms) T=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --gap-ms) gap_ms=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --logdir) logdir=$2; shift 2 ;;
    --host-setup) host_setup=$2; shift 2 ;;
    *) echo "link_cut_rto.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ -n $logdir ]] || logdir=$(mktemp -d /tmp/link_cut_rto.XXXXXX)
mkdir -p "$logdir"
export SPCCL_TRANSPORT=tcp SPCCL_TIMEOUT_MS=$T

now_ms() { date +%s%3N; }
sleep_ms() { sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }
samplers=()
stop_samplers() {
  local p
  for p in "${samplers[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${samplers[@]}"; do wait "$p" 2>/dev/null || true; done
  samplers=()
}
cleanup() {
  stop_samplers
  ((${#SPAWNED[@]})) && wait_ranks 1
  "$NETLAB" down >/dev/null 2>&1 || true
}
SPAWNED=()
trap cleanup EXIT

"$NETLAB" down >/dev/null
"$NETLAB" up "$hosts" "$rate" >/dev/null
if [[ -n $host_setup ]]; then
  for ((k = 1; k <= hosts; k++)); do ip netns exec "$NETLAB_PREFIX-h$k" sh -c "$host_setup"; done
  echo "host setup: $host_setup"
fi
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# sample DIR K: `ss -tino` of host K in a loop, each block headed by the time.
sample() {
  # One shell inside the namespace: no `ip netns exec` per sample.
  exec ip netns exec "$NETLAB_PREFIX-h$2" sh -c \
    'while :; do echo "@ $(date +%s%3N)"; ss -tino state established; done' >"$1/ss-h$2.txt" 2>/dev/null
}

n=0
for cut in $cuts; do
  for ((i = 0; i < repeats; i++)); do
    host=$((2 + n % (hosts - 1)))
    n=$((n + 1))
    dir="$logdir/cut$cut-$i"
    spawn_ranks "$dir" "$hosts" $((30 + 2 * T / 1000 + cut / 1000)) -- "$chaos_rank" \
      --count "$count" --stats-every 0 --gap-ms "$gap_ms" --on-error exit \
      --seconds $((6 + (cut + T) / 1000))
    if ! ready_ranks 30; then
      echo "cut=$cut host=$host: the job did not start (logs in $dir)"
      wait_ranks 1
      continue
    fi
    sleep 2
    for ((k = 1; k <= hosts; k++)); do
      sample "$dir" "$k" &
      samplers+=($!)
    done
    sleep 0.5
    # The outage lies between "down returned .. up began" and "down began
    # .. up returned": netlab's ip commands take tens to hundreds of ms
    # on a loaded machine, so the real cut is longer than the sleep.
    down_at=$(now_ms)
    "$NETLAB" link "$host" down
    down_done=$(now_ms)
    sleep_ms "$cut"
    up_begin=$(now_ms)
    "$NETLAB" link "$host" up
    up_at=$(now_ms)
    outage="$((up_begin - down_done))-$((up_at - down_at))"
    sleep_ms 1500
    stop_samplers
    wait_ranks $((20 + 2 * T / 1000))
    python3 - "$dir" "$hosts" "$cut" "$host" "$down_at" "$up_at" "$T" "$outage" <<'EOF'
import re, sys, glob
d, hosts, cut, host, down_at, up_at, T = sys.argv[1], int(sys.argv[2]), *map(int, sys.argv[3:8])
outage = sys.argv[8]
timer = re.compile(r"timer:\((on|persist),([0-9.]+)(ms|sec|min),(\d+)\)")
rto_re = re.compile(r"\brto:([0-9.]+)")
backoff_re = re.compile(r"\bbackoff:(\d+)")
def ms(v, unit):
    return float(v) * {"ms": 1, "sec": 1000, "min": 60000}[unit]
pending, rto_max, backoff_max, lag = 0.0, 0.0, 0, 0
for k in range(1, hosts + 1):
    blocks, t, cur = [], None, []
    for line in open(f"{d}/ss-h{k}.txt", errors="replace"):
        if line.startswith("@ "):
            if t is not None: blocks.append((t, cur))
            t, cur = int(line.split()[1]), []
        else:
            cur.append(line)
    if t is not None: blocks.append((t, cur))
    before = [b for b in blocks if b[0] <= up_at]
    if not before: continue
    t, lines = before[-1]
    lag = max(lag, up_at - t)
    text = "".join(lines)
    # One socket per entry: its header line carries the timer, the next
    # line (indented) its tcp_info.
    entries = re.split(r"\n(?=\S)", text)
    for entry in entries:
        m = timer.search(entry)
        r = rto_re.search(entry)
        if r: rto_max = max(rto_max, float(r.group(1)))
        b = backoff_re.search(entry)
        if b: backoff_max = max(backoff_max, int(b.group(1)))
        if not m or not r: continue
        due, rto = t + ms(m.group(2), m.group(3)), float(r.group(1))
        while due < up_at:
            rto = min(2 * rto, 120000.0)
            due += rto
        pending = max(pending, due - up_at)
failed, longest = 0, 0.0
for log in glob.glob(f"{d}/rank*.log"):
    for line in open(log, errors="replace"):
        if line.startswith("chaos: fail"): failed = 1
        m = re.match(r"chaos: done .*longest_call_ms=([0-9.]+)", line)
        if m: longest = max(longest, float(m.group(1)))
print(f"cut={cut} outage={outage} host={host} failed={failed} longest_call={longest:.0f} "
      f"pending_after_up={max(pending, 0):.0f} rto_max={rto_max:.0f} backoff_max={backoff_max} "
      f"sample_lag={lag}", flush=True)
EOF
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "logs: $logdir"
