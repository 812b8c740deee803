"""Every dense collective on numpy arrays and torch tensors of every dtype,
against references each rank computes from all ranks' seeded inputs."""
from __future__ import annotations

import time

import numpy as np
import pytest
import torch

import spccl
from arrays import assert_close, make, to_numpy
from inputs import NUMPY_DTYPES, TORCH_DTYPES, tolerance, values

CASES = [("numpy", d) for d in NUMPY_DTYPES] + [("torch", d) for d in TORCH_DTYPES]
SHAPE = (6, 5)  # 30 elements; the first dimension splits for reduce_scatter only when n | 6


def inputs(comm, shape, dtype, seed, low=0, high=10):
    return [values(r, shape, dtype, seed, low, high) for r in range(comm.size)]


@pytest.mark.parametrize("kind,dtype", CASES)
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "avg"])
def test_all_reduce(comm, kind, dtype, op):
    if op == "avg" and "float" not in dtype:
        pytest.skip("avg of integers truncates; checked on floats")
    low, high = (1, 3) if op == "prod" else (0, 10)
    data = inputs(comm, SHAPE, dtype, 1, low, high)
    reference = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
                 "avg": np.mean}[op](np.stack(data), axis=0)
    result = comm.all_reduce(make(kind, data[comm.rank], dtype), op)
    assert type(result) is (np.ndarray if kind == "numpy" else torch.Tensor)
    assert_close(result, reference, dtype, tolerance(dtype))


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_all_reduce_in_place_and_enum_op(comm, kind):
    data = inputs(comm, (17,), "float32", 2)
    x = make(kind, data[comm.rank], "float32")
    assert comm.all_reduce(x, spccl.ReduceOp.MAX, out=x) is x
    assert_close(x, np.max(np.stack(data), axis=0), "float32", tolerance("float32"))


@pytest.mark.parametrize("kind,dtype", CASES)
def test_broadcast(comm, kind, dtype):
    data = inputs(comm, SHAPE, dtype, 3)
    for root in range(comm.size):
        x = make(kind, data[comm.rank], dtype)
        assert_close(comm.broadcast(x, root), data[root], dtype, tolerance(dtype))
        comm.broadcast(x, root, out=x)  # in place
        assert_close(x, data[root], dtype, tolerance(dtype))


@pytest.mark.parametrize("kind,dtype", CASES)
def test_reduce(comm, kind, dtype):
    data = inputs(comm, SHAPE, dtype, 4)
    root = comm.size - 1
    result = comm.reduce(make(kind, data[comm.rank], dtype), root, "sum")
    if comm.rank == root:
        assert_close(result, np.sum(np.stack(data), axis=0), dtype, tolerance(dtype))
    else:
        assert result is None


@pytest.mark.parametrize("kind,dtype", CASES)
def test_all_gather(comm, kind, dtype):
    data = inputs(comm, SHAPE, dtype, 5)
    result = comm.all_gather(make(kind, data[comm.rank], dtype))
    assert tuple(result.shape) == (comm.size, *SHAPE)
    assert_close(result, np.stack(data), dtype, tolerance(dtype))


@pytest.mark.parametrize("kind,dtype", CASES)
def test_reduce_scatter(comm, kind, dtype):
    shape = (2 * comm.size, 3)
    data = inputs(comm, shape, dtype, 6)
    result = comm.reduce_scatter(make(kind, data[comm.rank], dtype), "sum")
    total = np.sum(np.stack(data), axis=0)
    assert_close(result, total[2 * comm.rank: 2 * comm.rank + 2], dtype, tolerance(dtype))


@pytest.mark.parametrize("kind,dtype", CASES)
def test_all_to_all(comm, kind, dtype):
    shape = (3 * comm.size,)
    data = inputs(comm, shape, dtype, 7)
    result = comm.all_to_all(make(kind, data[comm.rank], dtype))
    me = slice(3 * comm.rank, 3 * comm.rank + 3)
    assert_close(result, np.concatenate([d[me] for d in data]), dtype, tolerance(dtype))


def test_empty_and_scalar_like_inputs(comm):
    assert comm.all_reduce(np.zeros(0, dtype=np.float32)).shape == (0,)
    one = comm.all_reduce(torch.ones(1, dtype=torch.int64))
    assert one.item() == comm.size
    scalar = comm.all_reduce(np.array(2.0))  # 0-d arrays are one element
    assert scalar.shape == () and float(scalar) == 2.0 * comm.size


def test_barrier(comm):
    """No rank returns before the last one has entered: one rank (a different
    one each round) enters LATE seconds after the others, and every rank's
    return must follow every rank's entry. spcclrun starts the ranks on one
    host, so time.monotonic_ns (CLOCK_MONOTONIC) is one clock for all."""
    late = 0.1
    for round_ in range(2):
        if comm.rank == (comm.size - 1 + round_) % comm.size:
            time.sleep(late)
        entered = time.monotonic_ns()
        comm.barrier()
        returned = time.monotonic_ns()
        times = comm.all_gather(np.array([entered, returned], dtype=np.int64))
        last = int(np.argmax(times[:, 0]))
        assert returned >= times[last, 0], (
            f"round {round_}: rank {comm.rank} returned {(times[last, 0] - returned) / 1e6:.1f} ms "
            f"before rank {last} entered")


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_send_recv_ring_in_group(comm, kind):
    right, left = (comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size
    x = make(kind, np.full(8, comm.rank, dtype=np.float64), "int32")
    y = make(kind, np.zeros(8), "int32")
    with spccl.group():
        comm.send(x, right)
        comm.recv(y, left)
    np.testing.assert_array_equal(to_numpy(y), np.full(8, left))


def test_counters_grow(comm):
    before = comm.counters()
    comm.all_reduce(np.ones(1000, dtype=np.float32))
    after = comm.counters()
    assert set(after) == {"bytes_sent", "bytes_received", "messages_sent", "messages_received"}
    if comm.size > 1:
        assert after["bytes_sent"] > before["bytes_sent"]
