#!/bin/sh
# spccl_info --topo exits 0 and prints every section; with hwloc built in
# ($2 = 1) also the topology counts and the NIC choice. A transport that
# cannot start here is reported, not fatal.
set -u
info=$1
hwloc=$2
fail() {
  echo "FAIL: $1"
  printf '%s\n' "$out"
  exit 1
}
expect() {
  printf '%s\n' "$out" | grep -qF -- "$1" || fail "missing: $1"
}

out=$(env -u SPCCL_TRANSPORT "$info" --topo) || fail "spccl_info --topo exited $?"
expect "network transport (SPCCL_TRANSPORT=auto: shm for peers on this host, tcp for the others):"
expect "  tcp: "
expect "    rail 0: "
expect "network interfaces (getifaddrs):"
expect "CUDA devices"
if [ "$hwloc" = 1 ]; then
  expect "topology (hwloc "
  expect "  packages: "
  expect ", NUMA nodes: "
  expect ", cores: "
  expect "  PCI NICs: "
  expect "NIC choice for this process ("
  expect "  why: "
else
  expect "topology: not available, spccl was built without hwloc"
fi
# CUDA: devices, or a line that says why there are none.
printf '%s\n' "$out" | grep -qE '^  (no CUDA devices \(.+\)|[0-9]+: .+, compute capability [0-9]+\.[0-9]+)' ||
  fail "no CUDA line"

out=$(SPCCL_TRANSPORT=no_such_transport "$info" --topo 2>/dev/null) ||
  fail "spccl_info --topo with an unknown transport exited $?"
expect "  no_such_transport cannot start here: "
echo "spccl_info --topo: every section printed"
