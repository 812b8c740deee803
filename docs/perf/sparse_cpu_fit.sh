#!/usr/bin/env bash
# The data behind the sparse planner's CPU term (planner.cc, "CPU work";
# docs/perf/sparse.md, "The CPU term"): for every schedule, the measured
# call time and the links-only prediction (SPCCL_SPARSE_CPU_NS_PER_PAIR=0),
# on loopback, 16 M float32, half of each rank's non-zeros shared.
# Prints: n density algorithm measured_us predicted_wire_us output_nnz nnz_over_ranks
#   docs/perf/measure.sh sparse-cpu-fit    (writes docs/perf/raw/sparse_cpu_fit/, with notes)
# docs/perf/make_figures.py fits the weights (docs/perf/figures/sparse_fit.py).
set -euo pipefail
for n in 4 8; do for density in 0.005 0.02 0.05 0.2; do for algorithm in bp hc agsparse dense; do
  SPCCL_SPARSE_CPU_NS_PER_PAIR=0 SPCCL_DEBUG=INFO SPCCL_DEBUG_SUBSYS=ALL timeout 300 \
    build/bin/spcclrun -n "$n" build/perf/sparse_all_reduce_perf -b 64M -e 64M -n 3 -w 1 -c 0 \
    -d float --density "$density" -O 0.5 -a "$algorithm" 2>&1 |
    grep "sparse all-reduce #" | tail -n 3 |
    /usr/bin/python3 -c '
import re, statistics, sys
n, density, algorithm = sys.argv[1:]
lines = sys.stdin.readlines()
field = lambda pattern: [float(re.search(pattern, l).group(1)) for l in lines]
print(n, density, algorithm, statistics.median(field(r"measured ([0-9.]+) us")),
      statistics.median(field(r" " + algorithm + r" ([0-9.]+) us")),
      int(field(r"output nnz (\d+)")[-1]), int(field(r"nnz (\d+) on")[-1]))
' "$n" "$density" "$algorithm"
done; done; done
