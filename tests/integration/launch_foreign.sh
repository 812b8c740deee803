#!/usr/bin/env bash
# Runs a program on N local ranks through a launcher other than spcclrun, so
# spcclCommInitFromEnv is tested on the variables those launchers set.
#   launch_foreign.sh mpirun N CMD...    Open MPI (OMPI_COMM_WORLD_*; SPCCL_COMM_ID given)
#   launch_foreign.sh torchrun N CMD...  torchrun's variables (RANK, WORLD_SIZE,
#                                        LOCAL_RANK, MASTER_ADDR, MASTER_PORT), set by hand
#   launch_foreign.sh ipv6 N SPCCLRUN CMD...  spcclrun with the rendezvous and every
#                                        tcp connection on [::1]
set -euo pipefail
launcher=$1 n=$2
shift 2
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
unset SPCCL_RANK SPCCL_NRANKS SPCCL_LOCAL_RANK SPCCL_COMM_ID SPCCL_JOB_SECRET SPCCL_JOB_SECRET_FILE
# The job secret these launchers do not draw (docs/security.md): mpirun's
# ranks read a 0600 file, torchrun's get the hex in SPCCL_JOB_SECRET.
secret=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
secret_dir=$(mktemp -d)
trap 'rm -rf "$secret_dir"' EXIT
(umask 077 && echo "$secret" >"$secret_dir/job-secret")
case $launcher in
  mpirun)
    timeout 240 mpirun --allow-run-as-root --oversubscribe -np "$n" --mca btl self,tcp \
      -x SPCCL_COMM_ID="127.0.0.1:$port" -x SPCCL_JOB_SECRET_FILE="$secret_dir/job-secret" ${SPCCL_TRANSPORT:+-x SPCCL_TRANSPORT} "$@"
    exit ;;
  torchrun)
    pids=()
    for ((r = 0; r < n; r++)); do
      SPCCL_JOB_SECRET=$secret RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        TORCHELASTIC_RUN_ID="test-$port" timeout 240 "$@" &
      pids+=($!)
    done
    status=0
    for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
    exit $status ;;
  ipv6)
    port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1", 0)); print(s.getsockname()[1])')
    spcclrun=$1
    shift
    SPCCL_COMM_ID="[::1]:$port" SPCCL_SOCKET_FAMILY=AF_INET6 SPCCL_SOCKET_IFNAME="=lo" \
      SPCCL_TRANSPORT=tcp exec "$spcclrun" -n "$n" --timeout 240 -- "$@" ;;
  *) echo "launch_foreign.sh: unknown launcher $launcher" >&2; exit 2 ;;
esac
