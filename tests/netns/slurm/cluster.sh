# Sourced: a throw-away Slurm cluster on the netlab testbed.
# shellcheck shell=bash
#
#   source tests/netns/slurm/cluster.sh
#   slurm_cluster_up N DIR     netlab up N hosts (NETLAB_PREFIX / NETLAB_SUBNET
#                              as the caller exported them), then in DIR (an
#                              empty directory): munged, slurm.conf,
#                              slurmctld on host 1 and one slurmd per host
#   slurm_client CMD...        CMD in host 1 (the "login node") with SLURM_CONF
#   slurm_cluster_reserve_ports LOW-HIGH
#                              MpiParams=ports=LOW-HIGH and scontrol reconfigure:
#                              from then on every step gets reserved ports
#                              (SLURM_STEP_RESV_PORTS)
#   slurm_cluster_down         stops everything slurm_cluster_up started, takes
#                              the lab down; idempotent, safe after a partial up
#
# Layout (docs/testbed.md, "Slurm"): host K is the netns PREFIX-hK at
# SUBNET.K, its hostname (a UTS namespace of its own) and Slurm NodeName
# both PREFIX-hK. slurmctld runs in host 1 beside that host's slurmd
# (ports 6817 and 6818 of the namespace); every slurmd has the default port
# in its own namespace, and its own spool, pid and log file through %n.
# One munged in the root namespace serves them all: its socket is a path in
# DIR, and a path-named unix socket is reachable from every net namespace.
# Daemons and jobs run as root (SlurmUser=root), so the box's users and
# /etc/slurm are never touched; clients find the cluster through SLURM_CONF.
#
# Needs root, iproute2, slurm-wlm and munge (scripts/install-deps.sh).

SLURM_CLUSTER_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SLURM_CLUSTER_NETLAB="$SLURM_CLUSTER_HERE/../netlab"
SLURM_CLUSTER_DIR=""
SLURM_CLUSTER_N=0
SLURM_CLUSTER_LAB_UP=0
SLURM_CLUSTER_PIDS=()   # daemons started here, killed by pid on the way down
SLURM_CONF=""

slurm_cluster_log() { echo "slurm_cluster: $*"; }

slurm_host_ns() { echo "${NETLAB_PREFIX:?}-h$1"; }

# slurm_in_host_argv K: sets SLURM_IN_HOST to the argv prefix that runs a
# command in host K's netns and a UTS namespace named after it. An argv, not
# a function, so that `"${SLURM_IN_HOST[@]}" daemon &` forks one process
# that execs down the chain (ip, unshare, sh) to the daemon: $! is then the
# daemon itself, not a subshell that a signal would leave it behind.
slurm_in_host_argv() {
  local ns; ns=$(slurm_host_ns "$1")
  SLURM_IN_HOST=(ip netns exec "$ns" unshare --uts -- /bin/sh -c 'hostname "$0" && exec "$@"' "$ns")
}

slurm_in_host() {  # slurm_in_host K CMD...: CMD there, in the foreground
  slurm_in_host_argv "$1"; shift
  "${SLURM_IN_HOST[@]}" "$@"
}

slurm_client() { slurm_in_host 1 env SLURM_CONF="$SLURM_CONF" "$@"; }

# wait_for SECONDS WHAT CMD...: polls CMD (quietly) until it succeeds; fails
# naming WHAT once SECONDS have passed or when a daemon started here died.
slurm_wait_for() {
  local limit=$1 what=$2 pid; shift 2
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    for pid in "${SLURM_CLUSTER_PIDS[@]}"; do
      kill -0 "$pid" 2>/dev/null && continue
      slurm_cluster_log "a daemon (pid $pid) died while waiting for $what"
      return 1
    done
    if ((SECONDS >= deadline)); then
      slurm_cluster_log "gave up after ${limit}s waiting for $what"
      return 1
    fi
    sleep 0.3
  done
}

