# shellcheck shell=bash disable=SC2154,SC2034  # results, failed, bench_*: the caller's
# Sourced by the GPU benchmark scripts (run_device_bench.sh,
# run_staging_pieces.sh). They set `results` (the log folder), `failed=0`,
# `bench_timeout` (seconds per run; BENCH_TIMEOUT overrides) and
# `bench_tail` (table lines to print) first.
#   bench NAME CMD...   runs CMD under `timeout` into $results/NAME.log,
#                       prints its last table lines, and sets failed=1 when
#                       it fails or its check (-c 1) finds a wrong element.
bench() {
  local name=$1
  shift
  local log=$results/$name.log
  timeout "${BENCH_TIMEOUT:-$bench_timeout}" "$@" >"$log" 2>&1
  local status=$?
  if [[ $status -ne 0 ]] || ! grep -q "Out of bounds values : 0 OK" "$log"; then
    echo "== $name: FAIL (exit $status)"
    failed=1
  else
    echo "== $name"
  fi
  grep -vE '^#  *(Rank|Using|nThread)' "$log" | tail -n "$bench_tail"
}
