#!/usr/bin/env bash
# Resource exhaustion (issue 20): each case starts a real 4-rank job
# (coll_check --quick under spcclrun) short of one resource, and requires a
# clear error that names what ran out, from init or from the call, within
# the deadline: never a hang, a crash (a signal) or a wrong result.
#   - file descriptors: ulimit -n 16, over tcp and shm;
#   - the local port range: two ports, in a network namespace of its own;
#   - /dev/shm: full (a tmpfs of 8 KiB, in a mount namespace of its own),
#     over ucx (whose shared-memory transports allocate there) and shm
#     (which does not: it must still work).
#
#   resource_exhaustion.sh SPCCLRUN COLL_CHECK [HAVE_UCX]
# The namespace cases need root (exit 77: skipped, when not root).
set -uo pipefail
spcclrun=$1 coll_check=$2 have_ucx=${3:-0}
failures=0
export SPCCL_TIMEOUT_MS=8000

# expect_error NAME PATTERN COMMAND...: COMMAND (a job) must exit non-zero
# within 60 s, print PATTERN, and no rank may die by a signal.
expect_error() {
  local name=$1 pattern=$2
  shift 2
  local out start status elapsed
  start=$(date +%s)
  out=$(timeout 60 "$@" 2>&1)
  status=$?
  elapsed=$(($(date +%s) - start))
  if [[ $status == 124 ]]; then
    echo "FAIL $name: no answer within 60 s"
  elif [[ $status == 0 ]]; then
    echo "FAIL $name: the job succeeded, expected an error matching '$pattern'"
  elif grep -qE 'killed by signal|Segmentation|Aborted|core dumped' <<<"$out"; then
    echo "FAIL $name: a rank crashed:"
  elif ! grep -qE "$pattern" <<<"$out"; then
    echo "FAIL $name: exit $status, but no error matching '$pattern':"
  else
    echo "ok   $name: exit $status in ${elapsed} s: $(grep -E "$pattern" <<<"$out" | head -1 | cut -c1-220)"
    return 0
  fi
  tail -n 15 <<<"$out"
  failures=$((failures + 1))
}

# expect_success NAME COMMAND...: a verified run (coll_check prints "0 wrong" per rank).
expect_success() {
  local name=$1
  shift
  local out status
  out=$(timeout 120 "$@" 2>&1)
  status=$?
  if [[ $status == 0 ]] && [[ $(grep -c ' 0 wrong' <<<"$out") -ge 1 ]]; then
    echo "ok   $name: verified"
  else
    echo "FAIL $name: exit $status"
    tail -n 15 <<<"$out"
    failures=$((failures + 1))
  fi
}

for transport in tcp shm; do
  expect_error "fds-$transport" 'Too many open files' \
    bash -c 'ulimit -n 16 && SPCCL_TRANSPORT=$0 exec "$1" -n 4 -- "$2" --quick' \
    "$transport" "$spcclrun" "$coll_check"
done

if [[ $(id -u) != 0 ]] || ! command -v unshare >/dev/null; then
  echo "resource_exhaustion: SKIP the namespace cases (port range, /dev/shm): not root"
  [[ $failures == 0 ]] && exit 77
  exit 1
fi

expect_error "port-range-tcp" 'Cannot assign requested address|Address already in use' \
  unshare -n bash -c 'ip link set lo up && sysctl -qw net.ipv4.ip_local_port_range="61000 61001" &&
    SPCCL_TRANSPORT=tcp exec "$0" -n 4 -- "$1" --quick' "$spcclrun" "$coll_check"

full_dev_shm='mount -t tmpfs -o size=8k tmpfs /dev/shm && dd if=/dev/zero of=/dev/shm/fill bs=4k count=2 2>/dev/null;'
if [[ $have_ucx == 1 ]]; then
  expect_error "full-dev-shm-ucx" '/dev/shm' \
    unshare -m bash -c "$full_dev_shm"' SPCCL_TRANSPORT=ucx exec "$0" -n 2 -- "$1" --quick' \
    "$spcclrun" "$coll_check"
fi
expect_success "full-dev-shm-shm" \
  unshare -m bash -c "$full_dev_shm"' SPCCL_TRANSPORT=shm exec "$0" -n 2 -- "$1" --quick' \
  "$spcclrun" "$coll_check"

echo "resource_exhaustion: $failures failure(s)"
[[ $failures == 0 ]]
