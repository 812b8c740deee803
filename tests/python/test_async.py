"""Non-blocking collectives (``async_op=True``): spccl.Work's results
against the references of the blocking forms, completion, the arrays kept
alive while in flight, the GIL released in wait(), failures raised from
wait() with the library's message, and close()/abort() with work in flight.

Deterministic in-flight states come from a split communicator on which
rank 0 starts a collective that the other ranks join only after a barrier
on the parent communicator (or a pause)."""
from __future__ import annotations

import gc
import threading
import time
import weakref

import numpy as np
import pytest
import torch

import spccl
from arrays import assert_close, make
from compression_bound import error_bound
from inputs import gaussian_values, tolerance, values

KINDS = ["numpy", "torch"]


def each_rank(comm, shape, dtype, seed):
    return [values(r, shape, dtype, seed) for r in range(comm.size)]


@pytest.mark.parametrize("kind", KINDS)
def test_each_dense_collective_matches_its_reference(comm, kind):
    n, rank = comm.size, comm.rank
    data = each_rank(comm, (2 * n, 3), "float32", 21)
    mine = make(kind, data[rank], "float32")
    stacked = np.stack(data)
    works = {
        "all_reduce": comm.all_reduce(mine, "max", async_op=True),
        "broadcast": comm.broadcast(mine, n - 1, async_op=True),
        "reduce": comm.reduce(mine, 0, "sum", async_op=True),
        "all_gather": comm.all_gather(mine, async_op=True),
        "reduce_scatter": comm.reduce_scatter(mine, async_op=True),
        "all_to_all": comm.all_to_all(mine, async_op=True),
        "barrier": comm.barrier(async_op=True),
    }
    assert all(isinstance(w, spccl.Work) for w in works.values())
    tol = tolerance("float32")
    # Waited in reverse order: each still gets its own result.
    results = {name: works[name].wait() for name in reversed(list(works))}
    assert_close(results["all_reduce"], stacked.max(axis=0), "float32", tol)
    assert_close(results["broadcast"], data[n - 1], "float32", tol)
    if rank == 0:
        assert_close(results["reduce"], stacked.sum(axis=0), "float32", tol)
    else:
        assert results["reduce"] is None
    assert_close(results["all_gather"], stacked, "float32", tol)
    assert_close(results["reduce_scatter"], stacked.sum(axis=0)[2 * rank:2 * rank + 2],
                 "float32", tol)
    assert_close(results["all_to_all"], np.concatenate([d[2 * rank:2 * rank + 2] for d in data]),
                 "float32", tol)
    assert results["barrier"] is None
    for work in works.values():
        assert work.is_completed() and work.exception() is None
    assert_close(works["all_reduce"].wait(), stacked.max(axis=0), "float32", tol)  # again


@pytest.mark.parametrize("kind", KINDS)
def test_in_place_and_out(comm, kind):
    data = each_rank(comm, (40,), "float64", 22)
    x = make(kind, data[comm.rank], "float64")
    work = comm.all_reduce(x, out=x, async_op=True)
    assert work.wait() is x
    assert_close(x, np.sum(np.stack(data), axis=0), "float64", tolerance("float64"))


def test_compressed_and_token_calls(comm):
    count = 1000
    data = [gaussian_values(r, count, 23) for r in range(comm.size)]
    x = data[comm.rank].astype(np.float32)
    cfg = spccl.Compression(bits=4)
    work = comm.compressed_all_reduce(x, compression=cfg, async_op=True)
    blocking = comm.compressed_all_reduce(x, compression=cfg)
    got = work.wait()
    np.testing.assert_array_equal(got, blocking)  # the same bits as the blocking call
    held = [d.astype(np.float32).astype(np.float64) for d in data]
    assert np.all(np.abs(got - np.sum(held, axis=0)) <= error_bound(held))

    tokens, hidden, keep = 12, 5, 4
    partial = [values(r, (tokens, hidden), "float32", 24) for r in range(comm.size)]
    scores = [values(r, (tokens,), "float32", 25) for r in range(comm.size)]
    a = partial[comm.rank].astype(np.float32)
    b = a.copy()
    mask_work = comm.token_topk_all_reduce(a, scores[comm.rank].astype(np.float32), keep,
                                           async_op=True)
    mask = comm.token_topk_all_reduce(b, scores[comm.rank].astype(np.float32), keep)
    np.testing.assert_array_equal(mask_work.wait(), mask)
    np.testing.assert_array_equal(a, b)
    c = partial[comm.rank].astype(np.float32)
    assert comm.token_mask_all_reduce(c, mask, async_op=True).wait() is c
    np.testing.assert_array_equal(c, b)


def test_is_completed_turns_true(comm):
    work = comm.all_reduce(np.ones(1 << 16, dtype=np.float32), async_op=True)
    deadline = time.monotonic() + 30
    while not work.is_completed():
        assert time.monotonic() < deadline, "the all-reduce did not complete in 30 s"
        time.sleep(0.001)
    np.testing.assert_array_equal(work.wait(), np.full(1 << 16, comm.size, dtype=np.float32))


def _late_peers(comm, sub, rank0_first, others):
    """rank 0 runs rank0_first() before the parent barrier, the others run
    others() after it: rank 0's collective on sub stays in flight until then."""
    if comm.rank == 0:
        result = rank0_first()
        comm.barrier()
        return result
    comm.barrier()
    return others()


