#!/usr/bin/env bash
# spccl over two rails on the testbed: 2 hosts with 2 rails of 1gbit each
# (netlab up --rails 2). A checked 64 MiB all-reduce over tcp
#   - with SPCCL_TOPO_RAILS=2 must be right (#wrong 0) and send a fair share
#     of host 1's bytes on each rail: each veth's tx bytes grow by at least
#     35 % of what both carried;
#   - with SPCCL_TOPO_RAILS=1 must be right and leave veth1 (almost) idle.
# Exit 77 (ctest SKIP) when the testbed cannot exist here.
#   rails_spccl.sh PATH/TO/all_reduce_perf
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NETLAB_PREFIX=${NETLAB_PREFIX:-splrspc} NETLAB_SUBNET=${NETLAB_SUBNET:-10.77.5}
NETLAB="$HERE/netlab"
PERF=${1:?usage: rails_spccl.sh PATH/TO/all_reduce_perf}
BYTES=67108864

# shellcheck source=lib/require_testbed.sh
source "$HERE/lib/require_testbed.sh"
require_testbed netns_spccl_rails

logs=$(mktemp -d /tmp/netns_spccl_rails.XXXXXX)
trap '"$NETLAB" down >/dev/null 2>&1 || true; rm -rf "$logs"' EXIT

tx_bytes() { ip netns exec "${NETLAB_PREFIX}-h1" cat "/sys/class/net/$1/statistics/tx_bytes"; }

# Runs the all-reduce with SPCCL_TOPO_RAILS=$1; sets sent0/sent1 to host
# 1's tx bytes on veth0/veth1 during the run.
run_with_rails() {
  local rails=$1 before0 before1
  before0=$(tx_bytes veth0)
  before1=$(tx_bytes veth1)
  SPCCL_TRANSPORT=tcp SPCCL_TOPO_RAILS=$rails SPCCL_PROFILE_LINKS=0 \
    "$NETLAB" run 2 --timeout 120 --logdir "$logs/rails$rails" -- \
    "$PERF" -b "$BYTES" -e "$BYTES" -n 3 -w 1 -c 1 \
    || fail "the all-reduce with SPCCL_TOPO_RAILS=$rails failed: $(tail -5 "$logs/rails$rails/rank0.log")"
  grep -q "Out of bounds values : 0 OK" "$logs/rails$rails/rank0.log" \
    || fail "wrong results with SPCCL_TOPO_RAILS=$rails: $(grep -v '^#' "$logs/rails$rails/rank0.log" | tail -3)"
  sent0=$(($(tx_bytes veth0) - before0))
  sent1=$(($(tx_bytes veth1) - before1))
  echo "SPCCL_TOPO_RAILS=$rails: host 1 sent $sent0 B on veth0, $sent1 B on veth1"
  grep -E "^ +$BYTES " "$logs/rails$rails/rank0.log" || true
}

"$NETLAB" down >/dev/null
"$NETLAB" up 2 1gbit --rails 2

run_with_rails 2
total=$((sent0 + sent1))
# 6 all-reduces of 64 MiB (warm-up, 3 timed, check) move >= 6 x 64 MiB / 2 each way.
((total > 3 * BYTES)) || fail "only $total bytes left host 1"
((sent0 * 100 >= total * 35 && sent1 * 100 >= total * 35)) \
  || fail "the rails are not both used: veth0 $sent0 B, veth1 $sent1 B"

run_with_rails 1
((sent1 * 100 < (sent0 + sent1) * 2)) || fail "one rail asked for, but veth1 carried $sent1 B"

"$NETLAB" down
echo "netns_spccl_rails: PASS"
