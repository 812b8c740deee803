#!/bin/bash
# sbatch script of tests/netns/slurm/slurm_cluster.sh, and an example of
# running spccl under sbatch: one step over the whole allocation,
#   sbatch -N 4 -n 8 tests/netns/slurm/job.sh PROGRAM ARGS...
# Every task gets the job secret from here (srun passes the batch
# environment on): 256 random bits per job. spccl never derives one from the
# job's variables, which anyone on the cluster can read (docs/security.md).
# A file (SPCCL_JOB_SECRET_FILE, mode 0600, on a filesystem every node
# sees) keeps it out of the environment; the variable is the simplest form.
set -euo pipefail
unset SPCCL_JOB_SECRET_FILE
SPCCL_JOB_SECRET=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
export SPCCL_JOB_SECRET
echo "job.sh: job $SLURM_JOB_ID on $SLURM_JOB_NODELIST, $SLURM_NTASKS tasks: $*"
srun "$@"
