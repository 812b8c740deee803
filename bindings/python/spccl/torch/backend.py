"""A ``torch.distributed`` backend named ``"spccl"`` (CPU tensors)::

    import spccl.torch.backend
    spccl.torch.backend.register()
    dist.init_process_group("spccl", ...)        # or dist.new_group(backend="spccl")

torch 1.13 lets a Python class derive from ``ProcessGroup`` (its pybind11
trampoline forwards the virtual calls), so no C++ extension is needed.
Supported: all_reduce (SUM, PRODUCT, MIN, MAX, AVG; a sparse COO tensor
goes through spccl's sparse all-reduce), broadcast, all_gather, reduce,
barrier, all_to_all_single (equal or uneven splits) and all_to_all —
enough for DistributedDataParallel; other calls raise torch's "does not
support" error.

Non-blocking: all_reduce (dense), broadcast, all_gather, reduce, barrier
and all_to_all_single with equal splits start spccl's non-blocking
collective and return at once; the Work completes when it finishes, so
``async_op=True`` overlaps the collective with what the caller computes
until ``work.wait()``. The sparse all-reduce and the uneven all-to-all
have no non-blocking form in the C API: they complete before they return.

The Work a call returns depends on who calls. torch's Python API
(``dist.all_reduce`` and the rest of ``torch.distributed.distributed_c10d``)
gets a Python Work whose ``wait()`` raises the spccl error of a failed
collective. C++ callers (DDP's parameter checks and reducer) get a C++ Work
around a torch future: torch 1.13 drops the Python half of a Python Work
returned to C++ (its ``wait()`` would then never return), and the future
carries the failure to DDP, which raises it from backward.
"""
from __future__ import annotations

import concurrent.futures
import datetime
import sys
import time
from types import FrameType
from typing import Any, Callable, List, Optional, TypeVar, cast

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import (AllreduceOptions, BroadcastOptions, ProcessGroup,
                                        ReduceOptions, Work)
# Not in torch 1.13's type stubs:
from torch._C._distributed_c10d import _create_work_from_future  # type: ignore[attr-defined]

from .._comm import Comm, UniqueId, unique_id
from .._enums import ReduceOp
from .._errors import InvalidArgumentError
from .._errors import TimeoutError as SpcclTimeoutError
from .._work import Work as SpcclWork

BACKEND_NAME = "spccl"
_UNIQUE_ID_KEY = "spccl_unique_id"
_TORCH_API_MODULE = "torch.distributed.distributed_c10d"

_REDUCE_OPS = {dist.ReduceOp.SUM: ReduceOp.SUM, dist.ReduceOp.PRODUCT: ReduceOp.PROD,
               dist.ReduceOp.MIN: ReduceOp.MIN, dist.ReduceOp.MAX: ReduceOp.MAX,
               dist.ReduceOp.AVG: ReduceOp.AVG}  # type: ignore[attr-defined] # not in the stubs


def _spccl_op(op: Any) -> ReduceOp:
    for torch_op, spccl_op in _REDUCE_OPS.items():
        if op == torch_op:
            return spccl_op
    raise InvalidArgumentError(f"spccl backend: reduce op {op} is not supported "
                               "(SUM, PRODUCT, MIN, MAX, AVG)", 3)


_T = TypeVar("_T")


def _single(tensors: List[_T], call: str) -> _T:
    if len(tensors) != 1:
        raise InvalidArgumentError(f"spccl backend: {call} takes one tensor per process, "
                                   f"got {len(tensors)}", 3)
    return tensors[0]


def _called_from_torch_api() -> bool:
    """Whether the nearest caller outside this module is torch.distributed's
    Python API (which keeps the Work as a Python object); False when the call
    came from C++ with no Python frame in between that could hold it."""
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    return frame is not None and frame.f_globals.get("__name__") == _TORCH_API_MODULE


def _raise_failure(future: torch.futures.Future) -> Any:
    return future.wait()  # re-raises the collective's error inside torch's then()


