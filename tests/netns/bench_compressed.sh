#!/usr/bin/env bash
# The compressed all-reduce on the testbed (docs/compressed.md, "On the
# testbed"), side by side in one run: perf/compressed_all_reduce_perf times
# spccl's dense ring (SPCCL_ALGO=ring) and the compressed call on the same
# inputs, checked (-c 1), for piecewise 4-bit two-shot and for token top-k
# 50 % + 4-bit, alternating for ROUNDS rounds.
#
#   bench_compressed.sh [--raw DIR] [--raw-name NAME] [--wait-load L] N RATE BYTES [ROUNDS [ITERS]]
#       defaults: ROUNDS 3, ITERS 5
#
# --raw DIR keeps rank 0's output of every run in DIR/NAME.txt (default NAME
# compressed-nN-RATE-BYTES), each after a line "## mode=MODE round=R", and
# the run's notes in DIR/NAME.meta.json (lib/raw_results.sh). Root only;
# the lab has its own prefix and subnet (NETLAB_PREFIX / NETLAB_SUBNET,
# default spcmp / 10.77.7). Env: SPCCL_BUILD_DIR (default build/), TIMEOUT
# per run (default 900 s).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=lib/raw_results.sh
source "$here/lib/raw_results.sh"
# shellcheck source=lib/dilation.sh
source "$here/lib/dilation.sh"
invocation=("$0" "$@")
raw_parse_options "$@"
set -- "${RAW_ARGS[@]}"
(($# >= 3)) || { echo "usage: bench_compressed.sh [--raw DIR] [--raw-name NAME] [--wait-load L] N RATE BYTES [ROUNDS [ITERS]]" >&2; exit 2; }
n=$1 rate=$2 bytes=$3 rounds=${4:-3} iters=${5:-5}
rate=$(resolve_rate "$rate" "$n")
build=${SPCCL_BUILD_DIR:-$repo/build}
perf="$build/perf/compressed_all_reduce_perf"
[[ -x $perf ]] || { echo "bench_compressed: $perf missing (ninja -C $build compressed_all_reduce_perf)" >&2; exit 2; }
export NETLAB_PREFIX=${NETLAB_PREFIX:-spcmp} NETLAB_SUBNET=${NETLAB_SUBNET:-10.77.7}
netlab="$here/netlab"
limit=${TIMEOUT:-900}

raw_begin "compressed-n$n-$rate-$bytes" txt -- "${invocation[@]}"
work=$(mktemp -d /tmp/bench-compressed.XXXXXX)
cleanup() { rm -rf "$work"; "$netlab" down >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"$netlab" down >/dev/null 2>&1 || true
"$netlab" up "$n" "$rate" >&2
"$netlab" check >&2 || true   # the link's goodput, for the log; not a gate

declare -A mode_flags=([two-shot]="" [topk]="--topk 0.5 -H 1024")
for ((round = 1; round <= rounds; round++)); do
  for mode in two-shot topk; do
    echo "bench_compressed: round $round/$rounds: $mode" >&2
    # shellcheck disable=SC2086  # mode_flags holds separate flags
    SPCCL_ALGO=ring "$netlab" run "$n" --timeout "$limit" --logdir "$work/$mode$round" -- \
      "$perf" -b "$bytes" -e "$bytes" -n "$iters" -w 1 -c 1 -d float -o sum ${mode_flags[$mode]} >&2
    raw_record txt "## mode=$mode round=$round"
    [[ -z $RAW_FILE_BASE ]] || cat "$work/$mode$round/rank0.log" >>"$RAW_FILE_BASE.txt"
    grep -v '^#' "$work/$mode$round/rank0.log" | grep -E '\|' | tail -n 1
  done
done
raw_end
