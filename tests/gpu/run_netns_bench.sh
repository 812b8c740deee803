#!/usr/bin/env bash
# The testbed on the lent GPU machine (16 cores; the issue "Network-bound
# speed" asks for it there): first a short check that network namespaces
# and tc work (one namespace, netlab's HTB qdisc), then, if they do, the n = 8
# sparse comparison at 1 Gbit/s undilated (Gloo sparse, spccl auto, the
# dense ring; tests/netns/bench_sparse.sh), its raw results in
# RESULTS_DIR/raw. A machine where namespaces do not work says so and exits
# 0: that is a finding, not a failure of spccl.
#
#   tests/gpu/run_netns_bench.sh BUILD_DIR RESULTS_DIR
#
# Environment: NETNS_BENCH_ARGS (default "8 1gbit 67108864 0.01 3": N RATE
# BYTES DENSITY ROUNDS), GLOO_PYTHON (default: the python3 that has torch).
set -uo pipefail
build=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && results=$(cd "$2" && pwd) || exit 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

probe=spcclprobe$$
probe_ok=1
{
  command -v ip && command -v tc &&
    ip netns add "$probe" &&
    ip -n "$probe" link set lo up &&
    ip netns exec "$probe" tc qdisc add dev lo root handle 1: htb default 10 &&
    ip netns exec "$probe" tc qdisc show dev lo
} >"$results/netns_probe.log" 2>&1 || probe_ok=0
ip netns del "$probe" 2>/dev/null
if ((probe_ok == 0)); then
  echo "== network namespaces or tc do not work here (netns_probe.log):"
  tail -n 5 "$results/netns_probe.log"
  exit 0
fi
echo "== network namespaces and tc (htb) work"

if [[ -z ${GLOO_PYTHON:-} ]]; then
  for candidate in /opt/torch/.venv/bin/python3 python3 /usr/bin/python3; do
    if "$candidate" -c 'import torch.distributed' 2>/dev/null; then
      GLOO_PYTHON=$(command -v "$candidate")
      break
    fi
  done
fi
export GLOO_PYTHON SPCCL_BUILD_DIR=$build NETLAB_PREFIX=${NETLAB_PREFIX:-gpn} \
  NETLAB_SUBNET=${NETLAB_SUBNET:-10.79.0}
# shellcheck disable=SC2086 # NETNS_BENCH_ARGS is split on purpose
"$here/netns/bench_sparse.sh" --raw "$results/raw" ${NETNS_BENCH_ARGS:-8 1gbit 67108864 0.01 3}
