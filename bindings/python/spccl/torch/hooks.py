"""DDP communication hooks on spccl (``DistributedDataParallel.register_comm_hook``).

``sparse_allreduce_hook``: each gradient bucket goes through spccl's sparse
all-reduce, so the all-zero rows of an ``nn.Embedding``'s dense gradient
never travel. The result is the same average DDP's default all-reduce
computes (lossless; equal up to float summation order)::

    comm = spccl.Comm.from_env()
    state = spccl.torch.hooks.SparseAllReduceState(comm)
    ddp.register_comm_hook(state, spccl.torch.hooks.sparse_allreduce_hook)

``compressed_allreduce_hook`` (piecewise quantization with error feedback)
is not here: spccl's C API has no compressed all-reduce in this build. It
will take a state object like this one when it does.
"""
# No `from __future__ import annotations`: DDP's register_comm_hook compares
# the hook's annotations with dist.GradBucket and Future[Tensor] as objects.
import concurrent.futures
from typing import Any, Dict, Optional

import torch
import torch.distributed as dist

from .._comm import Comm
from .._enums import ReduceOp, SparseAlgorithm, SparseEncoding, SparsePartitioner


class SparseAllReduceState:
    """What :func:`sparse_allreduce_hook` needs across calls (like PowerSGD's state).

    comm: the communicator, over the same ranks as the DDP process group
      and in the same order. With ``asynchronous`` (the default) it is used
      from the state's worker thread while backward runs, so nothing else
      may use it during a backward pass: give the hook a communicator of
      its own (e.g. ``comm.split(0)``).
    asynchronous: communicate on one worker thread, in bucket order, so
      backward computes the next buckets meanwhile, as DDP's own
      all-reduce does; False runs each bucket in the hook itself.
    algorithm, encoding, partitioner: override spccl's planner.
    tag_offset: the profiling tag of bucket i is ``tag_offset + i + 1``
      (tag 0 means "keyed by size" in spccl), so each bucket's density
      history stays its own — see :meth:`stats`.
    """

    def __init__(self, comm: "Comm", *, asynchronous: bool = True,
                 algorithm: SparseAlgorithm = SparseAlgorithm.AUTO,
                 encoding: SparseEncoding = SparseEncoding.AUTO,
                 partitioner: SparsePartitioner = SparsePartitioner.AUTO,
                 tag_offset: int = 0) -> None:
        self.comm = comm
        self.algorithm = algorithm
        self.encoding = encoding
        self.partitioner = partitioner
        self.tag_offset = tag_offset
        self.buckets_reduced = 0
        self._worker: Optional[concurrent.futures.ThreadPoolExecutor] = None
        if asynchronous:
            self._worker = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="spccl-ddp-hook")

    def tag(self, bucket_index: int) -> int:
        return self.tag_offset + bucket_index + 1

    def stats(self, bucket_index: int) -> Any:
        """spccl's planner record (:class:`spccl.SparseStats`) for one bucket."""
        return self.comm.sparse_stats(self.tag(bucket_index))

    def close(self) -> None:
        """Stops the worker thread (pending buckets finish first)."""
        if self._worker is not None:
            self._worker.shutdown(wait=True)
            self._worker = None

    # The executor cannot be pickled; DDP pickles hook states only when
    # asked to (e.g. torch.save of the module), and then a fresh one is made.
    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state["_worker"] = None
        return state


def _reduce_bucket(state: SparseAllReduceState, index: int, tensor: torch.Tensor,
                   future: torch.futures.Future) -> None:
    try:
        # DDP's default divides each gradient by the world size and then
        # sums (reducer.cpp, div_factor_); doing the same keeps the two
        # equal up to summation order. Zeros stay zeros, so sparsity holds.
        tensor.div_(state.comm.size)
        state.comm.sparse_all_reduce(tensor, ReduceOp.SUM, out=tensor, tag=state.tag(index),
                                     algorithm=state.algorithm, encoding=state.encoding,
                                     partitioner=state.partitioner)
        state.buckets_reduced += 1
        future.set_result(tensor)
    except BaseException as error:  # noqa: B036 - DDP re-raises it from the future
        future.set_exception(error)


def sparse_allreduce_hook(state: SparseAllReduceState,
                          bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """Averages the bucket over the ranks with spccl's sparse all-reduce, in
    place; the bucket index (+1, + ``state.tag_offset``) is the profiling tag."""
    tensor = bucket.buffer()
    future: torch.futures.Future = torch.futures.Future()
    if state._worker is None:
        _reduce_bucket(state, bucket.index(), tensor, future)
    else:
        state._worker.submit(_reduce_bucket, state, bucket.index(), tensor, future)
    return future
