"""Sparse all-reduce (Zen; docs/algorithms.md 2) for :class:`spccl.Comm`.

Lossless: the result equals the dense all-reduce (exactly for integers, up
to reassociation for floats) and is bitwise identical on every rank; only
non-zeros travel. Ops: SUM and AVG. ``tag`` keys the planner's profile of
the call site (e.g. a DDP bucket index), ``algorithm`` / ``encoding`` /
``partitioner`` override the planner.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Tuple

import numpy as np

from . import _coo
from ._buffers import as_buffer, copy_of, is_sparse_coo_tensor, is_tensor, new_like, output
from ._enums import ReduceOp, SparseAlgorithm, SparseEncoding, SparsePartitioner, reduce_op
from ._errors import InvalidArgumentError

_INDEX_TYPES = {np.dtype(np.uint32): 0, np.dtype(np.int32): 0,  # spcclIndexType_t
                np.dtype(np.uint64): 1, np.dtype(np.int64): 1}


@dataclass(frozen=True)
class SparseStats:
    """What the planner saw and did for one tag on this rank (``spcclSparseStats_t``)."""

    calls: int
    algorithm: SparseAlgorithm  # chosen for the last call
    reason: str
    predicted_seconds: List[float]  # per SparseAlgorithm; < 0: not a candidate
    density: float
    gamma: float
    push_imbalance: float
    pull_imbalance: float
    bytes_sent: int
    bytes_received: int
    predicted_bytes_sent: int
    measured_seconds: float


def _options(algorithm: SparseAlgorithm | int, tag: int, encoding: SparseEncoding | int,
             partitioner: SparsePartitioner | int) -> Tuple[int, int, int, int]:
    if tag < 0:
        raise InvalidArgumentError(f"tag must be >= 0, got {tag}", 3)
    return int(algorithm), int(tag), int(encoding), int(partitioner)


def _index_buffer(indices: Any, nnz: int, name: str) -> Tuple[Any, int]:
    buf = as_buffer(indices, name)
    kind = np.dtype(str(indices.dtype).replace("torch.", "")) if is_tensor(indices) else indices.dtype
    if kind not in _INDEX_TYPES:
        raise InvalidArgumentError(f"{name}: dtype {indices.dtype} is not an index type "
                                   "(int32, uint32, int64, uint64)", 3)
    if buf.count != nnz:
        raise InvalidArgumentError(f"{name}: has {buf.count} elements but values has {nnz}", 3)
    return buf, _INDEX_TYPES[kind]


class SparseCollectives:
    """Mixin of :class:`spccl.Comm`; ``_handle`` is the ``_spccl.CommHandle``."""

    _handle: Any

    def sparse_all_reduce(self, x: Any, op: ReduceOp | str = ReduceOp.SUM, *, out: Any = None,
                          tag: int = 0, algorithm: SparseAlgorithm | int = SparseAlgorithm.AUTO,
                          encoding: SparseEncoding | int = SparseEncoding.AUTO,
                          partitioner: SparsePartitioner | int = SparsePartitioner.AUTO) -> Any:
        """All-reduce of a mostly-zero x, sending only its non-zeros.

        x dense (numpy array or strided tensor): the result is dense, like x
        (``out=`` accepted). x a torch sparse COO tensor: the result is a
        coalesced COO tensor of the same shape and layout."""
        options = _options(algorithm, tag, encoding, partitioner)
        if is_sparse_coo_tensor(x):
            if out is not None:
                raise InvalidArgumentError("out: not accepted for a sparse COO input "
                                           "(the result's size is known only afterwards)", 3)
            flat, values, count = _coo.flatten(x)
            result_indices, result_values = self.sparse_all_reduce_coo_to_coo(
                flat, values, count, op, tag=options[1], algorithm=options[0],
                encoding=options[2], partitioner=options[3])
            return _coo.unflatten(result_indices, result_values, x)
        send = as_buffer(x, "x")
        recv = output(out, send, send.count, x.shape)
        self._handle.sparse_all_reduce(send.address, recv.address, send.count, send.dtype,
                                       reduce_op(op), *options)
        return recv.obj

    def sparse_all_reduce_coo(self, indices: Any, values: Any, count: int,
                              op: ReduceOp | str = ReduceOp.SUM, *, out: Any = None, tag: int = 0,
                              algorithm: SparseAlgorithm | int = SparseAlgorithm.AUTO,
                              encoding: SparseEncoding | int = SparseEncoding.AUTO,
                              partitioner: SparsePartitioner | int = SparsePartitioner.AUTO) -> Any:
        """COO in (1-D indices, any order, duplicates summed, each < count; 1-D values),
        dense out: a vector of count elements of values' dtype and kind."""
        options = _options(algorithm, tag, encoding, partitioner)
        vals = as_buffer(values, "values")
        idx, index_type = _index_buffer(indices, vals.count, "indices")
        recv = output(out, vals, count, (count,))
        self._handle.sparse_all_reduce_coo(idx.address, index_type, vals.address, vals.count,
                                           count, vals.dtype, reduce_op(op), recv.address, *options)
        return recv.obj

    def sparse_all_reduce_coo_to_coo(
            self, indices: Any, values: Any, count: int, op: ReduceOp | str = ReduceOp.SUM, *,
            tag: int = 0, algorithm: SparseAlgorithm | int = SparseAlgorithm.AUTO,
            encoding: SparseEncoding | int = SparseEncoding.AUTO,
            partitioner: SparsePartitioner | int = SparsePartitioner.AUTO) -> Tuple[Any, Any]:
        """COO in, COO out: ``(indices, values)`` of the result, indices ascending,
        of the inputs' kinds and dtypes."""
        options = _options(algorithm, tag, encoding, partitioner)
        vals = as_buffer(values, "values")
        idx, index_type = _index_buffer(indices, vals.count, "indices")
        # Room for a dense result: the same capacity on every rank (spccl
        # fails all ranks alike only then), and no retry. The arrays stay
        # virtual memory beyond the nnz entries written; the result is
        # copied out of them.
        out_indices = new_like(indices, (count,))  # spccl writes the input's index type
        out_values = new_like(values, (count,))
        oi, ov = as_buffer(out_indices, "out_indices"), as_buffer(out_values, "out_values")
        nnz = self._handle.sparse_all_reduce_coo_to_coo(
            idx.address, index_type, vals.address, vals.count, count, vals.dtype, reduce_op(op),
            oi.address, ov.address, count, *options)
        return copy_of(out_indices[:nnz]), copy_of(out_values[:nnz])

    def sparse_stats(self, tag: int = 0) -> SparseStats:
        """The planner's record for tag on this rank (``spcclSparseGetStats``)."""
        raw = self._handle.sparse_stats(tag)
        raw["algorithm"] = SparseAlgorithm(raw["algorithm"])
        return SparseStats(**raw)
