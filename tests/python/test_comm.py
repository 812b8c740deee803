"""Communicators: from the launcher's environment, from an explicit unique
id, split, close; unique ids; the version."""
from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

import spccl
from conftest import share_unique_id


def test_from_env_matches_launcher(comm):
    assert comm.size == int(os.environ.get("SPCCL_NRANKS", "1"))
    assert comm.rank == int(os.environ.get("SPCCL_RANK", "0"))
    assert repr(comm) == f"<spccl.Comm rank {comm.rank} of {comm.size}>"


def test_unique_id_bytes_and_pickle():
    uid = spccl.unique_id()
    assert isinstance(uid, spccl.UniqueId) and len(bytes(uid)) == 128
    assert pickle.loads(pickle.dumps(uid)) == uid
    assert spccl.unique_id() != uid
    # Its rendezvous service serves one rendezvous: this 1-rank one.
    with spccl.Comm(uid, 0, 1) as alone:
        assert (alone.rank, alone.size) == (0, 1)
        np.testing.assert_array_equal(alone.all_reduce(np.arange(3)), np.arange(3))
    assert alone.closed


def test_explicit_unique_id_communicator(comm):
    uid = share_unique_id(comm)
    # Reversed ranks: the explicit communicator's rank is the caller's choice.
    with spccl.Comm(uid, comm.size - 1 - comm.rank, comm.size, timeout_ms=60000,
                    transport="tcp") as other:
        assert other.rank == comm.size - 1 - comm.rank
        gathered = other.all_gather(np.array([comm.rank], dtype=np.int32))
        np.testing.assert_array_equal(gathered.ravel(), np.arange(comm.size)[::-1])


def test_bad_explicit_arguments():
    with pytest.raises(spccl.InvalidArgumentError, match="rank"):
        spccl.Comm(spccl.unique_id(), 5, 2)


@pytest.mark.parametrize("colors", ["parity", "none_for_last"])
def test_split(comm, colors):
    if colors == "parity":
        sub = comm.split(comm.rank % 2, key=-comm.rank)  # descending old rank
        members = [r for r in range(comm.size) if r % 2 == comm.rank % 2]
        assert sub.size == len(members)
        assert sub.rank == sorted(members, reverse=True).index(comm.rank)
        total = sub.all_reduce(np.array([comm.rank], dtype=np.int64))
        assert total[0] == sum(members)
        sub.close()
    else:
        last = comm.rank == comm.size - 1
        sub = comm.split(-1 if last else 0)
        assert (sub is None) == last
        if sub is not None:
            assert sub.size == comm.size - 1
            sub.close()


def test_library_version():
    assert spccl.library_version() >= 100
