#!/usr/bin/env bash
# Re-measures the raw results behind docs/perf's tables and plots
# (docs/perf/README.md, "Figures"): one FIGURE at a time, each into
# docs/perf/raw/<dir>/ with its notes (*.meta.json: command, date, machine,
# commit, load). Then `docs/perf/make_figures.py` rebuilds the tables and
# plots. Run from anywhere; testbed figures need root (tests/netns).
#
#   docs/perf/measure.sh FIGURE...
#
# FIGURE: dense-testbed dense-loopback migration sparse-gloo sparse-sweep
#         sparse-regimes mpi-interpose compressed-testbed codec-throughput
#         codec-error compression-schedules sparse-cpu-fit sparse-variants
#
# Each figure first waits until the 1-minute load average is below
# BENCH_WAIT_LOAD (default 1.5; polled every 30 s for at most BENCH_WAIT_MAX
# seconds, default 2400, then it runs anyway): the machine's cores are
# shared. What the wait did goes into the notes of every raw file the
# figure writes (BENCH_NOTES). SPCCL_BUILD_DIR: the build (default build/),
# Release, with the perf binaries built.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
raw=docs/perf/raw
netns=tests/netns
build=${SPCCL_BUILD_DIR:-build}
size=67108864

# with_notes DIR NAME SUFFIX WHAT -- COMMAND...: COMMAND's stdout into
# DIR/NAME.SUFFIX, with notes that record WHAT as the command line.
with_notes() {
  local dir=$1 name=$2 suffix=$3 what=$4
  shift 5
  mkdir -p "$dir"
  /usr/bin/python3 "$netns/lib/raw_meta.py" begin "$dir/$name.meta.json" -- "$what"
  "$@" >"$dir/$name.$suffix"
  /usr/bin/python3 "$netns/lib/raw_meta.py" end "$dir/$name.meta.json"
}

codec_throughput_runs() {  # three runs, one after the other: cells are medians over them
  local i
  for i in 1 2 3; do "$build/perf/codec_throughput" -s 7 -t 0.05; done
}

compression_schedules() {  # each row prefixed with CODEC BITS SCHEDULE N
  local codec bits schedule n
  echo "# $build/bin/spcclrun -n N $build/perf/compressed_all_reduce_perf -b 4M -e 4M -n 2 -w 1 -c 1 -d float -o sum -m CODEC -q BITS -S SCHEDULE"
  echo "# CODEC BITS SCHEDULE N | size count type redop | dense_us comp_us speedup | dense_cpu comp_cpu | ratio wire_B/rank formula_B wire% | max_err rmse rel_err #wrong | codec_GB/s"
  for codec_bits in "piecewise 4" "piecewise 8" "linear 4" "linear 8"; do
    read -r codec bits <<<"$codec_bits"
    for schedule in two-shot ring; do
      for n in 2 3 4 6 8; do
        timeout 300 "$build/bin/spcclrun" -n "$n" "$build/perf/compressed_all_reduce_perf" -b 4M -e 4M \
          -n 2 -w 1 -c 1 -d float -o sum -m "$codec" -q "$bits" -S "$schedule" |
          grep -v '^#' | grep '|' | sed "s/^/$codec $bits $schedule $n |/"
      done
    done
  done
}

