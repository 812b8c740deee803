#!/usr/bin/env bash
# Multi-rail tcp on the testbed, side by side in one run: spccl's dense
# all-reduce (checked) on N hosts with RAILS rails of RATE each, using 1 rail
# and then all of them (SPCCL_TOPO_RAILS), alternating for ROUNDS rounds.
# Prints the median over rounds of each run's median (slowest rank).
#   bench_rails.sh N RATE BYTES [RAILS] [ROUNDS]     (root; SPCCL_BUILD_DIR)
set -euo pipefail
n=$1 rate=$2 bytes=$3 rails=${4:-2} rounds=${5:-3}
here=$(cd "$(dirname "$0")" && pwd)
netlab="$here/netlab"
results=$(mktemp /tmp/bench-rails.XXXXXX)
brought_up=0
cleanup() { rm -f "$results"; [ $brought_up = 1 ] && "$netlab" down >/dev/null 2>&1 || true; }
trap cleanup EXIT
"$netlab" down >/dev/null 2>&1 || true
"$netlab" up "$n" "$rate" --rails "$rails" >&2
brought_up=1
for ((round = 1; round <= rounds; round++)); do
  for use in 1 "$rails"; do
    echo "bench_rails: round $round/$rounds: SPCCL_TOPO_RAILS=$use" >&2
    line=$(SPCCL_TRANSPORT=tcp SPCCL_TOPO_RAILS=$use "$netlab" run "$n" --timeout 600 -- \
      /bin/bash "$here/peers/spccl_allreduce.sh" "$bytes" 5 | grep '^{' | tail -n 1)
    printf '%s\t%s\n' "$use" "$line" >>"$results"
  done
done
/usr/bin/python3 - "$results" "$n" "$bytes" "$rate" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    use, doc = line.rstrip("\n").split("\t", 1)
    runs.setdefault(int(use), []).append(json.loads(doc))
n, size, rate = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
print(f"dense all-reduce over tcp, n={n}, {size} bytes float32, {rate} per rail")
print("| rails used | median s | per-round medians | wrong | CPU s/iter |")
print("|---|---|---|---|---|")
base = None
for use in sorted(runs):
    times = [d["median_s"] for d in runs[use]]
    med = statistics.median(times)
    base = base or med
    wrong = sum(d["wrong"] for d in runs[use])
    cpu = statistics.median(d["cpu_s_per_iter"] for d in runs[use])
    print(f"| {use} | {med:.4f} ({base / med:.2f}x) | {' '.join(f'{t:.3f}' for t in times)} "
          f"| {wrong} | {cpu:.3f} |")
PY
