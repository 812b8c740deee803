#!/usr/bin/env bash
# Run the Open MPI all-reduce peer across the first N netlab hosts.
#
#   mpi_run.sh N [--algorithm default|ring] [--timeout S] [-- mpi_allreduce args]
#
# mpirun normally reaches other hosts with ssh. Here mpirun itself runs in
# host 1 (`netlab exec 1`, hostname spl-h1) and `--mca plm_rsh_agent
# netns_rsh` replaces ssh: "logging in" to spl-hK means `ip netns exec
# spl-hK`. Host names resolve through /etc/netns/spl-hK/hosts, written by
# `netlab up`. TCP only (no shared memory between "hosts"), pinned to the
# lab interface for both MPI traffic (btl) and the runtime's own (oob).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
NETLAB="$HERE/../netlab"
PREFIX=${NETLAB_PREFIX:-spl}
BUILD_DIR=${NETLAB_BUILD_DIR:-$REPO/build/netns}
BIN="$BUILD_DIR/mpi_allreduce"

n=${1:?usage: mpi_run.sh N [--algorithm default|ring] [--timeout S] [-- args]}
shift
algorithm=default limit=600
while (($#)); do
  case $1 in
    --algorithm) algorithm=${2:?}; shift 2 ;;
    --timeout) limit=${2:?}; shift 2 ;;
    --) shift; break ;;
    *) echo "mpi_run.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done

command -v mpicc >/dev/null || { echo "mpi_run.sh: mpicc not found (apt install libopenmpi-dev)" >&2; exit 2; }
if [[ ! -x $BIN || $HERE/mpi_allreduce.c -nt $BIN ]]; then
  mkdir -p "$BUILD_DIR"
  mpicc -O2 -Wall -Wextra -Werror -o "$BIN" "$HERE/mpi_allreduce.c"
fi

hosts=""
for ((i = 1; i <= n; i++)); do hosts+="${hosts:+,}${PREFIX}-h$i:1"; done

tuning=()
case $algorithm in
  default) ;;
  # coll/tuned's allreduce algorithm 4 is the ring (docs/benchmarking.md, "Side by side").
  ring) tuning=(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4) ;;
  *) echo "mpi_run.sh: --algorithm must be default or ring" >&2; exit 2 ;;
esac

exec "$NETLAB" exec 1 --timeout "$limit" -- \
  env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  mpirun --allow-run-as-root -np "$n" --host "$hosts" --bind-to none \
  --mca plm_rsh_agent "$HERE/netns_rsh" --mca plm_rsh_no_tree_spawn 1 \
  --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include veth0 --mca oob_tcp_if_include veth0 \
  -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
  "${tuning[@]}" "$BIN" "$@"
