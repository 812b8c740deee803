#!/usr/bin/env bash
# Sparse all-reduce against density, every algorithm, on the testbed
# (issue 3's sweep; docs/perf/sparse.md): one checked sparse_all_reduce_perf
# run per (algorithm, density), each also timing spccl's dense all-reduce of
# the same inputs. Appends CSV rows to OUT:
#   n,density,algorithm,chosen,median_s,dense_median_s,bytes_sent,predicted_bytes,wrong
#   bench_sparse_sweep.sh [--raw DIR] [--raw-name NAME] [--wait-load L] N RATE BYTES OUT
#                         [DENSITIES [ALGORITHMS]]      (root)
# DENSITIES and ALGORITHMS are space-separated lists; SPCCL_SPARSE_FLAGS adds
# flags (e.g. --coo). The lab uses its own prefix and subnet, so another lab
# (bench_sparse.sh, CI's smoke test) may exist at the same time.
# --raw DIR also writes the rows to DIR/NAME.csv (default NAME sweep-nN-RATE;
# emptied first) and the run's notes to DIR/NAME.meta.json
# (lib/raw_results.sh); OUT may then be "-" (no other copy).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/raw_results.sh
source "$here/lib/raw_results.sh"
# shellcheck source=lib/dilation.sh
source "$here/lib/dilation.sh"
invocation=("$0" "$@")
raw_parse_options "$@"
set -- "${RAW_ARGS[@]}"
(($# >= 4)) || { echo "usage: bench_sparse_sweep.sh [--raw DIR] [--raw-name NAME] [--wait-load L] N RATE BYTES OUT [DENSITIES [ALGORITHMS]]" >&2; exit 2; }
n=$1 rate=$2 bytes=$3 out=$4
rate=$(resolve_rate "$rate" "$n")
densities=${5:-"0.001 0.005 0.01 0.05 0.1 0.5"}
algorithms=${6:-"auto bp hc agsparse block"}
[[ $out != - || -n $RAW_DIR ]] || { echo "bench_sparse_sweep: OUT '-' needs --raw DIR" >&2; exit 2; }
export NETLAB_PREFIX=${NETLAB_PREFIX:-spsw} NETLAB_SUBNET=${NETLAB_SUBNET:-10.77.3}
netlab="$here/netlab"
cleanup() { "$netlab" down >/dev/null 2>&1 || true; }
trap cleanup EXIT
header="n,density,algorithm,chosen,median_s,dense_median_s,bytes_sent,predicted_bytes,wrong"
raw_begin "sweep-n$n-$rate" csv -- "${invocation[@]}"
raw_record csv "$header"
"$netlab" down >/dev/null 2>&1 || true
"$netlab" up "$n" "$rate" >&2
[[ $out == - || -s $out ]] || echo "$header" >"$out"
for density in $densities; do
  for algorithm in $algorithms; do
    echo "bench_sparse_sweep: n=$n density $density algorithm $algorithm" >&2
    line=$("$netlab" run "$n" --timeout 600 -- /bin/bash "$here/peers/spccl_sparse.sh" "$bytes" \
      "$density" 5 -a "$algorithm" ${SPCCL_SPARSE_FLAGS:-} | grep '^{' | tail -n 1)
    row=$(/usr/bin/python3 - "$line" "$algorithm" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
print(f'{d["n"]},{d["density"]:.6g},{sys.argv[2]},{d["algorithm"]},{d["median_s"]:.6f},'
      f'{d["dense_median_s"]:.6f},{d["bytes_sent_per_rank"]:.0f},{d["predicted_bytes_sent"]:.0f},{d["wrong"]}')
PY
)
    [[ $out == - ]] || printf '%s\n' "$row" >>"$out"
    raw_record csv "$row"
  done
done
raw_end