slurm_write_conf() {
  local n=$1 dir=$2 subnet=${NETLAB_SUBNET:?} i
  {
    cat <<EOF
# Written by tests/netns/slurm/cluster.sh for one test run.
ClusterName=spccltest
SlurmctldHost=$(slurm_host_ns 1)($subnet.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/ctld
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmctldDebug=info
SlurmdSpoolDir=$dir/spool/%n
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmdDebug=info
PlugStackConfig=$dir/plugstack.conf
# No cgroups, accounting or MPI plugin: the box is a container that other
# jobs share. linuxproc tracks each task's descendants by parent pid, so
# scancel reaches every process a rank starts.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# Every emulated host claims 2 CPUs whatever the box has.
SlurmdParameters=config_overrides
ReturnToService=2
# scancel: SIGTERM, then SIGKILL after KillWait seconds.
KillWait=5
# Finished jobs stay visible to scontrol for 10 minutes.
MinJobAge=600
SlurmdTimeout=60
EOF
    for ((i = 1; i <= n; i++)); do
      echo "NodeName=$(slurm_host_ns "$i") NodeHostname=$(slurm_host_ns "$i") NodeAddr=$subnet.$i CPUs=2 RealMemory=1000 State=UNKNOWN"
    done
    echo "PartitionName=lab Nodes=ALL Default=YES MaxTime=30 State=UP"
  } >"$dir/slurm.conf"
  # slurmd loads a cgroup plugin even when no other plugin uses cgroups, and
  # autodetection fails under `ip netns exec`, whose fresh /sys has nothing
  # mounted on /sys/fs/cgroup.
  echo "CgroupPlugin=cgroup/v1" >"$dir/cgroup.conf"
}

slurm_nodes_idle() {  # all N nodes registered and idle
  local idle
  idle=$(slurm_client timeout 15 sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
  ((idle == SLURM_CLUSTER_N))
}

slurm_cluster_up() {
  local n=${1:?slurm_cluster_up N DIR} dir=${2:?slurm_cluster_up N DIR} i ns
  SLURM_CLUSTER_N=$n
  SLURM_CLUSTER_DIR=$dir
  SLURM_CONF="$dir/slurm.conf"
  # munged insists that every directory above its socket is searchable by
  # all and writable by none but root (or sticky, as /tmp).
  chmod 711 "$dir"
  mkdir -p "$dir/munge" "$dir/ctld" "$dir/run" "$dir/log" "$dir/spool" "$dir/out"
  chmod 711 "$dir/munge"
  : >"$dir/plugstack.conf"

  "$SLURM_CLUSTER_NETLAB" down >/dev/null 2>&1 || true   # leftovers of an interrupted run
  SLURM_CLUSTER_LAB_UP=1
  "$SLURM_CLUSTER_NETLAB" up "$n" 1gbit

  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  munged -F --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" \
    --log-file="$dir/log/munged.log" >"$dir/log/munged.out" 2>&1 &
  SLURM_CLUSTER_PIDS+=($!)
  slurm_wait_for 10 "munged" sh -c "munge -S '$dir/munge/munge.sock' -n | unmunge -S '$dir/munge/munge.sock'" \
    || return 1

  slurm_write_conf "$n" "$dir"
  for ((i = 1; i <= n; i++)); do mkdir -p "$dir/spool/$(slurm_host_ns "$i")"; done
  # -i: no state from an earlier cluster. The exec chain (ip netns exec,
  # unshare, sh) ends in the daemon, so $! is its pid.
  slurm_in_host_argv 1
  "${SLURM_IN_HOST[@]}" slurmctld -D -i -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 &
  SLURM_CLUSTER_PIDS+=($!)
  slurm_wait_for 30 "slurmctld to answer" slurm_client timeout 15 scontrol ping || return 1
  for ((i = 1; i <= n; i++)); do
    ns=$(slurm_host_ns "$i")
    slurm_in_host_argv "$i"
    "${SLURM_IN_HOST[@]}" slurmd -D -N "$ns" -f "$SLURM_CONF" >"$dir/log/slurmd-$ns.out" 2>&1 &
    SLURM_CLUSTER_PIDS+=($!)
  done
  slurm_wait_for 60 "$n idle nodes" slurm_nodes_idle || { slurm_client timeout 15 sinfo -N; return 1; }
  slurm_cluster_log "up: slurmctld on $(slurm_host_ns 1), $n slurmd ($(slurm_host_ns 1)..$(slurm_host_ns "$n")), SLURM_CONF=$SLURM_CONF"
}

slurm_cluster_reserve_ports() {
  echo "MpiParams=ports=${1:?slurm_cluster_reserve_ports LOW-HIGH}" >>"$SLURM_CONF"
  slurm_client timeout 30 scontrol reconfigure
}

# Prints the tail of every daemon's log (after a failure); a daemon's
# stderr only where it died before its log file began.
slurm_cluster_logs() {
  local f log
  for f in "$SLURM_CLUSTER_DIR"/log/*; do
    [[ -s $f ]] || continue
    if [[ $f == *.out ]]; then
      log=${f%.out}.log
      [[ -s $log ]] && continue
    fi
    echo "---- ${f##*/} (last 15 lines) ----"
    tail -n 15 "$f"
  done
}

slurm_cluster_down() {
  local pid deadline
  for pid in "${SLURM_CLUSTER_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  deadline=$((SECONDS + 10))
  for pid in "${SLURM_CLUSTER_PIDS[@]}"; do
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  SLURM_CLUSTER_PIDS=()
  # netlab down kills whatever is left in the namespaces: slurmstepd and
  # the tasks of a job that outlived its slurmd.
  if ((SLURM_CLUSTER_LAB_UP)); then
    "$SLURM_CLUSTER_NETLAB" down >/dev/null 2>&1 || true
    SLURM_CLUSTER_LAB_UP=0
  fi
}
