"""The "spccl" torch.distributed backend (spccl.torch.backend) against the
gloo default group on the same tensors, DDP running on it, its non-blocking
Works (completion, errors raised from wait() with spccl's message) and
all_to_all_single / all_to_all with uneven splits."""
from __future__ import annotations

import time

import pytest
import torch
import torch.distributed as dist

import spccl
import spccl.torch.backend


@pytest.fixture(scope="module")
def spccl_group(torch_dist):
    spccl.torch.backend.register()
    spccl.torch.backend.register()  # idempotent
    group = dist.new_group(backend="spccl")
    yield group


def rank_tensor(rank: int, shape=(5, 3), dtype=torch.float32) -> torch.Tensor:
    g = torch.Generator().manual_seed(rank)
    return torch.randint(0, 10, shape, generator=g).to(dtype)


@pytest.mark.parametrize("op", [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN,
                                dist.ReduceOp.MAX])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float64])
def test_all_reduce_matches_gloo(spccl_group, op, dtype):
    x = rank_tensor(dist.get_rank(), dtype=dtype)
    y = x.clone()
    dist.all_reduce(x, op=op, group=spccl_group)
    dist.all_reduce(y, op=op)
    torch.testing.assert_close(x, y)


def test_async_op_and_sparse_all_reduce(spccl_group):
    x = rank_tensor(dist.get_rank())
    work = dist.all_reduce(x, group=spccl_group, async_op=True)
    assert work.wait() and work.is_completed()
    reference = rank_tensor(dist.get_rank())
    dist.all_reduce(reference)
    torch.testing.assert_close(x, reference)
    s = rank_tensor(dist.get_rank(), shape=(40,)).relu_()
    s[s < 7] = 0
    sparse = s.to_sparse()
    dist.all_reduce(sparse, group=spccl_group)
    reference = s.clone()
    dist.all_reduce(reference)
    torch.testing.assert_close(sparse.to_dense(), reference)


def test_broadcast_all_gather_reduce_barrier(spccl_group):
    rank, size = dist.get_rank(), dist.get_world_size()
    x = rank_tensor(rank)
    dist.broadcast(x, src=size - 1, group=spccl_group)
    torch.testing.assert_close(x, rank_tensor(size - 1))
    outputs = [torch.empty(5, 3) for _ in range(size)]
    dist.all_gather(outputs, rank_tensor(rank), group=spccl_group)
    for r, out in enumerate(outputs):
        torch.testing.assert_close(out, rank_tensor(r))
    y = rank_tensor(rank)
    dist.reduce(y, dst=0, group=spccl_group)
    if rank == 0:
        torch.testing.assert_close(y, sum(rank_tensor(r) for r in range(size)))
    dist.barrier(group=spccl_group)


def test_unsupported_calls_say_so(spccl_group):
    with pytest.raises(spccl.InvalidArgumentError, match="reduce op"):
        dist.all_reduce(torch.ones(2), op=dist.ReduceOp.BAND, group=spccl_group)
    with pytest.raises(RuntimeError, match="spccl does not support"):
        dist.scatter(torch.ones(2), [torch.ones(2)] * dist.get_world_size()
                     if dist.get_rank() == 0 else None, src=0, group=spccl_group)


def test_ddp_on_the_spccl_backend_matches_gloo(spccl_group):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    a = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    b = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    b.load_state_dict(a.state_dict())
    on_gloo = torch.nn.parallel.DistributedDataParallel(a)
    on_spccl = torch.nn.parallel.DistributedDataParallel(b, process_group=spccl_group)
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (on_gloo, on_spccl)]
    g = torch.Generator().manual_seed(dist.get_rank())
    for _ in range(5):
        x = torch.randn(4, 6, generator=g)
        for model, opt in zip((on_gloo, on_spccl), opts):
            opt.zero_grad()
            model(x).square().sum().backward()
            opt.step()
        for p, q in zip(a.parameters(), b.parameters()):
            torch.testing.assert_close(q, p, rtol=1e-5, atol=1e-6)


