"""DDP communication hooks on spccl (``DistributedDataParallel.register_comm_hook``).

``sparse_allreduce_hook``: each gradient bucket goes through spccl's sparse
all-reduce, so the all-zero rows of an ``nn.Embedding``'s dense gradient
never travel. The result is the same average DDP's default all-reduce
computes (lossless; equal up to float summation order)::

    comm = spccl.Comm.from_env()
    state = spccl.torch.hooks.SparseAllReduceState(comm)
    ddp.register_comm_hook(state, spccl.torch.hooks.sparse_allreduce_hook)

``compressed_allreduce_hook``: each bucket goes through spccl's compressed
all-reduce (quantized to a few bits per element; lossy, with a stated
error bound), with a per-bucket error-feedback residual in the state::

    state = spccl.torch.hooks.CompressedAllReduceState(comm, bits=4)
    ddp.register_comm_hook(state, spccl.torch.hooks.compressed_allreduce_hook)
"""
# No `from __future__ import annotations`: DDP's register_comm_hook compares
# the hook's annotations with dist.GradBucket and Future[Tensor] as objects.
from typing import Any, Dict, Optional, Union, cast

import torch
import torch.distributed as dist

from .._comm import Comm
from .._compressed import DEFAULT_BLOCK_SIZE, Compression
from .._enums import (Codec, CompressSchedule, ReduceOp, SparseAlgorithm, SparseEncoding,
                      SparsePartitioner)
from ._hook_state import HookState


class SparseAllReduceState(HookState):
    """What :func:`sparse_allreduce_hook` needs across calls.

    comm, asynchronous: see :class:`HookState` (give the hook a
      communicator of its own, e.g. ``comm.split(0)``).
    algorithm, encoding, partitioner: override spccl's planner.
    tag_offset: the profiling tag of bucket i is ``tag_offset + i + 1``
      (tag 0 means "keyed by size" in spccl), so each bucket's density
      history stays its own — see :meth:`stats`.
    """

    def __init__(self, comm: Comm, *, asynchronous: bool = True,
                 algorithm: SparseAlgorithm = SparseAlgorithm.AUTO,
                 encoding: SparseEncoding = SparseEncoding.AUTO,
                 partitioner: SparsePartitioner = SparsePartitioner.AUTO,
                 tag_offset: int = 0) -> None:
        super().__init__(comm, asynchronous)
        self.algorithm = algorithm
        self.encoding = encoding
        self.partitioner = partitioner
        self.tag_offset = tag_offset

    def tag(self, bucket_index: int) -> int:
        return self.tag_offset + bucket_index + 1

    def stats(self, bucket_index: int) -> Any:
        """spccl's planner record (:class:`spccl.SparseStats`) for one bucket."""
        return self.comm.sparse_stats(self.tag(bucket_index))

    def reduce_bucket(self, index: int, tensor: torch.Tensor) -> None:
        # DDP's default divides each gradient by the world size and then
        # sums (reducer.cpp, div_factor_); doing the same keeps the two
        # equal up to summation order. Zeros stay zeros, so sparsity holds.
        tensor.div_(self.comm.size)
        self.comm.sparse_all_reduce(tensor, ReduceOp.SUM, out=tensor, tag=self.tag(index),
                                    algorithm=self.algorithm, encoding=self.encoding,
                                    partitioner=self.partitioner)


def sparse_allreduce_hook(state: SparseAllReduceState,
                          bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """Averages the bucket over the ranks with spccl's sparse all-reduce, in
    place; the bucket index (+1, + ``state.tag_offset``) is the profiling tag."""
    return state.run(bucket)


class CompressedAllReduceState(HookState):
    """What :func:`compressed_allreduce_hook` needs across calls.

    comm, asynchronous: see :class:`HookState` (give the hook a
      communicator of its own, e.g. ``comm.split(0)``).
    codec, bits, block_size, schedule: the quantization
      (:class:`spccl.Compression`; default piecewise, 4 bits, 256-element
      blocks, two-shot), the same on every rank; kept as ``compression``.
    error_feedback: keep, per bucket, a float32 residual of the bucket's
      size (:meth:`residual`) that each call adds to the gradient before
      quantizing and refills with what the quantizations lost, so the
      error does not accumulate over steps. A residual whose bucket
      changed size (DDP rebuilds its buckets after the first iteration)
      starts again from zeros.
    """

    def __init__(self, comm: Comm, *, asynchronous: bool = True,
                 codec: Union[Codec, str] = Codec.PIECEWISE, bits: int = 4,
                 block_size: int = DEFAULT_BLOCK_SIZE,
                 schedule: Union[CompressSchedule, str] = CompressSchedule.TWO_SHOT,
                 error_feedback: bool = True) -> None:
        # Compression takes names too (its __post_init__ converts them); validates first.
        self.compression = Compression(cast(Codec, codec), bits, block_size,
                                       cast(CompressSchedule, schedule))
        super().__init__(comm, asynchronous)
        self.error_feedback = bool(error_feedback)
        self.residuals: Dict[int, torch.Tensor] = {}

    def residual(self, bucket_index: int) -> Optional[torch.Tensor]:
        """Bucket bucket_index's error-feedback residual (None before its first
        call or without error feedback)."""
        return self.residuals.get(bucket_index)

    def _residual_for(self, index: int, tensor: torch.Tensor) -> torch.Tensor:
        residual = self.residuals.get(index)
        if residual is None or residual.numel() != tensor.numel():
            residual = torch.zeros(tensor.numel(), dtype=torch.float32)
            self.residuals[index] = residual
        return residual

    def reduce_bucket(self, index: int, tensor: torch.Tensor) -> None:
        residual = self._residual_for(index, tensor) if self.error_feedback else None
        self.comm.compressed_all_reduce(tensor, ReduceOp.AVG, out=tensor,
                                        compression=self.compression, residual=residual)


def compressed_allreduce_hook(state: CompressedAllReduceState,
                              bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """Averages the bucket over the ranks with spccl's compressed all-reduce
    (op AVG, in place; float32, float16 or bfloat16 gradients).

    Lossy, within the bound of docs/compressed.md. Each block of
    ``block_size`` elements travels as its scale m = max |value| and a
    ``bits``-bit code per element; one quantization is off by at most h·m,
    with N = bits − 1 and h = 1/(2N) (piecewise; 1/6 at 4 bits) or
    1/(2(2^N − 1)) (linear; 1/14 at 4 bits). For an element of block b,
    with A_b the sum over ranks of each rank's block scale (of gradient +
    residual with error feedback), the averaged gradient is off the exact
    average by at most

    - two-shot: h·(2 + h)·A_b / n  (≈ 0.36·A_b / n at 4-bit piecewise),
    - ring: ((1 + h)^n − 1)·A_b / n,

    plus float32 rounding. As A_b / n ≤ the largest block scale of any
    rank, no element is off by more than h·(2 + h) (two-shot) times the
    largest |gradient| (gradient + residual) on any rank. With error
    feedback what one step's quantizations lose is added to the next
    step's gradient, so the error summed over T steps stays bounded
    instead of growing with T (docs/compressed.md, "Error feedback").
    """
    return state.run(bucket)
