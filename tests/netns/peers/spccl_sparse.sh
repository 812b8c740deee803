#!/usr/bin/env bash
# spccl's sparse all-reduce as a bench_peers peer: runs sparse_all_reduce_perf
# (checked, -c 1) for one size on every host and prints, on rank 0, one JSON
# line shaped like the other peers' ("median_s": median over iterations of
# the slowest rank), plus the dense all-reduce of the same inputs.
#   spccl_sparse.sh BYTES [DENSITY [ITERS [EXTRA FLAGS...]]]   (SPCCL_BUILD_DIR, default build/)
# Inputs as the Gloo sparse peer's: half of each rank's non-zeros from a
# shared pool (-O 0.5), float32.
#   BENCH_SPCCL_CMD='tests/netns/peers/spccl_sparse.sh 67108864 0.01' \
#     tests/netns/bench_peers.sh 8 1gbit 67108864
set -euo pipefail
bytes=$1
density=${2:-0.01}
iters=${3:-5}
shift $(($# < 3 ? $# : 3))
here=$(cd "$(dirname "$0")/../../.." && pwd)
build=${SPCCL_BUILD_DIR:-$here/build}
json=$(mktemp /tmp/spccl-sparse-perf.XXXXXX.json)
trap 'rm -f "$json"' EXIT
"$build/perf/sparse_all_reduce_perf" -b "$bytes" -e "$bytes" -n "$iters" -w 2 -c 1 -d float \
  --density "$density" -O 0.5 -J "$json" "$@" >&2
[ "${SPCCL_RANK:-0}" = 0 ] || exit 0
/usr/bin/python3 - "$json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["results"][0]
s, d = r["sparse"], r["dense"]
print(json.dumps({"peer": "spccl-sparse", "mode": "sparse", "n": doc["nranks"], "bytes": r["size"],
                  "density": r["density"], "gamma": r["gamma"], "algorithm": r["algorithm"],
                  "median_s": s["median_time_us"] / 1e6, "wrong": s["wrong"],
                  "divergent_ranks": r["divergent_ranks"],
                  "bytes_sent_per_rank": r["stats_bytes_sent"],
                  "predicted_bytes_sent": r["predicted_bytes_sent"],
                  "push_imbalance": r["push_imbalance"], "pull_imbalance": r["pull_imbalance"],
                  "cpu_s_per_iter": s["cpu_s_per_iter"],
                  "dense_median_s": d["median_time_us"] / 1e6, "speedup": r["speedup"]}))
PY