def test_in_flight_work_holds_its_arrays(comm):
    if comm.size == 1:
        pytest.skip("needs a peer that joins late")
    sub = comm.split(0)
    y = np.full(1000, float(comm.rank + 1))
    expected = np.full(1000, comm.size * (comm.size + 1) / 2)

    def start():
        x = np.full(1000, 1.0)
        ref = weakref.ref(x)
        work = sub.all_reduce(x, async_op=True)
        del x
        gc.collect()
        # Not completed (the others have not called it): the Work holds x.
        assert not work.is_completed() and ref() is not None
        return work, ref

    got = _late_peers(comm, sub, start, lambda: sub.all_reduce(y))
    if comm.rank == 0:
        work, ref = got
        np.testing.assert_array_equal(work.wait(), expected)
        assert ref() is None  # let go once completed
    else:
        np.testing.assert_array_equal(got, expected)
    sub.close()


def test_wait_releases_the_gil(comm):
    """A Python thread started as rank 0 begins to wait finishes its loop
    (~0.1 s) while the wait goes on (the others join 1.5 s later); with the
    GIL held in wait() it could only finish after."""
    if comm.size == 1:
        pytest.skip("needs a peer that joins late")
    sub = comm.split(0)
    finished_at = []

    def python_loop():
        total = 0
        for i in range(2_000_000):
            total += i
        finished_at.append(time.monotonic())

    if comm.rank == 0:
        work = sub.all_reduce(np.ones(8), async_op=True)
        comm.barrier()
        helper = threading.Thread(target=python_loop)
        helper.start()
        work.wait()
        returned_at = time.monotonic()
        helper.join()
        assert finished_at[0] < returned_at - 0.2, (finished_at[0], returned_at)
    else:
        comm.barrier()
        time.sleep(1.5)
        sub.all_reduce(np.ones(8))
    sub.close()


def test_mismatched_collective_raises_from_wait_with_the_message(comm):
    if comm.size == 1:
        pytest.skip("needs two ranks to disagree")
    sub = comm.split(0)
    # Every rank is out of the split before any starts the failing call (a
    # rank still in the split would get the others' abort there).
    comm.barrier()
    work = sub.all_reduce(np.ones(10 + comm.rank, dtype=np.float32), async_op=True)
    with pytest.raises(spccl.InvalidUsageError, match="collective mismatch in count") as info:
        work.wait()
    assert info.value.code == 4
    assert work.is_completed()
    assert isinstance(work.exception(), spccl.InvalidUsageError)
    with pytest.raises(spccl.InvalidUsageError, match="collective mismatch"):
        work.wait()  # the same error again
    assert "failed" in repr(work)
    sub.close()


def test_bad_arguments_raise_when_called(comm):
    with pytest.raises(spccl.InvalidArgumentError, match="spcclIbroadcast: root 99 is out of "
                                                         "range"):
        comm.broadcast(np.ones(2), root=99, async_op=True)
    with pytest.raises(spccl.InvalidArgumentError, match="x: dtype bool"):
        comm.all_reduce(np.zeros(2, dtype=bool), async_op=True)
    with pytest.raises(spccl.InvalidUsageError, match="cannot be grouped"):
        with spccl.group():
            comm.all_reduce(np.ones(2), async_op=True)
    comm.barrier()


def test_close_completes_work_in_flight(comm):
    if comm.size == 1:
        pytest.skip("needs a peer that joins late")
    sub = comm.split(0)
    if comm.rank == 0:
        work = sub.all_reduce(np.ones(100), async_op=True)
        comm.barrier()
        sub.close()  # waits for the others, who join after the barrier
        assert work.is_completed()
        np.testing.assert_array_equal(work.wait(), np.full(100, float(comm.size)))
    else:
        comm.barrier()
        sub.all_reduce(np.ones(100))
        sub.close()


def test_abort_fails_work_in_flight(comm):
    if comm.size == 1:
        pytest.skip("needs a peer that never joins")
    sub = comm.split(0)
    comm.barrier()  # every rank out of the split before rank 0 aborts sub
    if comm.rank == 0:
        work = sub.all_reduce(np.ones(100), async_op=True)
        sub.abort()
        with pytest.raises(spccl.RemoteError, match="aborted"):
            work.wait()
        comm.barrier()
    else:
        comm.barrier()
        sub.close()


def test_dropped_work_still_completes(comm):
    x = np.ones(1 << 18, dtype=np.float32)
    comm.all_reduce(x, out=x, async_op=True)  # the Work is dropped at once
    # Operations on a communicator run in issue order: the blocking call
    # below runs after the dropped one completed.
    y = comm.all_reduce(np.ones(3))
    np.testing.assert_array_equal(y, np.full(3, float(comm.size)))
    np.testing.assert_array_equal(x, np.full(1 << 18, comm.size, dtype=np.float32))


def test_torch_tensor_kept_alive(comm):
    x = torch.full((1 << 16,), 2.0)
    work = comm.all_reduce(x, async_op=True)
    del x
    gc.collect()
    torch.testing.assert_close(work.wait(), torch.full((1 << 16,), 2.0 * comm.size))
