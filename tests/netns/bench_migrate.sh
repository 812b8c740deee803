#!/usr/bin/env bash
# The migration collectives on the testbed (docs/perf/migration.md):
# perf/migrate_perf, a tensor-parallel layer with a straggler, one rank per
# emulated host, RUNS runs of the binary one after the other (each run
# checks its results: migrate_perf's -c 1 default).
#
#   bench_migrate.sh [--raw DIR] [--raw-name NAME] [--wait-load L] E RATE [RUNS] [-- MIGRATE_PERF FLAGS...]
#       defaults: RUNS 2, flags -x 1,1.5,2,4,8 -r 3 -n 5
#
# --raw DIR keeps each run's JSON (migrate_perf -J) as one line of
# DIR/NAME.jsonl (default NAME migrate-eE-RATE) as {"run", "result"}, and
# the run's notes in DIR/NAME.meta.json (lib/raw_results.sh). Root only; the
# lab has its own prefix and subnet (NETLAB_PREFIX / NETLAB_SUBNET, default
# spmig / 10.77.6). Env: SPCCL_BUILD_DIR (default build/), TIMEOUT per run
# (default 580 s).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=lib/raw_results.sh
source "$here/lib/raw_results.sh"
# shellcheck source=lib/dilation.sh
source "$here/lib/dilation.sh"
usage() {
  echo "usage: bench_migrate.sh [--raw DIR] [--raw-name NAME] [--wait-load L] E RATE [RUNS] [-- FLAGS...]" >&2
  exit 2
}
invocation=("$0" "$@")
raw_parse_options "$@"
set -- "${RAW_ARGS[@]}"
(($# >= 2)) || usage
e=$1 rate=$2 runs=2
rate=$(resolve_rate "$rate" "$e")
shift 2
if (($#)) && [[ $1 != -- ]]; then runs=$1; shift; fi
flags=(-x 1,1.5,2,4,8 -r 3 -n 5)
if (($#)); then
  [[ $1 == -- ]] || usage
  shift
  (($#)) && flags=("$@")
fi
[[ $e =~ ^[0-9]+$ && $e -ge 2 && $runs =~ ^[0-9]+$ && $runs -ge 1 ]] || usage
build=${SPCCL_BUILD_DIR:-$repo/build}
perf="$build/perf/migrate_perf"
[[ -x $perf ]] || { echo "bench_migrate: $perf missing (ninja -C $build migrate_perf; needs OpenBLAS)" >&2; exit 2; }
export NETLAB_PREFIX=${NETLAB_PREFIX:-spmig} NETLAB_SUBNET=${NETLAB_SUBNET:-10.77.6}
netlab="$here/netlab"
limit=${TIMEOUT:-580}

raw_begin "migrate-e$e-$rate" jsonl -- "${invocation[@]}"
work=$(mktemp -d /tmp/bench-migrate.XXXXXX)
cleanup() { rm -rf "$work"; "$netlab" down >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"$netlab" down >/dev/null 2>&1 || true
"$netlab" up "$e" "$rate" >&2
"$netlab" check >&2 || true   # the link's goodput, for the log; not a gate

for ((run = 1; run <= runs; run++)); do
  echo "bench_migrate: run $run/$runs: e=$e $rate ${flags[*]}" >&2
  "$netlab" run "$e" --timeout "$limit" -- "$perf" "${flags[@]}" -J "$work/run$run.json"
  raw_record jsonl "{\"run\": $run, \"result\": $(/usr/bin/python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$work/run$run.json")}"
done
raw_end