def test_async_works_complete_and_give_results(spccl_group):
    rank, size = dist.get_rank(), dist.get_world_size()
    big = torch.full((1 << 18,), float(rank + 1))
    works = [dist.all_reduce(big, group=spccl_group, async_op=True)]
    y = rank_tensor(rank)
    works.append(dist.broadcast(y, src=0, group=spccl_group, async_op=True))
    outputs = [torch.empty(5, 3) for _ in range(size)]
    works.append(dist.all_gather(outputs, rank_tensor(rank), group=spccl_group, async_op=True))
    z = rank_tensor(rank)
    works.append(dist.reduce(z, dst=size - 1, group=spccl_group, async_op=True))
    works.append(dist.barrier(group=spccl_group, async_op=True))
    deadline = time.monotonic() + 60
    while not all(w.is_completed() for w in works):
        assert time.monotonic() < deadline, "async collectives did not complete in 60 s"
        time.sleep(0.001)
    for w in works:
        assert w.wait()
    torch.testing.assert_close(big, torch.full((1 << 18,), size * (size + 1) / 2))
    torch.testing.assert_close(y, rank_tensor(0))
    for r, out in enumerate(outputs):
        torch.testing.assert_close(out, rank_tensor(r))
    if rank == size - 1:
        torch.testing.assert_close(z, sum(rank_tensor(r) for r in range(size)))
    assert torch.equal(works[0].result()[0], big) and works[0].get_future().done()


@pytest.fixture
def fresh_spccl_group(torch_dist):
    """A group of its own for a call that fails (it stays broken)."""
    spccl.torch.backend.register()
    group = dist.new_group(backend="spccl")
    dist.barrier()  # every rank has its communicator before any fails a call on it
    return group


def test_failed_async_collective_raises_from_wait(fresh_spccl_group):
    if dist.get_world_size() == 1:
        pytest.skip("needs two ranks to disagree")
    x = torch.ones(10 + dist.get_rank())
    work = dist.all_reduce(x, group=fresh_spccl_group, async_op=True)
    with pytest.raises(spccl.InvalidUsageError, match="collective mismatch in count"):
        work.wait()
    assert work.is_completed()
    with pytest.raises(spccl.InvalidUsageError):  # again, and from a synchronous call too
        work.wait()


def test_failed_sync_collective_raises(fresh_spccl_group):
    if dist.get_world_size() == 1:
        pytest.skip("needs two ranks to disagree")
    with pytest.raises(spccl.InvalidUsageError, match="collective mismatch in count"):
        dist.all_reduce(torch.ones(10 + dist.get_rank()), group=fresh_spccl_group)


def test_cpp_callers_get_a_work_whose_future_fails(fresh_spccl_group):
    """Called other than through torch.distributed's Python API (as DDP's C++
    does), the group returns torch's C++ Work around a future; a failure
    reaches whoever reads the future."""
    if dist.get_world_size() == 1:
        pytest.skip("needs two ranks to disagree")
    pg = fresh_spccl_group
    work = pg.allreduce([torch.ones(10 + dist.get_rank())])
    assert type(work) is torch.distributed.Work
    with pytest.raises(RuntimeError, match="collective mismatch in count"):
        work.get_future().wait()


def split_rows(src: int, dst: int) -> int:
    return (2 * src + dst) % 3  # zeros included


@pytest.mark.parametrize("row_shape", [(), (4,)])
def test_all_to_all_single_uneven_splits(spccl_group, row_shape):
    rank, size = dist.get_rank(), dist.get_world_size()
    sends = [split_rows(rank, d) for d in range(size)]
    recvs = [split_rows(s, rank) for s in range(size)]

    def rows_of(src):
        n = sum(split_rows(src, d) for d in range(size))
        return rank_tensor(src, shape=(n, *row_shape))

    output = torch.full((sum(recvs), *row_shape), -1.0)
    dist.all_to_all_single(output, rows_of(rank), recvs, sends, group=spccl_group)
    expected = torch.cat([rows_of(s)[sum(split_rows(s, d) for d in range(rank)):][:recvs[s]]
                          for s in range(size)])
    torch.testing.assert_close(output, expected)
    on_gloo = torch.full_like(output, -1.0)
    dist.all_to_all_single(on_gloo, rows_of(rank), recvs, sends)
    torch.testing.assert_close(output, on_gloo)


def test_all_to_all_single_equal_splits_async_and_list_form(spccl_group):
    rank, size = dist.get_rank(), dist.get_world_size()
    x = torch.arange(2 * size, dtype=torch.float64) + 100 * rank
    output = torch.empty(2 * size, dtype=torch.float64)
    work = dist.all_to_all_single(output, x, group=spccl_group, async_op=True)
    assert work.wait()
    torch.testing.assert_close(output, torch.cat([torch.arange(2 * rank, 2 * rank + 2,
                                                               dtype=torch.float64) + 100 * s
                                                  for s in range(size)]))
    inputs = [torch.full((d + 1, 2), float(rank * 10 + d)) for d in range(size)]
    outputs = [torch.empty(rank + 1, 2) for _ in range(size)]
    dist.all_to_all(outputs, inputs, group=spccl_group)
    for s, out in enumerate(outputs):
        torch.testing.assert_close(out, torch.full((rank + 1, 2), float(s * 10 + rank)))
