#!/bin/bash
# sbatch script of tests/netns/slurm/slurm_cluster.sh, and an example of
# running spccl under sbatch: one step over the whole allocation,
#   sbatch -N 4 -n 8 tests/netns/slurm/job.sh PROGRAM ARGS...
# Every task gets the job secret from here (srun passes the batch
# environment on): a random one per job, so that nothing outside the job can
# compute it. Without it spccl derives one from the job's variables, which
# only keeps jobs apart (src/core/env_discovery.h).
set -euo pipefail
SPCCL_JOB_SECRET=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
export SPCCL_JOB_SECRET
echo "job.sh: job $SLURM_JOB_ID on $SLURM_JOB_NODELIST, $SLURM_NTASKS tasks: $*"
srun "$@"
