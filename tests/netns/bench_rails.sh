#!/usr/bin/env bash
# Multi-rail tcp on the testbed, side by side in one run: spccl's dense
# all-reduce (checked) on N hosts with RAILS rails of RATE each, using 1 rail
# and then all of them (SPCCL_TOPO_RAILS), alternating for ROUNDS rounds.
# Prints the median over rounds of each run's median (slowest rank).
#   bench_rails.sh [--raw DIR] [--raw-name NAME] [--wait-load L] N RATE BYTES [RAILS] [ROUNDS]
#   (root; SPCCL_BUILD_DIR)
# --raw DIR keeps every run's JSON line in DIR/NAME.jsonl (default NAME
# rails-nN-RATE-BYTES-rRAILS) as {"rails_used", "round", "result"}, and the
# run's notes in DIR/NAME.meta.json (lib/raw_results.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/raw_results.sh
source "$here/lib/raw_results.sh"
# shellcheck source=lib/dilation.sh
source "$here/lib/dilation.sh"
invocation=("$0" "$@")
raw_parse_options "$@"
set -- "${RAW_ARGS[@]}"
(($# >= 3)) || { echo "usage: bench_rails.sh [--raw DIR] [--raw-name NAME] [--wait-load L] N RATE BYTES [RAILS] [ROUNDS]" >&2; exit 2; }
n=$1 rate=$2 bytes=$3 rails=${4:-2} rounds=${5:-3}
rate=$(resolve_rate "$rate" "$n")
netlab="$here/netlab"
results=$(mktemp /tmp/bench-rails.XXXXXX)
brought_up=0
cleanup() { rm -f "$results"; [ $brought_up = 1 ] && "$netlab" down >/dev/null 2>&1 || true; }
trap cleanup EXIT
raw_begin "rails-n$n-$rate-$bytes-r$rails" jsonl -- "${invocation[@]}"
"$netlab" down >/dev/null 2>&1 || true
"$netlab" up "$n" "$rate" --rails "$rails" >&2
brought_up=1
for ((round = 1; round <= rounds; round++)); do
  for use in 1 "$rails"; do
    echo "bench_rails: round $round/$rounds: SPCCL_TOPO_RAILS=$use" >&2
    line=$(SPCCL_TRANSPORT=tcp SPCCL_TOPO_RAILS=$use "$netlab" run "$n" --timeout 600 -- \
      /bin/bash "$here/peers/spccl_allreduce.sh" "$bytes" 5 | grep '^{' | tail -n 1)
    printf '%s\t%s\n' "$use" "$line" >>"$results"
    raw_record jsonl "{\"rails_used\": $use, \"round\": $round, \"result\": $line}"
  done
done
raw_end
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