class _PythonWork(Work):
    """The Work of torch's Python API calls: waits on the future its
    completion sets, and raises the collective's spccl error."""

    def __init__(self, future: torch.futures.Future) -> None:
        super().__init__()
        self._future = future

    def wait(self, timeout: datetime.timedelta = datetime.timedelta(0)) -> bool:
        if timeout > datetime.timedelta(0):
            deadline = time.monotonic() + timeout.total_seconds()
            pause = 1e-5
            while not self._future.done():
                if time.monotonic() >= deadline:
                    raise SpcclTimeoutError(f"spccl backend: the collective did not complete "
                                            f"within {timeout}", 7)
                time.sleep(pause)
                pause = min(pause * 2, 1e-3)
        self._future.wait()  # raises the spccl error of a failed collective
        return True

    def is_completed(self) -> bool:
        return self._future.done()

    def result(self) -> List[torch.Tensor]:
        return self._future.wait()

    def get_future(self) -> torch.futures.Future:
        return self._future

    def synchronize(self) -> None:  # CPU tensors: nothing to synchronize
        pass


def _work_for_caller(future: torch.futures.Future) -> Work:
    if _called_from_torch_api():
        return _PythonWork(future)
    return _create_work_from_future(future.then(_raise_failure))


def _done_work(result: List[torch.Tensor]) -> Work:
    """The Work of a call that finished before it returned."""
    future: torch.futures.Future = torch.futures.Future()
    future.set_result(result)
    return _work_for_caller(future)


