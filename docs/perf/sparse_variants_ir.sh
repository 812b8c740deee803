#!/usr/bin/env bash
# Instructions per call of the variants beyond Zen and Zen's own scheme
# (docs/perf/sparse.md, "What the variants beyond Zen buy"): rank 0 under
# callgrind, only spccl::sparse::runSparseAllReduce counted (as in
# docs/perf/sparse_cpu.md), so the figure is the same whatever the load.
# Loopback, the uniform inputs of docs/perf/sparse_variants.sh (seed 1,
# -O 0.5). The figure is one steady call: the count of three
# calls (-w 1 -n 1) less that of two (-w 0 -n 1), since the first call also
# builds what the communicator keeps (Zen's O(M) tables for h0, the
# workspace). (callgrind's --zero-before did not match the function here.)
# Prints: n workload density algorithm encoding partitioner instructions_per_call
#
#   docs/perf/sparse_variants_ir.sh [--build DIR] [--size BYTES] [--ranks N] [--density D]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$repo/build size=16777216 n=4 density=0.01
while (($#)); do
  case $1 in
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --size) size=${2:?--size needs bytes}; shift 2 ;;
    --ranks) n=${2:?--ranks needs a count}; shift 2 ;;
    --density) density=${2:?--density needs a fraction}; shift 2 ;;
    *) echo "sparse_variants_ir: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null || { echo "sparse_variants_ir: needs valgrind" >&2; exit 2; }
scratch=$(mktemp -d /tmp/sparse-variants-ir.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
# Rank 0 under callgrind, the others as they are.
cat >"$scratch/rank.sh" <<SH
#!/bin/bash
if [ "\$SPCCL_RANK" = 0 ]; then exec valgrind --tool=callgrind --callgrind-out-file=$scratch/cg.out \\
  --toggle-collect='spccl::sparse::runSparseAllReduce*' "\$@"; else exec "\$@"; fi
SH
chmod +x "$scratch/rank.sh"

count() {  # WARMUP WORKLOAD ALGORITHM ENCODING PARTITIONER: instructions of WARMUP + 2 calls
  local warmup=$1
  shift
  [[ $1 == uniform ]] || { echo "sparse_variants_ir: only the uniform inputs" >&2; return 2; }
  rm -f "$scratch/cg.out"
  SPCCL_TIMEOUT_MS=900000 timeout 1200 "$build/bin/spcclrun" -n "$n" "$scratch/rank.sh" \
    "$build/perf/sparse_all_reduce_perf" -b "$size" -e "$size" -n 1 -w "$warmup" -c 0 -d float \
    -D "$density" -O 0.5 -a "$2" -E "$3" -P "$4" --seed 1 >"$scratch/out" 2>&1 ||
    { echo "sparse_variants_ir: $* failed" >&2; tail -n 20 "$scratch/out" >&2; return 1; }
  callgrind_annotate "$scratch/cg.out" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}

run() {  # WORKLOAD ALGORITHM ENCODING PARTITIONER
  local two three
  two=$(count 0 "$@")
  three=$(count 1 "$@")
  echo "$n $1 $density $2 $3 $4 $((three - two))"
}

for p in zen-hash two-pass permutation; do run uniform bp auto "$p"; done
for algorithm in hc bp; do
  for e in coo bitmap packed auto; do
    [[ $algorithm == bp && $e == auto ]] || run uniform "$algorithm" "$e" permutation
  done
done
