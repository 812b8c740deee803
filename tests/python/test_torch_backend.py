"""The "spccl" torch.distributed backend (spccl.torch.backend) against the
gloo default group on the same tensors, and DDP running on it."""
from __future__ import annotations

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
