#!/usr/bin/env bash
# Loopback (unshaped, one host) dense all-reduce: spccl over shm and over
# tcp, Gloo and Open MPI, alternating round by round, medians of rank 0's
# JSON lines. On loopback the links are fast, so this shows CPU efficiency.
#   bench_loopback.sh [--raw DIR] [--raw-name NAME] [--wait-load L] N BYTES [ROUNDS]
# --raw DIR keeps every run's JSON line in DIR/NAME.jsonl (default NAME
# loopback-nN-BYTES) as {"peer", "round", "result"}, and the run's notes in
# DIR/NAME.meta.json (lib/raw_results.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/raw_results.sh
source "$here/lib/raw_results.sh"
invocation=("$0" "$@")
raw_parse_options "$@"
set -- "${RAW_ARGS[@]}"
(($# >= 2)) || { echo "usage: bench_loopback.sh [--raw DIR] [--raw-name NAME] [--wait-load L] N BYTES [ROUNDS]" >&2; exit 2; }
n=$1 bytes=$2 rounds=${3:-3}
repo=$(cd "$here/../.." && pwd)
build=${SPCCL_BUILD_DIR:-$repo/build}
mpibin=$(mktemp /tmp/mpi_allreduce.XXXXXX)
results=$(mktemp /tmp/bench-loopback.XXXXXX)
trap 'rm -f "$mpibin" "$results"' EXIT
mpicc -O2 -o "$mpibin" "$here/peers/mpi_allreduce.c"
raw_begin "loopback-n$n-$bytes" jsonl -- "${invocation[@]}"
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

run_gloo() {
  local port pids=() status=0
  port=$(free_port)
  for ((r = 0; r < n; r++)); do
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=$r WORLD_SIZE=$n GLOO_SOCKET_IFNAME=lo \
      timeout 600 /usr/bin/python3 "$here/peers/gloo_allreduce.py" --bytes "$bytes" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
  return $status
}

run() {
  case $1 in
    spccl-shm) SPCCL_TRANSPORT=shm "$build/bin/spcclrun" -n "$n" -- "$here/peers/spccl_allreduce.sh" "$bytes" 2>/dev/null ;;
    spccl-tcp) SPCCL_TRANSPORT=tcp "$build/bin/spcclrun" -n "$n" -- "$here/peers/spccl_allreduce.sh" "$bytes" 2>/dev/null ;;
    gloo) run_gloo ;;
    openmpi) timeout 600 mpirun --allow-run-as-root --oversubscribe -np "$n" "$mpibin" --bytes "$bytes" ;;
  esac
}

for ((round = 1; round <= rounds; round++)); do
  for peer in spccl-shm spccl-tcp gloo openmpi; do
    echo "bench_loopback: round $round/$rounds: $peer" >&2
    line=$(run "$peer" | grep '^{' | tail -n 1)
    printf '%s\t%s\n' "$peer" "$line" >>"$results"
    raw_record jsonl "{\"peer\": \"$peer\", \"round\": $round, \"result\": $line}"
  done
done
raw_end
/usr/bin/python3 - "$results" "$n" "$bytes" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    peer, doc = line.rstrip("\n").split("\t", 1)
    rows.setdefault(peer, []).append(json.loads(doc)["median_s"])
n, size = int(sys.argv[2]), int(sys.argv[3])
print(f"loopback dense all-reduce, n={n}, {size} bytes (median of per-round medians)")
print("| peer | median s | busbw GB/s |")
print("|---|---|---|")
for peer, times in rows.items():
    t = statistics.median(times)
    print(f"| {peer} | {t:.4f} | {2 * (n - 1) / n * size / t / 1e9:.2f} |")
PY
