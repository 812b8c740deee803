"""Bad input raises a spccl.Error subclass whose message names the problem,
before any rank communicates (the Python checks) or from the library with
its own message (spcclGetLastError); failures of a peer reach every rank."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import spccl
from conftest import share_unique_id


@pytest.mark.parametrize("bad,dtype_text", [
    (np.zeros(4, dtype=bool), "bool"), (np.zeros(4, dtype=np.complex64), "complex64"),
    (torch.zeros(4, dtype=torch.bool), "torch.bool"),
    (torch.zeros(4, dtype=torch.complex64), "torch.complex64"),
    (np.zeros(4, dtype=">f4"), ">f4")])
def test_unsupported_dtype(comm, bad, dtype_text):
    with pytest.raises(spccl.InvalidArgumentError, match=rf"x: dtype {dtype_text}"):
        comm.all_reduce(bad)


@pytest.mark.parametrize("strided", [np.zeros((4, 6), dtype=np.float32)[:, ::2],
                                     np.zeros((4, 6), dtype=np.float32).T,
                                     torch.zeros(4, 6).t(), torch.zeros(8)[::2]])
def test_non_contiguous_rejected(comm, strided):
    with pytest.raises(spccl.InvalidArgumentError, match="x: .* not (C-)?contiguous"):
        comm.all_reduce(strided)
    with pytest.raises(spccl.InvalidArgumentError, match="not (C-)?contiguous"):
        comm.sparse_all_reduce(strided)


def test_not_an_array(comm):
    with pytest.raises(spccl.InvalidArgumentError, match="expected a numpy.ndarray or a "
                                                         "torch.Tensor, got list"):
        comm.all_reduce([1.0, 2.0])


def test_bad_out(comm):
    x = np.ones(4, dtype=np.float32)
    with pytest.raises(spccl.InvalidArgumentError, match="out: dtype float64 differs"):
        comm.all_reduce(x, out=np.zeros(4))
    with pytest.raises(spccl.InvalidArgumentError, match="out: has 3 elements, the collective "
                                                         "writes 4"):
        comm.all_reduce(x, out=np.zeros(3, dtype=np.float32))
    read_only = np.zeros(4, dtype=np.float32)
    read_only.flags.writeable = False
    with pytest.raises(spccl.InvalidArgumentError, match="out: array is read-only"):
        comm.all_reduce(x, out=read_only)
    with pytest.raises(spccl.InvalidArgumentError, match="out: .*not contiguous"):
        comm.all_gather(torch.ones(2), out=torch.zeros(2, comm.size).t())


def test_bad_op_and_shapes(comm):
    with pytest.raises(spccl.InvalidArgumentError, match="op 'median' is not one of"):
        comm.all_reduce(np.ones(2), "median")
    if comm.size > 1:
        with pytest.raises(spccl.InvalidArgumentError, match="multiple of the communicator size"):
            comm.reduce_scatter(np.ones(comm.size + 1))
    with pytest.raises(spccl.InvalidArgumentError, match="sparse COO tensors go to "
                                                         "sparse_all_reduce"):
        comm.all_reduce(torch.zeros(3).to_sparse())


def test_library_messages(comm):
    # Each rank fails locally, in argument validation, before communicating.
    with pytest.raises(spccl.InvalidArgumentError, match="spcclBroadcast: root 99 is out of range"):
        comm.broadcast(np.ones(2), root=99)
    with pytest.raises(spccl.InvalidArgumentError) as info:
        comm.sparse_all_reduce(np.ones(4, dtype=np.float32), "max")
    assert "spcclSparseAllReduce" in str(info.value) and info.value.code == 3
    with pytest.raises(spccl.InvalidArgumentError, match="tag must be >= 0"):
        comm.sparse_all_reduce(np.ones(4, dtype=np.float32), tag=-1)


def test_bad_coo_index_on_one_rank_fails_every_rank(comm):
    sub = comm.split(0)  # a fresh communicator for the failing call
    indices = np.array([1, 2, 10 ** 6 if comm.rank == 0 else 3], dtype=np.int64)
    expected = spccl.InvalidArgumentError if comm.rank == 0 else spccl.InvalidUsageError
    with pytest.raises(expected) as info:
        sub.sparse_all_reduce_coo(indices, np.ones(3, dtype=np.float32), 100)
    assert str(info.value)
    if comm.rank == 0:
        assert "1000000" in str(info.value)
    sub.close()


def test_mismatched_sparse_calls_fail_every_rank(comm):
    if comm.size == 1:
        pytest.skip("needs two ranks to disagree")
    subs = []
    with pytest.raises(spccl.InvalidUsageError, match="count"):
        # In the split too: a rank still finishing it when the faster ones
        # fail the call gets their abort there (seen under load, ~1 run in 4).
        subs.append(comm.split(0))
        subs[0].sparse_all_reduce(np.ones(10 + comm.rank, dtype=np.float32))
    for sub in subs:
        sub.close()


def test_timeout(comm):
    if comm.size == 1:
        pytest.skip("needs a peer that does not answer")
    # Ranks 0 and 1 form a pair with a short deadline; rank 1 never sends
    # what rank 0 waits for, and keeps its end open until rank 0 gave up.
    uid = share_unique_id(comm)
    pair = spccl.Comm(uid, comm.rank, 2, timeout_ms=300) if comm.rank < 2 else None
    if comm.rank == 0:
        with pytest.raises(spccl.TimeoutError, match="."):
            pair.recv(np.zeros(4, dtype=np.float32), 1)
    comm.barrier()
    if pair is not None:
        pair.close()


def test_closed_communicator(comm):
    sub = comm.split(0)
    sub.close()
    sub.close()  # idempotent
    assert sub.closed and "closed" in repr(sub)
    with pytest.raises(spccl.InvalidUsageError, match="closed"):
        sub.all_reduce(np.ones(2))


def test_error_classes():
    assert issubclass(spccl.InvalidArgumentError, (spccl.Error, ValueError))
    assert issubclass(spccl.TimeoutError, TimeoutError)
    assert all(issubclass(c, RuntimeError) for c in (spccl.Error, spccl.RemoteError))
    with pytest.raises(ValueError, match="unique_id must be 128 bytes"):
        spccl.Comm(b"short", 0, 1)
    with pytest.raises(spccl.InvalidArgumentError, match="expected spccl.UniqueId or bytes"):
        spccl.Comm("not an id", 0, 1)