measure() {
  BENCH_NOTES=$(/usr/bin/python3 "$netns/lib/raw_meta.py" wait "${BENCH_WAIT_LOAD:-1.5}" "${BENCH_WAIT_MAX:-2400}")
  export BENCH_NOTES
  echo "measure: $1: $BENCH_NOTES" >&2
  case $1 in
    dense-testbed)
      for n in 4 8; do
        NETLAB_PREFIX=spdense BENCH_SPCCL_CMD="$netns/peers/spccl_allreduce.sh $size" ROUNDS=3 \
          "$netns/bench_peers.sh" --raw "$raw/dense" "$n" 1gbit "$size"
      done ;;
    dense-loopback)
      "$netns/bench_loopback.sh" --raw "$raw/dense" 4 "$size" 3 ;;
    migration)
      "$netns/bench_migrate.sh" --raw "$raw/migration" 4 1gbit 3 -- -x 1,1.5,2,4,8 -r 3 -n 5
      "$netns/bench_migrate.sh" --raw "$raw/migration" 8 1gbit 3 -- -x 1,1.5,2,4,8 -r 3 -n 4 ;;
    sparse-gloo)
      NETLAB_PREFIX=spsp "$netns/bench_sparse.sh" --raw "$raw/sparse_gloo" 8 1gbit "$size" 0.01 3
      NETLAB_PREFIX=spsp SPCCL_SPARSE_FLAGS=--coo "$netns/bench_sparse.sh" --raw "$raw/sparse_gloo" \
        --raw-name "sparse-n8-1gbit-$size-d0.01-coo" 8 1gbit "$size" 0.01 3
      NETLAB_PREFIX=spsp "$netns/bench_sparse.sh" --raw "$raw/sparse_gloo" 8 1gbit "$size" 0.05 3 ;;
    sparse-sweep)
      "$netns/bench_sparse_sweep.sh" --raw "$raw/sparse_sweep" --raw-name sweep-n8 8 1gbit "$size" - \
        "0.001 0.005 0.01 0.05 0.1" "auto bp hc agsparse block"
      "$netns/bench_sparse_sweep.sh" --raw "$raw/sparse_sweep" --raw-name sweep-n8-50 8 1gbit "$size" - \
        0.5 "auto hc"
      "$netns/bench_sparse_sweep.sh" --raw "$raw/sparse_sweep" --raw-name sweep-n4 4 1gbit "$size" - \
        "0.001 0.01 0.05 0.1" "auto bp hc agsparse"
      echo "measure: make_figures.py reads every CSV in $raw/sparse_sweep: remove the ones these replace" >&2 ;;
    sparse-regimes)
      SPCCL_SPARSE_FLAGS="-O 0" "$netns/bench_sparse_sweep.sh" --raw "$raw/sparse_regimes" --raw-name overlap0 \
        8 1gbit "$size" - "0.001 0.01" "auto bp hc agsparse"
      SPCCL_SPARSE_FLAGS="-O 0" SPCCL_SPARSE_CPU_NS_PER_PAIR=0 "$netns/bench_sparse_sweep.sh" --raw "$raw/sparse_regimes" \
        --raw-name overlap0-links-only 8 1gbit "$size" - "0.001 0.01" auto
      SPCCL_SPARSE_FLAGS="-Z 1.1 -H 64" "$netns/bench_sparse_sweep.sh" --raw "$raw/sparse_regimes" --raw-name zipf \
        8 1gbit "$size" - 0.01 "auto bp hc agsparse"
      SPCCL_SPARSE_FLAGS="-Z 1.1 -H 64" SPCCL_SPARSE_CPU_NS_PER_PAIR=0 "$netns/bench_sparse_sweep.sh" \
        --raw "$raw/sparse_regimes" --raw-name zipf-links-only 8 1gbit "$size" - 0.01 auto ;;
    mpi-interpose)
      "$netns/bench_mpi_interpose.sh" --raw "$raw/mpi_interpose" 8 1gbit 16777216 0.01 3 ;;
    compressed-testbed)
      "$netns/bench_compressed.sh" --raw "$raw/compressed" 8 1gbit "$size" 3 ;;
    codec-throughput)
      with_notes "$raw/codec_throughput" codec_throughput txt \
        "3 runs of $build/perf/codec_throughput -s 7 -t 0.05" -- codec_throughput_runs ;;
    codec-error)
      with_notes "$raw/codec_error" codec_error txt "$build/perf/codec_error" -- "$build/perf/codec_error" ;;
    compression-schedules)
      with_notes "$raw/compression_schedules" schedules txt \
        "for piecewise/linear 4/8-bit, two-shot/ring, n = 2 3 4 6 8: spcclrun -n N compressed_all_reduce_perf -b 4M -e 4M -n 2 -w 1 -c 1 -d float -o sum -m CODEC -q BITS -S SCHEDULE" \
        -- compression_schedules ;;
    sparse-variants)
      for n in 8 4; do
        docs/perf/sparse_variants.sh --raw "$raw/sparse_variants" --raw-name "variants-n$n" --build "$build" \
          --size "$size" --ranks "$n"
      done
      NETLAB_PREFIX=spvar docs/perf/sparse_variants.sh --raw "$raw/sparse_variants" --raw-name variants-n8-dilated \
        --build "$build" --size "$size" --ranks 8 --densities 0.01 --workloads uniform --testbed dilated
      with_notes "$raw/sparse_variants" ir-n4 txt "docs/perf/sparse_variants_ir.sh --size 16777216 --ranks 4 --density 0.01" \
        -- docs/perf/sparse_variants_ir.sh --build "$build" --size 16777216 --ranks 4 --density 0.01 ;;
    sparse-cpu-fit)
      with_notes "$raw/sparse_cpu_fit" sparse_cpu_fit txt docs/perf/sparse_cpu_fit.sh -- docs/perf/sparse_cpu_fit.sh ;;
    *) echo "measure: unknown figure '$1' (see the header of docs/perf/measure.sh)" >&2; return 2 ;;
  esac
  unset BENCH_NOTES
}

(($#)) || { sed -n '2,19p' "$0" >&2; exit 2; }
for figure in "$@"; do measure "$figure"; done
