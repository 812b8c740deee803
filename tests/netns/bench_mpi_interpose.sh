#!/usr/bin/env bash
# The same unmodified MPI program on the testbed, with and without
# LD_PRELOAD=libspccl_mpi_interpose.so, side by side in one run (issue 7):
# MPI_Allreduce(float, MPI_SUM) of COUNT floats at DENSITY, half of each
# rank's non-zeros shared by all ranks (tests/mpi/mpi_sparse_allreduce_bench.c),
# mpirun across the netlab hosts as in peers/mpi_run.sh. Root only.
#
#   bench_mpi_interpose.sh [--raw DIR] [--raw-name NAME] [--wait-load L] [N [RATE [COUNT [DENSITY [ROUNDS]]]]]
#       defaults: 8 1gbit 16777216 0.01 3
#
# --raw DIR keeps every run's JSON line in DIR/NAME.jsonl (default NAME
# mpi-interpose-nN-RATE-COUNT-dDENSITY) as {"peer", "round", "wall_s",
# "result"} (peers plain and spccl), and the run's notes in
# DIR/NAME.meta.json (lib/raw_results.sh).
#
# Env: SPCCL_BUILD_DIR (default build/: needs the targets
# spccl_mpi_interpose and mpi_sparse_allreduce_bench), NETLAB_PREFIX /
# NETLAB_SUBNET (default splmpi / 10.77.2, so as not to disturb another
# lab), TIMEOUT per mpirun (default 600 s), ITERS (default 5).
# Prints a markdown table (median of the per-round medians of the slowest
# rank's MPI_Allreduce, and of the whole mpirun's wall time: start-up,
# input generation, spccl's communicator set-up and the check included)
# and the interposer's routing report of the last interposed run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/raw_results.sh
source "$here/lib/raw_results.sh"
# shellcheck source=lib/dilation.sh
source "$here/lib/dilation.sh"
invocation=("$0" "$@")
raw_parse_options "$@"
set -- "${RAW_ARGS[@]}"
n=${1:-8} rate=${2:-1gbit} count=${3:-16777216} density=${4:-0.01} rounds=${5:-3}
rate=$(resolve_rate "$rate" "$n")
repo=$(cd "$here/../.." && pwd)
build=${SPCCL_BUILD_DIR:-$repo/build}
export NETLAB_PREFIX=${NETLAB_PREFIX:-splmpi} NETLAB_SUBNET=${NETLAB_SUBNET:-10.77.2}
netlab="$here/netlab"
limit=${TIMEOUT:-600} iters=${ITERS:-5}
bench="$build/tests/mpi/mpi_sparse_allreduce_bench"
interposer="$build/interpose/mpi/libspccl_mpi_interpose.so"
for f in "$bench" "$interposer"; do
  [[ -e $f ]] || { echo "bench_mpi_interpose: $f missing (ninja -C $build spccl_mpi_interpose mpi_sparse_allreduce_bench)" >&2; exit 2; }
done

raw_begin "mpi-interpose-n$n-$rate-$count-d$density" jsonl -- "${invocation[@]}"
work=$(mktemp -d /tmp/bench-mpi-interpose.XXXXXX)
cleanup() { rm -rf "$work"; "$netlab" down >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"$netlab" down >/dev/null 2>&1 || true
"$netlab" up "$n" "$rate" >&2

hosts=""
for ((i = 1; i <= n; i++)); do hosts+="${hosts:+,}${NETLAB_PREFIX}-h$i:1"; done
# run_mpi [mpirun -x options...]: one run of the benchmark across the hosts.
# netns_rsh stands in for ssh; TCP only, on the lab interface (as mpi_run.sh).
run_mpi() {
  "$netlab" exec 1 --timeout "$limit" -- \
    env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --allow-run-as-root -np "$n" --host "$hosts" --bind-to none \
    --mca plm_rsh_agent "$here/peers/netns_rsh" --mca plm_rsh_no_tree_spawn 1 \
    --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include veth0 --mca oob_tcp_if_include veth0 \
    -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM "$@" \
    "$bench" --count "$count" --density "$density" --warmup 1 --iters "$iters"
}

# timed_run PEER [mpirun -x options...]: one run, its last JSON line and its
# wall time appended to the results.
timed_run() {
  local peer=$1 start end
  shift
  start=$(date +%s%N)
  run_mpi "$@" >"$work/$peer.out" 2>&1 || { cat "$work/$peer.out" >&2; exit 1; }
  end=$(date +%s%N)
  local line
  line=$(grep '^{' "$work/$peer.out" | tail -n 1)
  printf '%s\t%s\t%s\n' "$peer" "$(((end - start) / 1000000))" "$line" >>"$work/results"
  raw_record jsonl "{\"peer\": \"$peer\", \"round\": $round, \"wall_s\": $(((end - start) / 1000000))e-3, \"result\": $line}"
}

for ((round = 1; round <= rounds; round++)); do
  echo "bench_mpi_interpose: round $round/$rounds: plain Open MPI" >&2
  timed_run plain
  echo "bench_mpi_interpose: round $round/$rounds: LD_PRELOAD=libspccl_mpi_interpose.so" >&2
  timed_run spccl -x "LD_PRELOAD=$interposer" -x SPCCL_INTERPOSE_REPORT=1 -x SPCCL_SOCKET_IFNAME=veth0
done

raw_end
/usr/bin/python3 - "$work/results" "$n" "$rate" "$count" "$density" "$rounds" <<'PY'
import json, statistics, sys
path, n, rate, count, density, rounds = sys.argv[1:]
runs = {}
walls = {}
for line in open(path):
    peer, wall, doc = line.rstrip("\n").split("\t", 2)
    runs.setdefault(peer, []).append(json.loads(doc))
    walls.setdefault(peer, []).append(float(wall) / 1000)  # ms -> s
print(f"MPI_Allreduce float32 SUM, n={n} hosts at {rate}, {int(count)} floats "
      f"({int(count) * 4 / 2**20:.0f} MiB), density {density}, half of the non-zeros shared; "
      f"median of {rounds} rounds' medians, slowest rank")
print("| run | median s per call | per-round medians | wrong | mpirun wall s (median) |")
print("|---|---|---|---|---|")
med = {}
for peer, label in (("plain", "Open MPI 4.1 (no preload)"),
                    ("spccl", "same binary, LD_PRELOAD=libspccl_mpi_interpose.so")):
    docs = runs.get(peer, [])
    med[peer] = statistics.median(d["median_s"] for d in docs)
    per_round = " ".join("%.3f" % d["median_s"] for d in docs)
    wrong = sum(d["wrong"] for d in docs)
    wall = statistics.median(walls.get(peer, [float("nan")]))
    print(f"| {label} | {med[peer]:.3f} | {per_round} | {wrong} | {wall:.2f} |")
print(f"speed-up with the interposer: {med['plain'] / med['spccl']:.1f}x per call, "
      f"{statistics.median(walls['plain']) / statistics.median(walls['spccl']):.1f}x whole-run wall time")
PY
echo
echo "routing report of the last interposed run:"
awk '/^spccl MPI interposer report/ {on = 1; print; next} on && /^\|/ {print; next} {on = 0}' "$work/spccl.out"
