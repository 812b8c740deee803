"""A ``torch.distributed`` backend named ``"spccl"`` (CPU tensors)::

    import spccl.torch.backend
    spccl.torch.backend.register()
    dist.init_process_group("spccl", ...)        # or dist.new_group(backend="spccl")

torch 1.13 lets a Python class derive from ``ProcessGroup`` (its pybind11
trampoline forwards the virtual calls), so no C++ extension is needed.
Supported: all_reduce (SUM, PRODUCT, MIN, MAX, AVG; a sparse COO tensor
goes through spccl's sparse all-reduce), broadcast, all_gather, reduce,
barrier — enough for DistributedDataParallel. Each call completes before
it returns (``async_op=True`` gets a finished Work); other calls raise
torch's "does not support" error.
"""
from __future__ import annotations

import datetime
from typing import Any, List

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import (AllreduceOptions, BroadcastOptions, ProcessGroup,
                                        ReduceOptions, Work, _create_work_from_future)

from .._comm import Comm, UniqueId, unique_id
from .._enums import ReduceOp
from .._errors import InvalidArgumentError

BACKEND_NAME = "spccl"
_UNIQUE_ID_KEY = "spccl_unique_id"

_REDUCE_OPS = {dist.ReduceOp.SUM: ReduceOp.SUM, dist.ReduceOp.PRODUCT: ReduceOp.PROD,
               dist.ReduceOp.MIN: ReduceOp.MIN, dist.ReduceOp.MAX: ReduceOp.MAX,
               dist.ReduceOp.AVG: ReduceOp.AVG}


def _spccl_op(op: Any) -> ReduceOp:
    for torch_op, spccl_op in _REDUCE_OPS.items():
        if op == torch_op:
            return spccl_op
    raise InvalidArgumentError(f"spccl backend: reduce op {op} is not supported "
                               "(SUM, PRODUCT, MIN, MAX, AVG)", 3)


def _single(tensors: List[torch.Tensor], call: str) -> torch.Tensor:
    if len(tensors) != 1:
        raise InvalidArgumentError(f"spccl backend: {call} takes one tensor per process, "
                                   f"got {len(tensors)}", 3)
    return tensors[0]


def _done_work(result: List[torch.Tensor]) -> Work:
    """The Work of a call that finished before it returned.

    A C++ Work around a completed future, not a Python subclass of Work:
    when C++ callers (DDP's parameter checks, its reducer) hold a Work
    returned from Python, the Python half of a subclass is gone and
    torch's base Work.wait() never returns."""
    future: torch.futures.Future = torch.futures.Future()
    future.set_result(result)
    return _create_work_from_future(future)


class ProcessGroupSpccl(ProcessGroup):
    """One spccl communicator behind the ProcessGroup interface."""

    def __init__(self, comm: Comm) -> None:
        super().__init__(comm.rank, comm.size)
        self.comm = comm

    def getBackendName(self) -> str:  # noqa: N802 - torch's name
        return BACKEND_NAME

    # torch calls these from C++ with options, and from Python
    # (distributed_c10d.py) sometimes without: the defaults are torch's.
    def allreduce(self, tensors: List[torch.Tensor], opts: Any = None) -> Work:
        opts = opts or AllreduceOptions()
        tensor = _single(tensors, "all_reduce")
        op = _spccl_op(opts.reduceOp)
        if tensor.layout == torch.sparse_coo:
            # In place like Gloo's sparse all-reduce: the tensor takes the result.
            tensor.copy_(self.comm.sparse_all_reduce(tensor, op))
        else:
            self.comm.all_reduce(tensor, op, out=tensor)
        return _done_work(tensors)

    def broadcast(self, tensors: List[torch.Tensor], opts: Any = None) -> Work:
        opts = opts or BroadcastOptions()
        tensor = _single(tensors, "broadcast")
        self.comm.broadcast(tensor, opts.rootRank, out=tensor)
        return _done_work(tensors)

    def allgather(self, output_tensors: List[List[torch.Tensor]],
                  input_tensors: List[torch.Tensor], opts: Any = None) -> Work:
        tensor = _single(input_tensors, "all_gather")
        outputs = _single(output_tensors, "all_gather")
        if len(outputs) != self.comm.size:
            raise InvalidArgumentError(f"spccl backend: all_gather needs {self.comm.size} output "
                                       f"tensors, got {len(outputs)}", 3)
        gathered = self.comm.all_gather(tensor.contiguous())
        for rank, out in enumerate(outputs):
            out.copy_(gathered[rank])
        return _done_work(outputs)

    def reduce(self, tensors: List[torch.Tensor], opts: Any = None) -> Work:
        opts = opts or ReduceOptions()
        tensor = _single(tensors, "reduce")
        self.comm.reduce(tensor, opts.rootRank, _spccl_op(opts.reduceOp), out=tensor)
        return _done_work(tensors)

    def barrier(self, opts: Any = None) -> Work:
        self.comm.barrier()
        return _done_work([])


def _create(store: Any, rank: int, world_size: int, timeout: datetime.timedelta) -> ProcessGroupSpccl:
    """torch's backend factory: rank 0's unique id reaches the others through
    the group's store (already prefixed per group by torch)."""
    if rank == 0:
        uid = unique_id()
        store.set(_UNIQUE_ID_KEY, uid.raw)
    else:
        store.wait([_UNIQUE_ID_KEY], timeout)
        uid = UniqueId(bytes(store.get(_UNIQUE_ID_KEY)))
    timeout_ms = int(timeout.total_seconds() * 1000)
    return ProcessGroupSpccl(Comm(uid, rank, world_size, timeout_ms=timeout_ms))


def register() -> None:
    """Makes ``"spccl"`` a torch.distributed backend (idempotent)."""
    if BACKEND_NAME.upper() not in dist.Backend.__dict__:
        dist.Backend.register_backend(BACKEND_NAME, _create)
