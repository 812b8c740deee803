"""all_to_all_v (spcclAllToAllv) with uneven splits, zeros included, on
numpy arrays and torch tensors, against a reference every rank builds from
all ranks' seeded inputs; and its argument checks."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import spccl
from arrays import make, to_numpy
from inputs import values


def split(src: int, dst: int, salt: int = 0) -> int:
    """Rows rank src sends rank dst: 0..3, zero for about a quarter of the pairs."""
    return (src * 3 + dst * 2 + salt) % 4


def rank_input(rank: int, size: int, row_shape, dtype: str, salt: int = 0) -> np.ndarray:
    rows = sum(split(rank, d, salt) for d in range(size))
    return values(rank, (rows, *row_shape), dtype, seed=30 + salt, high=100)


def reference(me: int, size: int, row_shape, dtype: str, salt: int = 0) -> np.ndarray:
    """Rank me's result: from each rank src in order, the rows src sends me."""
    parts = []
    for src in range(size):
        x = rank_input(src, size, row_shape, dtype, salt)
        start = sum(split(src, d, salt) for d in range(me))
        parts.append(x[start:start + split(src, me, salt)])
    return np.concatenate(parts)


@pytest.mark.parametrize("kind,dtype", [("numpy", "float32"), ("numpy", "int64"),
                                        ("numpy", "uint8"), ("torch", "float64"),
                                        ("torch", "bfloat16"), ("torch", "int32")])
@pytest.mark.parametrize("row_shape", [(), (3,), (2, 2)])
@pytest.mark.parametrize("given", [True, False])
def test_uneven_splits_match_reference(comm, kind, dtype, row_shape, given):
    n, me = comm.size, comm.rank
    for salt in range(3):  # a different zero pattern each time
        x = make(kind, rank_input(me, n, row_shape, dtype, salt), dtype)
        sends = [split(me, d, salt) for d in range(n)]
        recvs = [split(s, me, salt) for s in range(n)] if given else None
        got = comm.all_to_all_v(x, sends, recvs)
        assert type(got) is type(x) and got.dtype == x.dtype
        want = reference(me, n, row_shape, dtype, salt)
        assert tuple(got.shape) == want.shape
        np.testing.assert_array_equal(to_numpy(got), want)  # small integers: exact in each type


def test_out_and_all_zero_rows(comm):
    n, me = comm.size, comm.rank
    x = np.arange(2 * n, dtype=np.float64) + 100 * me  # 2 rows to every rank
    out = np.full(2 * n, -1.0)
    assert comm.all_to_all_v(x, [2] * n, [2] * n, out=out) is out
    np.testing.assert_array_equal(out, np.concatenate([np.arange(2 * me, 2 * me + 2) + 100 * s
                                                       for s in range(n)]))
    # Nothing to anyone: an empty result of the right shape.
    empty = comm.all_to_all_v(np.zeros((0, 5), dtype=np.float32), [0] * n)
    assert empty.shape == (0, 5) and empty.dtype == np.float32


def test_bad_splits_raise_naming_them(comm):
    n = comm.size
    x = np.zeros((n, 2), dtype=np.float32)
    with pytest.raises(spccl.InvalidArgumentError, match=f"send_splits: has {n + 1} entries, "
                                                         f"the communicator has {n} ranks"):
        comm.all_to_all_v(x, [1] * (n + 1), [1] * n)
    with pytest.raises(spccl.InvalidArgumentError, match="send_splits: -1 is negative"):
        comm.all_to_all_v(x, [-1] + [1] * (n - 1), [1] * n)
    with pytest.raises(spccl.InvalidArgumentError, match=f"send_splits: sums to {n + 1} rows, "
                                                         f"x has {n}"):
        comm.all_to_all_v(x, [2] + [1] * (n - 1), [1] * n)
    with pytest.raises(spccl.InvalidArgumentError, match="recv_splits: expected a sequence"):
        comm.all_to_all_v(x, [1] * n, [0.5] * n)
    with pytest.raises(spccl.InvalidArgumentError, match="out: has 3 elements"):
        comm.all_to_all_v(x, [1] * n, [1] * n, out=np.zeros(3, dtype=np.float32))
    with pytest.raises(spccl.InvalidArgumentError, match="0-d"):
        comm.all_to_all_v(np.zeros((), dtype=np.float32), [0] * n, [0] * n)


def test_splits_that_disagree_between_ranks_fail(comm):
    if comm.size == 1:
        pytest.skip("needs two ranks to disagree")
    n, me = comm.size, comm.rank
    sub = comm.split(0)
    comm.barrier()  # every rank out of the split before the failing call
    x = np.zeros((n, 2), dtype=np.float32)
    recvs = [1] * n
    if me == 0:
        recvs[1] = 2  # rank 1 sends rank 0 one row, not two
    out = np.zeros((sum(recvs), 2), dtype=np.float32)
    if me == 0:  # the receiving end finds the mismatch
        with pytest.raises(spccl.InvalidUsageError, match="AllToAllv.* received 8 bytes from "
                                                          "rank 1 .* expects 16"):
            sub.all_to_all_v(x, [1] * n, recvs, out=out)
    else:
        try:  # the ranks whose counts agree with rank 0's may finish
            sub.all_to_all_v(x, [1] * n, recvs, out=out)
        except spccl.Error:
            pass
    sub.close()


def test_torch_tensors_keep_their_kind(comm):
    n = comm.size
    x = torch.arange(n * 2, dtype=torch.float32).reshape(n, 2)
    got = comm.all_to_all_v(x, [1] * n)
    assert isinstance(got, torch.Tensor) and got.shape == (n, 2)
