#!/usr/bin/env bash
# Side-by-side dense all-reduce on the netlab testbed (docs/benchmarking.md).
#
#   bench_peers.sh [--raw DIR] [--raw-name NAME] [--wait-load L] N RATE SIZE_BYTES
#
# --raw DIR keeps every run's JSON line in DIR/NAME.jsonl (default NAME
# peers-nN-RATE-SIZE) as {"peer", "round", "result": the peer's line}, and
# the run's notes in DIR/NAME.meta.json (lib/raw_results.sh);
# docs/perf/make_figures.py builds the tables and plots from them.
# Env:
#   PEERS      which peers, in order (default: "gloo openmpi-ring openmpi-default",
#              plus "spccl" when BENCH_SPCCL_CMD is set)
#   BENCH_SPCCL_CMD  a command line run on every host via `netlab run N`; it must
#              print, on rank 0, one JSON line with "median_s" like the peers
#              (e.g. "./build/perf/all_reduce_perf --bytes 67108864 --json")
#   ROUNDS     how many times to alternate through PEERS (default 1); the
#              table shows the median of the per-round medians
#   TIMEOUT    per-run bound in seconds (default 600)
#   RESULTS    file to append each run's JSON line to (default: none)
#
# Brings the lab up unless one with >= N hosts is already up, and tears down
# only what it brought up, also on failure.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NETLAB="$HERE/netlab"
PREFIX=${NETLAB_PREFIX:-spl}
STATE_FILE="/run/netlab-${PREFIX}.state"

# shellcheck source=lib/raw_results.sh
source "$HERE/lib/raw_results.sh"
# shellcheck source=lib/dilation.sh
source "$HERE/lib/dilation.sh"
usage() { echo "usage: bench_peers.sh [--raw DIR] [--raw-name NAME] [--wait-load L] N RATE SIZE_BYTES" >&2; exit 2; }
invocation=("$0" "$@")
raw_parse_options "$@"
set -- "${RAW_ARGS[@]}"
(($# == 3)) || usage
n=$1 rate=$2 bytes=$3
rate=$(resolve_rate "$rate" "$n")
[[ $n =~ ^[0-9]+$ && $n -ge 2 && $bytes =~ ^[0-9]+$ ]] || usage
default_peers="gloo openmpi-ring openmpi-default"
[[ -n ${BENCH_SPCCL_CMD:-} ]] && default_peers+=" spccl"
read -r -a peers <<<"${PEERS:-$default_peers}"
rounds=${ROUNDS:-1}
limit=${TIMEOUT:-600}

raw_begin "peers-n$n-$rate-$bytes" jsonl -- "${invocation[@]}"
brought_up=0
if [[ -f $STATE_FILE ]]; then
  up_n=$(sed -n 's/^N=//p' "$STATE_FILE"); up_rate=$(sed -n 's/^RATE=//p' "$STATE_FILE")
  ((up_n >= n)) || { echo "bench_peers: lab is up with $up_n hosts, need $n" >&2; exit 2; }
  [[ $up_rate == "$rate" ]] || echo "bench_peers: note: lab is up at $up_rate, not $rate; using it" >&2
  rate=$up_rate
else
  "$NETLAB" up "$n" "$rate"
  brought_up=1
fi
results=$(mktemp /tmp/bench_peers.XXXXXX)
cleanup() {
  rm -f "$results"
  if ((brought_up)); then "$NETLAB" down >/dev/null || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

run_peer() {  # run_peer NAME: rank 0's JSON line on stdout
  case $1 in
    gloo) "$NETLAB" run "$n" --timeout "$limit" -- \
      /usr/bin/python3 "$HERE/peers/gloo_allreduce.py" --mode dense --bytes "$bytes" ;;
    openmpi-ring) "$HERE/peers/mpi_run.sh" "$n" --algorithm ring --timeout "$limit" -- --bytes "$bytes" ;;
    openmpi-default) "$HERE/peers/mpi_run.sh" "$n" --algorithm default --timeout "$limit" -- --bytes "$bytes" ;;
    spccl) "$NETLAB" run "$n" --timeout "$limit" -- /bin/bash -c "$BENCH_SPCCL_CMD" ;;
    *) echo "bench_peers: unknown peer '$1'" >&2; return 2 ;;
  esac
}

for ((round = 1; round <= rounds; round++)); do
  for peer in "${peers[@]}"; do
    echo "bench_peers: round $round/$rounds: $peer n=$n $bytes bytes" >&2
    line=$(run_peer "$peer" | grep '^{' | tail -n 1) || { echo "bench_peers: $peer failed" >&2; exit 1; }
    [[ -n $line ]] || { echo "bench_peers: $peer printed no JSON line" >&2; exit 1; }
    printf '%s\t%s\n' "$peer" "$line" >>"$results"
    [[ -z ${RESULTS:-} ]] || printf '%s\n' "$line" >>"$RESULTS"
    raw_record jsonl "{\"peer\": \"$peer\", \"round\": $round, \"result\": $line}"
  done
done
raw_end

/usr/bin/python3 - "$results" "$n" "$rate" "$bytes" <<'EOF'
import json, statistics, sys
path, n, rate, size = sys.argv[1], int(sys.argv[2]), sys.argv[3].lower(), int(sys.argv[4])
units = {"gbit": 1e9, "mbit": 1e6, "kbit": 1e3, "bit": 1.0}
bits = next(float(rate[: -len(u)]) * m for u, m in units.items() if rate.endswith(u))
# Dense ring all-reduce link limit (docs/benchmarking.md): 2(n-1)/n * S / b.
limit_s = 2 * (n - 1) / n * size / (bits / 8)
medians = {}
for row in open(path):
    peer, line = row.rstrip("\n").split("\t", 1)
    medians.setdefault(peer, []).append(json.loads(line)["median_s"])
print(f"\ndense all-reduce, n={n}, {size} bytes, {rate} links; ring link limit {limit_s:.3f} s")
# docs/benchmarking.md asks for the ratio: how many times faster spccl is than each peer.
spccl = statistics.median(medians["spccl"]) if "spccl" in medians else None
print(f"| {'peer':<16} | median s | vs link limit |" + (" spccl speed-up |" if spccl else ""))
print(f"|{'-' * 18}|----------|---------------|" + ("----------------|" if spccl else ""))
for peer, values in medians.items():
    med = statistics.median(values)
    ratio = f" {med / spccl:13.2f}x |" if spccl else ""
    print(f"| {peer:<16} | {med:8.3f} | {100 * limit_s / med:12.0f}% |{ratio}")
EOF
