#!/usr/bin/env bash
# The main job: builds spccl and runs a 4-rank sparse all-reduce on this
# machine — 16 M float32 per rank at 1 % density, half of the non-zeros
# shared by all ranks — with automatic algorithm selection, checked (-c 1)
# bit for bit against the dense all-reduce, whose time is shown beside it.
# Extra arguments go to the perf binary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh build
flags=(-DCMAKE_BUILD_TYPE=Release)
source scripts/compiler-cache.sh  # as run-tests.sh, which then rebuilds nothing of this
cmake -S . -B build -G Ninja "${flags[@]}" >/dev/null
cmake --build build -j"$(nproc)" --target spcclrun sparse_all_reduce_perf
exec build/bin/spcclrun -n 4 -- build/perf/sparse_all_reduce_perf -b 64M -e 64M \
  --density 0.01 -O 0.5 -a auto -n 5 -w 2 -c 1 "$@"
