#!/usr/bin/env bash
# CI smoke test of netlab's multi-rail hosts: up 2 hosts with 2 rails at
# 1gbit, check every rail link is shaped at both ends and carries TCP on its
# own (each rail in turn, then both at once for ≈ 2 x RATE), check `netlab
# run` exports SPCCL_SOCKET_IFNAME=veth0,veth1 and leaves SPCCL_TOPO_RAILS
# alone, check a failed `up` leaves nothing, tear down. Exit 77 (ctest SKIP)
# when the testbed cannot exist here: not root, or no `ip netns`.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# A prefix of its own, so a smoke run never touches a lab a user has up.
export NETLAB_PREFIX=${NETLAB_PREFIX:-splrails} NETLAB_SUBNET=${NETLAB_SUBNET:-10.77.4}
NETLAB="$HERE/netlab"
RAILS=2

# shellcheck source=lib/require_testbed.sh
source "$HERE/lib/require_testbed.sh"
# shellcheck source=lib/goodput_check.sh
source "$HERE/lib/goodput_check.sh"
require_testbed netns_rails_smoke

our_namespaces() { ip netns list | awk '{print $1}' | grep "^${NETLAB_PREFIX}-" || true; }

logs=$(mktemp -d /tmp/netns_rails_smoke.XXXXXX)
trap '"$NETLAB" down >/dev/null 2>&1 || true; rm -rf "$logs"' EXIT

"$NETLAB" down >/dev/null   # leftovers of an interrupted earlier run
"$NETLAB" up 2 1gbit --rails "$RAILS"
"$NETLAB" status | tee "$logs/status"
[[ $("$NETLAB" ifaces) == veth0,veth1 ]] || fail "netlab ifaces printed '$("$NETLAB" ifaces)'"

# Every rail: its own bridge, its own subnet, HTB at 1Gbit on both ends.
for ((r = 0; r < RAILS; r++)); do
  grep -q "^${NETLAB_PREFIX}-br: bridge br$r ports: " "$logs/status" || fail "no bridge br$r"
  for k in 1 2; do
    ns=${NETLAB_PREFIX}-h$k
    addr=$("$NETLAB" ifaces "$k" | awk -v dev="veth$r" '$1 == dev {print $2}')
    [[ -n $addr ]] || fail "netlab ifaces $k has no veth$r"
    ip -n "$ns" -4 -o addr show dev "veth$r" | grep -q " $addr/24 " || fail "$ns veth$r does not have $addr"
    port=$( ((r == 0)) && echo "veth-h$k" || echo "veth$r-h$k")
    ip -n "${NETLAB_PREFIX}-br" -o link show dev "$port" | grep -q "master br$r " || fail "$port is not on br$r"
    ip netns exec "$ns" tc class show dev "veth$r" | grep -q "rate 1Gbit ceil 1Gbit" \
      || fail "$ns veth$r egress not shaped: $(ip netns exec "$ns" tc class show dev "veth$r")"
    ip netns exec "${NETLAB_PREFIX}-br" tc class show dev "$port" | grep -q "rate 1Gbit ceil 1Gbit" \
      || fail "bridge port $port (into $ns) not shaped"
  done
done
# Reachable on each rail, h1 -> h2 on that rail's addresses, and shaped (a
# TCP transfer per rail within 85..102 % of 1gbit), then independent: both
# at once make ≈ 2 Gbit/s in all (three tries each: lib/goodput_check.sh).
goodput_check netns_rails_smoke || fail "a rail's goodput stayed out of range in three tries"
goodput_check netns_rails_smoke --parallel || fail "the rails' aggregate goodput stayed out of range in three tries"

# The run environment: every rail's interface, NCCL syntax; Gloo on rail 0;
# SPCCL_TOPO_RAILS left to the caller (unset here, so it must stay unset).
unset SPCCL_TOPO_RAILS
"$NETLAB" run 2 --timeout 30 --logdir "$logs/run" -- /bin/sh -c \
  'echo "rank=$SPCCL_RANK ifname=$SPCCL_SOCKET_IFNAME gloo=$GLOO_SOCKET_IFNAME rails=$NETLAB_RAILS topo=${SPCCL_TOPO_RAILS-unset}"'
for r in 0 1; do
  grep -qx "rank=$r ifname=veth0,veth1 gloo=veth0 rails=2 topo=unset" "$logs/run/rank$r.log" \
    || fail "rank $r printed: $(cat "$logs/run/rank$r.log")"
done

"$NETLAB" down
[[ -z $(our_namespaces) ]] || fail "namespaces left after down: $(our_namespaces)"
[[ ! -e /run/netlab-${NETLAB_PREFIX}.state ]] || fail "state file left after down"

# A failed `up` tears down what it built: host 2's namespace already exists,
# so `up` fails after the bridges and host 1's two rails are made.
ip netns add "${NETLAB_PREFIX}-h2"
if "$NETLAB" up 2 1gbit --rails "$RAILS" 2>"$logs/up_err"; then fail "up succeeded although ${NETLAB_PREFIX}-h2 existed"; fi
grep -q "up failed, tearing down" "$logs/up_err" || fail "up failed without tearing down: $(cat "$logs/up_err")"
[[ -z $(our_namespaces) ]] || fail "namespaces left after a failed up: $(our_namespaces)"
echo "netns_rails_smoke: PASS"
