#!/usr/bin/python3
"""One srun task of tests/netns/slurm/slurm_cluster.sh: spccl.Comm.from_env()
with nothing but the variables srun sets (rank, size, and the rendezvous
spcclCommInitFromEnv derives from the step), then a dense and a sparse
all-reduce whose results are checked element by element.

Prints "py_from_env: rank R of N on HOST: OK" or exits non-zero."""
import os
import socket
import sys

import numpy as np

import spccl

COUNT = 1 << 16


def main() -> int:
    for name in ("SPCCL_RANK", "SPCCL_COMM_ID", "RANK", "MASTER_ADDR"):
        if name in os.environ:
            print(f"py_from_env: {name} is set; this test is about Slurm's variables alone",
                  file=sys.stderr)
            return 2
    with spccl.Comm.from_env() as comm:
        rank, size = comm.rank, comm.size
        if (rank, size) != (int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])):
            print(f"py_from_env: comm is rank {rank} of {size}, Slurm says "
                  f"{os.environ['SLURM_PROCID']} of {os.environ['SLURM_NTASKS']}", file=sys.stderr)
            return 1
        # Dense: rank r contributes i + r; the sum is n i + n (n - 1) / 2.
        index = np.arange(COUNT, dtype=np.int64)
        got = comm.all_reduce(index + rank)
        want = size * index + size * (size - 1) // 2
        if not np.array_equal(got, want):
            bad = np.flatnonzero(got != want)
            print(f"py_from_env: all_reduce wrong at {bad.size} elements, first {bad[0]}: "
                  f"{got[bad[0]]} != {want[bad[0]]}", file=sys.stderr)
            return 1
        # Sparse: rank r sets every 97th element from 7 r, to r + 1; the rows
        # of different ranks overlap where their strides meet.
        x = np.zeros(COUNT, dtype=np.float32)
        x[7 * rank::97] = rank + 1
        got = comm.sparse_all_reduce(x)
        want = np.zeros(COUNT, dtype=np.float64)
        for r in range(size):
            want[7 * r::97] += r + 1
        if not np.array_equal(got, want.astype(np.float32)):
            bad = np.flatnonzero(got != want)
            print(f"py_from_env: sparse_all_reduce wrong at {bad.size} elements, first "
                  f"{bad[0]}: {got[bad[0]]} != {want[bad[0]]}", file=sys.stderr)
            return 1
        print(f"py_from_env: rank {rank} of {size} on {socket.gethostname()}: OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
