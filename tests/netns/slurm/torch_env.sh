#!/bin/sh
# srun task wrapper for torch.distributed programs: the variables torch's
# env:// rendezvous reads, made from Slurm's (the usual recipe for torch
# under srun). spccl's Comm.from_env then takes the torchrun variables too
# (rank 0 listens on MASTER_PORT + 1).
#   srun ... tests/netns/slurm/torch_env.sh /usr/bin/python3 PROGRAM ARGS...
set -eu
: "${SLURM_PROCID:?not an srun task}" "${SLURM_STEP_NODELIST:?not an srun task}"
RANK=$SLURM_PROCID
WORLD_SIZE=$SLURM_NTASKS
LOCAL_RANK=$SLURM_LOCALID
MASTER_ADDR=$(scontrol show hostnames "$SLURM_STEP_NODELIST" | head -n 1)
# Like spccl's own Slurm default (src/core/env_discovery.h): one port per
# job and step (16 steps a job), below the ephemeral range; even, since
# spccl takes MASTER_PORT + 1.
MASTER_PORT=$((30000 + 2 * ((SLURM_JOB_ID * 16 + ${SLURM_STEP_ID:-0} % 16) % 1000)))
export RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT
exec "$@"
