#!/usr/bin/env bash
# spccl as a bench_peers peer: runs all_reduce_perf (checked, -c 1) for one
# size on every host and prints, on rank 0, one JSON line shaped like the
# other peers' ("median_s": median over iterations of the slowest rank).
#   spccl_allreduce.sh BYTES [ITERS]    (SPCCL_BUILD_DIR, default build/)
set -euo pipefail
bytes=$1
iters=${2:-5}
here=$(cd "$(dirname "$0")/../../.." && pwd)
build=${SPCCL_BUILD_DIR:-$here/build}
json=$(mktemp /tmp/spccl-perf.XXXXXX.json)
trap 'rm -f "$json"' EXIT
"$build/perf/all_reduce_perf" -b "$bytes" -e "$bytes" -n "$iters" -w 2 -c 1 -J "$json" >&2
[ "${SPCCL_RANK:-0}" = 0 ] || exit 0
/usr/bin/python3 - "$json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["results"][0]["out_of_place"]
print(json.dumps({"peer": "spccl", "n": doc["nranks"], "bytes": doc["results"][0]["size"],
                  "median_s": r["median_time_us"] / 1e6, "wrong": r["wrong"],
                  "bytes_sent_per_rank": r["bytes_sent_per_rank"],
                  "cpu_s_per_iter": r["cpu_s_per_iter"]}))
PY
