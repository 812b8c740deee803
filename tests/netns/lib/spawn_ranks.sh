# shellcheck shell=bash
# Sourced by soak.sh and tests/faults/chaos/chaos_netns.sh: one process per
# host of the lab, without `netlab run`'s rule that the first failing rank
# ends the job (a fault test wants every rank's own ending).
#
#   spawn_ranks LOGDIR N LIMIT_S -- CMD ARGS...
#
# Rank i runs in host i + 1 with the variables `netlab run` sets
# (SPCCL_RANK, SPCCL_NRANKS, SPCCL_COMM_ID, SPCCL_JOB_SECRET,
# SPCCL_SOCKET_IFNAME) and the caller's environment, under `timeout LIMIT_S`,
# its output in LOGDIR/rankI.log. SPAWNED gets the pids: each is `timeout`,
# which leads the rank's process group, so `kill -- -PID` ends the rank.
# wait_ranks LIMIT_S then waits for them, kills what is left and writes
# each status to LOGDIR/rankI.status.
spawn_ranks() {
  local logdir=$1 n=$2 limit=$3 i secret port=$((20000 + RANDOM % 20000))
  shift 3
  [[ ${1:-} == -- ]] && shift
  secret=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
  mkdir -p "$logdir"
  SPAWNED=()
  SPAWN_LOGDIR=$logdir
  for ((i = 0; i < n; i++)); do
    ip netns exec "$NETLAB_PREFIX-h$((i + 1))" env \
      SPCCL_RANK="$i" SPCCL_NRANKS="$n" SPCCL_LOCAL_RANK=0 \
      SPCCL_COMM_ID="$NETLAB_SUBNET.1:$port" SPCCL_JOB_SECRET="$secret" SPCCL_SOCKET_IFNAME=veth0 \
      timeout --kill-after=5 "$limit" "$@" >"$logdir/rank$i.log" 2>&1 &
    SPAWNED+=($!)
  done
}

wait_ranks() {
  local limit=$1 i rc deadline=$(($(date +%s) + $1))
  for ((i = 0; i < ${#SPAWNED[@]}; i++)); do
    while kill -0 "${SPAWNED[i]}" 2>/dev/null && (($(date +%s) < deadline)); do sleep 0.2; done
    kill -KILL -- "-${SPAWNED[i]}" 2>/dev/null || true
    rc=0; wait "${SPAWNED[i]}" 2>/dev/null || rc=$?
    echo "$rc" >"$SPAWN_LOGDIR/rank$i.status"
  done
  SPAWNED=()
}

# ready_ranks LIMIT_S: waits until every rank printed its "chaos: ready" line.
ready_ranks() {
  local i deadline=$(($(date +%s) + $1))
  for ((i = 0; i < ${#SPAWNED[@]}; i++)); do
    until grep -q "^chaos: ready" "$SPAWN_LOGDIR/rank$i.log" 2>/dev/null; do
      (($(date +%s) < deadline)) || return 1
      sleep 0.1
    done
  done
}
