"""Non-blocking communicator creation (``blocking=False``), ``async_error``
and ``finalize`` (NCCL 2.27's contract; docs/fault-tolerance.md)."""
from __future__ import annotations

import time

import numpy as np
import pytest

import spccl
from conftest import share_unique_id


def _poll(c: spccl.Comm, deadline_s: float = 30.0):
    """async_error() once it is no longer InProgressError (within deadline_s)."""
    end = time.monotonic() + deadline_s
    state = c.async_error()
    while isinstance(state, spccl.InProgressError) and time.monotonic() < end:
        time.sleep(0.002)
        state = c.async_error()
    return state


def test_nonblocking_creation_polls_then_all_reduces(comm):
    uid = share_unique_id(comm)
    started = time.monotonic()
    other = spccl.Comm(uid, comm.rank, comm.size, blocking=False, timeout_ms=30000,
                       profile_links=False)
    assert time.monotonic() - started < 5.0  # returned before the others joined
    assert _poll(other) is None
    total = other.all_reduce(np.full(1000, comm.rank + 1, dtype=np.float32))
    np.testing.assert_array_equal(total, np.full(1000, comm.size * (comm.size + 1) / 2))
    other.close()


def test_finalize_completes_outstanding_work(comm):
    uid = share_unique_id(comm)
    other = spccl.Comm(uid, comm.rank, comm.size, blocking=False, timeout_ms=30000,
                       profile_links=False)
    works = [other.all_reduce(np.full(4096, i + comm.rank, dtype=np.float64), async_op=True)
             for i in range(4)]
    other.finalize()
    assert _poll(other) is None
    for i, work in enumerate(works):
        expected = comm.size * i + comm.size * (comm.size - 1) / 2
        np.testing.assert_array_equal(work.wait(), np.full(4096, expected))
    with pytest.raises(spccl.InvalidUsageError, match="finalized"):
        other.all_reduce(np.ones(3))
    other.close()


def test_abort_during_creation_returns_fast():
    # A 2-rank communicator whose other rank never comes (this process only).
    pending = spccl.Comm(spccl.unique_id(), 0, 2, blocking=False, timeout_ms=30000)
    time.sleep(0.2)
    assert isinstance(pending.async_error(), spccl.InProgressError)
    started = time.monotonic()
    pending.abort()
    assert time.monotonic() - started < 2.0
    assert pending.closed


def test_missing_rank_becomes_timeout_error():
    pending = spccl.Comm(spccl.unique_id(), 0, 2, blocking=False, timeout_ms=1000)
    state = _poll(pending, 10.0)
    assert isinstance(state, spccl.TimeoutError) and "rendezvous" in str(state)
    with pytest.raises(spccl.TimeoutError, match="creation failed"):
        pending.all_reduce(np.ones(3))
    pending.close()
