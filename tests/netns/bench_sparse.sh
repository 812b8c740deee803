#!/usr/bin/env bash
# Sparse all-reduce on the testbed, side by side in one run: Gloo's sparse
# all-reduce (all-gather of COO) and spccl's sparse all-reduce (auto), with
# spccl's dense ring on the same inputs (measured by the same perf run).
# Inputs: float32, half of each rank's non-zeros from a pool shared by all.
#   bench_sparse.sh [--raw DIR] [--raw-name NAME] [--wait-load L] N RATE BYTES DENSITY [ROUNDS]
#   (root; GLOO_PYTHON: a python3 with torch for the Gloo peer, default /usr/bin/python3;
#   SPCCL_SPARSE_FLAGS adds flags to sparse_all_reduce_perf, e.g. "-a bp"
#   or "--coo")
# --raw DIR keeps every run's JSON line in DIR/NAME.jsonl (default NAME
# sparse-nN-RATE-BYTES-dDENSITY) as {"peer", "round", "result"} (peers
# gloo-sparse and spccl), and the run's notes in DIR/NAME.meta.json
# (lib/raw_results.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/raw_results.sh
source "$here/lib/raw_results.sh"
# shellcheck source=lib/dilation.sh
source "$here/lib/dilation.sh"
invocation=("$0" "$@")
raw_parse_options "$@"
set -- "${RAW_ARGS[@]}"
(($# >= 4)) || { echo "usage: bench_sparse.sh [--raw DIR] [--raw-name NAME] [--wait-load L] N RATE BYTES DENSITY [ROUNDS]" >&2; exit 2; }
n=$1 rate=$2 bytes=$3 density=$4 rounds=${5:-3}
rate=$(resolve_rate "$rate" "$n")
netlab="$here/netlab"
results=$(mktemp /tmp/bench-sparse.XXXXXX)
brought_up=0
cleanup() { rm -f "$results"; [ $brought_up = 1 ] && "$netlab" down >/dev/null 2>&1 || true; }
trap cleanup EXIT
raw_begin "sparse-n$n-$rate-$bytes-d$density" jsonl -- "${invocation[@]}"
# A lab of exactly n hosts at this rate, torn down at the end.
"$netlab" down >/dev/null 2>&1 || true
"$netlab" up "$n" "$rate" >&2
brought_up=1
for ((round = 1; round <= rounds; round++)); do
  echo "bench_sparse: round $round/$rounds: gloo sparse" >&2
  line=$("$netlab" run "$n" --timeout 600 -- "${GLOO_PYTHON:-/usr/bin/python3}" "$here/peers/gloo_allreduce.py" \
    --mode sparse --density "$density" --bytes "$bytes" | grep '^{' | tail -n 1)
  printf 'gloo-sparse\t%s\n' "$line" >>"$results"
  raw_record jsonl "{\"peer\": \"gloo-sparse\", \"round\": $round, \"result\": $line}"
  echo "bench_sparse: round $round/$rounds: spccl sparse + dense" >&2
  line=$("$netlab" run "$n" --timeout 600 -- /bin/bash "$here/peers/spccl_sparse.sh" "$bytes" "$density" 5 \
    ${SPCCL_SPARSE_FLAGS:-} | grep '^{' | tail -n 1)
  printf 'spccl\t%s\n' "$line" >>"$results"
  raw_record jsonl "{\"peer\": \"spccl\", \"round\": $round, \"result\": $line}"
done
raw_end
/usr/bin/python3 - "$results" "$n" "$bytes" "$density" <<'PY'
import json, statistics, sys
rows = {}
extra = {}
for line in open(sys.argv[1]):
    peer, doc = line.rstrip("\n").split("\t", 1)
    d = json.loads(doc)
    rows.setdefault(peer, []).append(d["median_s"])
    if peer == "spccl":
        for key in ("dense_median_s", "algorithm", "bytes_sent_per_rank", "predicted_bytes_sent", "wrong", "cpu_s_per_iter"):
            if key in d:
                extra.setdefault(key, []).append(d[key])
n, size, density = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
print(f"sparse all-reduce, n={n}, {size} bytes float32, density {density}, overlap 0.5")
gloo = statistics.median(rows.get("gloo-sparse", [float("nan")]))
spccl = statistics.median(rows.get("spccl", [float("nan")]))
print("| what | median s |")
print("|---|---|")
print(f"| Gloo sparse | {gloo:.4f} |")
print(f"| spccl sparse (auto: {', '.join(sorted(set(map(str, extra.get('algorithm', ['?'])))))}) | {spccl:.4f} |")
if "dense_median_s" in extra:
    dense = statistics.median(extra["dense_median_s"])
    print(f"| spccl dense ring, same inputs | {dense:.4f} |")
    print(f"speed-up of spccl sparse: {gloo / spccl:.1f}x over Gloo sparse, {dense / spccl:.1f}x over dense ring")
for key in ("bytes_sent_per_rank", "predicted_bytes_sent", "wrong", "cpu_s_per_iter"):
    if key in extra:
        print(f"{key}: {extra[key]}")
PY
