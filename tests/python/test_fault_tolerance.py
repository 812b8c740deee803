"""Life after a failure from Python (docs/fault-tolerance.md): revoke,
agree and shrink on a split of the session's communicator, every rank alive
(the runs with a killed or stopped rank are tests/faults/test_shrink.cc and
examples/elastic_shrink.py, which cannot run inside the SPMD pytest run)."""
from __future__ import annotations

import numpy as np
import pytest

import spccl


def test_agree_with_every_rank_alive(comm):
    sub = comm.split(0)
    flag, failed = sub.agree(0xFF & ~(1 << (comm.rank % 8)))
    assert flag == 0xFF & ~((1 << min(comm.size, 8)) - 1)
    assert failed == []
    sub.close()


def test_shrink_excluding_a_live_rank(comm):
    if comm.size < 2:
        pytest.skip("needs two ranks")
    sub = comm.split(0)
    last = comm.size - 1
    if comm.rank == last:
        with pytest.raises(spccl.InvalidArgumentError, match="excludeRanks"):
            sub.shrink([last])
    else:
        with sub.shrink([last]) as shrunk:
            assert (shrunk.rank, shrunk.size) == (comm.rank, comm.size - 1)
            total = shrunk.all_reduce(np.array([comm.rank], dtype=np.int64))
            assert total[0] == sum(range(comm.size - 1))
    sub.close()


def test_revoke_makes_later_calls_fail(comm):
    sub = comm.split(0)
    # A revoke ends whatever sub's peers are in, its creation too: the
    # session's communicator says when every rank has left it.
    comm.barrier()
    if comm.rank == 0:
        sub.revoke()
        sub.revoke()  # idempotent
    # Rank 0's revoke ends this all-reduce on every rank: the others may be
    # waiting in it when the revoke comes.
    with pytest.raises(spccl.RevokedError, match="revoked"):
        sub.all_reduce(np.ones(4))
    with pytest.raises(spccl.RevokedError):
        sub.barrier()
    # The agreement still works on a revoked communicator.
    assert sub.agree(1) == (1, [])
    sub.close()