class ProcessGroupSpccl(ProcessGroup):
    """One spccl communicator behind the ProcessGroup interface.

    Non-blocking calls complete on one thread of the group, in issue order
    (spccl runs a communicator's operations in that order): it waits on
    each spccl Work, copies results where the call needs it, and completes
    the call's torch future."""

    def __init__(self, comm: Comm) -> None:
        # torch 1.13's stubs lack this constructor.
        super().__init__(comm.rank, comm.size)  # type: ignore[call-arg]
        self.comm = comm
        self._completer = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="spccl-backend")

    def getBackendName(self) -> str:  # noqa: N802 - torch's name
        return BACKEND_NAME

    def _started(self, work: SpcclWork, result: List[torch.Tensor],
                 then: Optional[Callable[[], None]] = None) -> Work:
        """The Work of a started spccl collective; then runs after it completed."""
        future: torch.futures.Future = torch.futures.Future()

        def complete() -> None:
            try:
                work.wait()
                if then is not None:
                    then()
            except BaseException as error:  # noqa: B036 - the caller's wait() raises it
                future.set_exception(error)
                return
            future.set_result(result)

        self._completer.submit(complete)
        return _work_for_caller(future)

    # torch calls these from C++ with options, and from Python
    # (distributed_c10d.py) sometimes without: the defaults are torch's.
    # The trampoline calls the first of the overloads torch's stubs list
    # (the others are Python-side conveniences), hence type: ignore[override].
    def allreduce(self, tensors: List[torch.Tensor],  # type: ignore[override]
                  opts: Any = None) -> Work:
        opts = opts or AllreduceOptions()
        tensor = _single(tensors, "all_reduce")
        op = _spccl_op(opts.reduceOp)
        if tensor.layout == torch.sparse_coo:
            # In place like Gloo's sparse all-reduce: the tensor takes the result.
            tensor.copy_(self.comm.sparse_all_reduce(tensor, op))
            return _done_work(tensors)
        return self._started(self.comm.all_reduce(tensor, op, out=tensor, async_op=True), tensors)

    def broadcast(self, tensors: List[torch.Tensor],  # type: ignore[override]
                  opts: Any = None) -> Work:
        opts = opts or BroadcastOptions()
        tensor = _single(tensors, "broadcast")
        return self._started(self.comm.broadcast(tensor, opts.rootRank, out=tensor,
                                                 async_op=True), tensors)

    def allgather(self, output_tensors: List[List[torch.Tensor]],  # type: ignore[override]
                  input_tensors: List[torch.Tensor], opts: Any = None) -> Work:
        tensor = _single(input_tensors, "all_gather")
        outputs = _single(output_tensors, "all_gather")
        if len(outputs) != self.comm.size:
            raise InvalidArgumentError(f"spccl backend: all_gather needs {self.comm.size} output "
                                       f"tensors, got {len(outputs)}", 3)
        gathered = torch.empty((self.comm.size, *tensor.shape), dtype=tensor.dtype)

        def scatter_rows() -> None:
            for rank, out in enumerate(outputs):
                out.copy_(gathered[rank])

        return self._started(self.comm.all_gather(tensor.contiguous(), out=gathered,
                                                  async_op=True), outputs, scatter_rows)

    def reduce(self, tensors: List[torch.Tensor],  # type: ignore[override]
               opts: Any = None) -> Work:
        opts = opts or ReduceOptions()
        tensor = _single(tensors, "reduce")
        work = self.comm.reduce(tensor, opts.rootRank, _spccl_op(opts.reduceOp), out=tensor,
                                async_op=True)
        return self._started(cast(SpcclWork, work), tensors)

    def barrier(self, opts: Any = None) -> Work:
        return self._started(self.comm.barrier(async_op=True), [])

    def alltoall_base(self, output: torch.Tensor, input: torch.Tensor,  # noqa: A002 - torch's
                      output_split_sizes: List[int], input_split_sizes: List[int],
                      opts: Any = None) -> Work:
        """all_to_all_single: dimension 0 of input split by input_split_sizes
        (empty: equal blocks), of output by output_split_sizes."""
        source = input.contiguous()
        target = output if output.is_contiguous() else torch.empty_like(
            output, memory_format=torch.contiguous_format)

        def copy_back() -> None:
            if target is not output:
                output.copy_(target)

        if not output_split_sizes and not input_split_sizes:
            return self._started(self.comm.all_to_all(source, out=target, async_op=True),
                                 [output], copy_back)
        sends = list(input_split_sizes) or self._equal_splits(source, "input")
        recvs = list(output_split_sizes) or self._equal_splits(target, "output")
        self.comm.all_to_all_v(source, sends, recvs, out=target)
        copy_back()
        return _done_work([output])

    def alltoall(self, output_tensors: List[torch.Tensor], input_tensors: List[torch.Tensor],
                 opts: Any = None) -> Work:
        """all_to_all: input_tensors[r] goes to rank r, output_tensors[r] comes
        from rank r (any shapes; one dtype)."""
        size = self.comm.size
        for name, tensors in (("input", input_tensors), ("output", output_tensors)):
            if len(tensors) != size:
                raise InvalidArgumentError(f"spccl backend: all_to_all needs {size} {name} "
                                           f"tensors, got {len(tensors)}", 3)
        dtype = input_tensors[0].dtype
        if any(t.dtype != dtype for t in (*input_tensors, *output_tensors)):
            raise InvalidArgumentError("spccl backend: all_to_all tensors must share one dtype", 3)
        source = torch.cat([t.reshape(-1) for t in input_tensors])
        target = torch.empty(sum(t.numel() for t in output_tensors), dtype=dtype)
        self.comm.all_to_all_v(source, [t.numel() for t in input_tensors],
                               [t.numel() for t in output_tensors], out=target)
        for out, part in zip(output_tensors,
                             target.split([t.numel() for t in output_tensors])):
            out.copy_(part.view(out.shape))
        return _done_work(output_tensors)

    def _equal_splits(self, tensor: torch.Tensor, name: str) -> List[int]:
        size = self.comm.size
        rows = tensor.shape[0] if tensor.dim() > 0 else 0
        if tensor.dim() == 0 or rows % size:
            raise InvalidArgumentError(f"spccl backend: all_to_all_single without {name} split "
                                       f"sizes needs a first dimension divisible by {size}, got "
                                       f"shape {tuple(tensor.shape)}", 3)
        return [rows // size] * size


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
