#!/usr/bin/env bash
# The main job: builds spccl and runs a 4-rank all-reduce on this machine
# with result checking (-c 1). Extra arguments go to the perf binary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh build
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target spcclrun all_reduce_perf
exec build/bin/spcclrun -n 4 -- build/perf/all_reduce_perf -b 8 -e 64M -f 4 -c 1 "$@"
