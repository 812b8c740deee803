#!/usr/bin/env bash
# CI smoke test of the netlab testbed: up 2 hosts at 1gbit, check the
# shaping, run one command per host and check every rank saw its own
# SPCCL_RANK in its own namespace, tear down. Exit 77 (ctest SKIP) when the
# testbed cannot exist here: not root, or no `ip netns`.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# A prefix of its own, so a smoke run never touches a lab a user has up.
export NETLAB_PREFIX=${NETLAB_PREFIX:-splsmoke} NETLAB_SUBNET=${NETLAB_SUBNET:-10.77.1}
NETLAB="$HERE/netlab"

# shellcheck source=lib/require_testbed.sh
source "$HERE/lib/require_testbed.sh"
# shellcheck source=lib/goodput_check.sh
source "$HERE/lib/goodput_check.sh"
require_testbed netns_smoke

logs=$(mktemp -d /tmp/netns_smoke.XXXXXX)
trap '"$NETLAB" down >/dev/null 2>&1 || true; rm -rf "$logs"' EXIT

"$NETLAB" down >/dev/null   # leftovers of an interrupted earlier run
"$NETLAB" up 2 1gbit
"$NETLAB" status
[[ $("$NETLAB" ifaces) == veth0 ]] || { echo "netns_smoke: FAIL: netlab ifaces printed '$("$NETLAB" ifaces)'"; exit 1; }
goodput_check netns_smoke || { echo "netns_smoke: FAIL: goodput out of range in three tries"; exit 1; }
"$NETLAB" run 2 --timeout 30 --logdir "$logs" -- \
  /bin/sh -c 'echo "rank=$SPCCL_RANK of $SPCCL_NRANKS host=$(hostname) ifname=$SPCCL_SOCKET_IFNAME"'
for r in 0 1; do
  grep -qx "rank=$r of 2 host=${NETLAB_PREFIX}-h$((r + 1)) ifname=veth0" "$logs/rank$r.log" \
    || { echo "netns_smoke: FAIL: rank $r printed: $(cat "$logs/rank$r.log")"; exit 1; }
done
# A failing rank must fail the run.
if "$NETLAB" run 2 --timeout 30 --logdir "$logs/fail" -- /bin/sh -c 'exit $SPCCL_RANK' 2>/dev/null; then
  echo "netns_smoke: FAIL: run returned 0 although rank 1 exited 1"; exit 1
fi
"$NETLAB" down
[[ -z $(ip netns list | awk '{print $1}' | grep "^${NETLAB_PREFIX}-") ]] \
  || { echo "netns_smoke: FAIL: namespaces left after down"; exit 1; }
echo "netns_smoke: PASS"
