"""The dense collectives of :class:`spccl.Comm` on numpy arrays and torch tensors.

Each takes its input as ``x``, returns the result in a new array of x's kind
and dtype, or writes ``out=`` when given (``out=x`` works in place). Every
call blocks until this rank's part is done and releases the GIL meanwhile;
with ``async_op=True`` the collectives that have a non-blocking form return
a :class:`spccl.Work` at once instead (its ``wait()`` returns the result).
"""
from __future__ import annotations

import itertools
import operator
from typing import Any, List, Optional, Sequence

import numpy as np

from . import _group
from ._buffers import as_buffer, leading_blocks, output
from ._enums import ReduceOp, reduce_op
from ._errors import InvalidArgumentError
from ._work import Work, dispatch


def _splits(splits: Any, size: int, name: str) -> List[int]:
    """A list of size non-negative ints (rows per rank)."""
    try:
        values = [operator.index(v) for v in splits]
    except TypeError:
        raise InvalidArgumentError(f"{name}: expected a sequence of {size} ints", 3) from None
    if len(values) != size:
        raise InvalidArgumentError(f"{name}: has {len(values)} entries, the communicator has "
                                   f"{size} ranks", 3)
    negative = [v for v in values if v < 0]
    if negative:
        raise InvalidArgumentError(f"{name}: {negative[0]} is negative", 3)
    return values


def _displacements(counts: Sequence[int]) -> List[int]:
    return [0, *itertools.accumulate(counts[:-1])]


class DenseCollectives:
    """Mixin of :class:`spccl.Comm`; ``_handle`` is the ``_spccl.CommHandle``."""

    _handle: Any

    @property
    def size(self) -> int:
        return self._handle.size()

    def all_reduce(self, x: Any, op: ReduceOp | str = ReduceOp.SUM, *, out: Any = None,
                   async_op: bool = False) -> Any:
        """Element-wise reduction of x over all ranks; every rank gets the result."""
        send = as_buffer(x, "x")
        recv = output(out, send, send.count, x.shape)
        return dispatch(self._handle.all_reduce, self._handle.iall_reduce,
                        (send.address, recv.address, send.count, send.dtype, reduce_op(op)),
                        (send.obj, recv.obj), recv.obj, async_op)

    def broadcast(self, x: Any, root: int = 0, *, out: Any = None, async_op: bool = False) -> Any:
        """Rank root's x on every rank. Other ranks' x only gives shape and dtype."""
        send = as_buffer(x, "x")
        recv = output(out, send, send.count, x.shape)
        return dispatch(self._handle.broadcast, self._handle.ibroadcast,
                        (send.address, recv.address, send.count, send.dtype, root),
                        (send.obj, recv.obj), recv.obj, async_op)

    def reduce(self, x: Any, root: int = 0, op: ReduceOp | str = ReduceOp.SUM, *,
               out: Any = None, async_op: bool = False) -> Optional[Any]:
        """Like all_reduce, but only rank root gets the result (others get ``out``, default None)."""
        send = as_buffer(x, "x")
        if self._handle.rank() == root:
            recv = output(out, send, send.count, x.shape)
            address, result = recv.address, recv.obj
        else:
            address, result = 0, out
        return dispatch(self._handle.reduce, self._handle.ireduce,
                        (send.address, address, send.count, send.dtype, reduce_op(op), root),
                        (send.obj, result), result, async_op)

    def all_gather(self, x: Any, *, out: Any = None, async_op: bool = False) -> Any:
        """Every rank's x, stacked: result[r] is rank r's (shape ``(size, *x.shape)``)."""
        send = as_buffer(x, "x")
        size = self.size
        recv = output(out, send, send.count * size, (size, *x.shape))
        return dispatch(self._handle.all_gather, self._handle.iall_gather,
                        (send.address, recv.address, send.count, send.dtype),
                        (send.obj, recv.obj), recv.obj, async_op)

    def reduce_scatter(self, x: Any, op: ReduceOp | str = ReduceOp.SUM, *, out: Any = None,
                       async_op: bool = False) -> Any:
        """Reduces x over all ranks and gives rank r block r of the first dimension
        (x.shape[0] must be a multiple of size; result shape ``(x.shape[0] // size, ...)``)."""
        send = as_buffer(x, "x")
        size = self.size
        per_rank = leading_blocks(send, size, "x")
        recv = output(out, send, per_rank, (x.shape[0] // size, *x.shape[1:]))
        return dispatch(self._handle.reduce_scatter, self._handle.ireduce_scatter,
                        (send.address, recv.address, per_rank, send.dtype, reduce_op(op)),
                        (send.obj, recv.obj), recv.obj, async_op)

    def all_to_all(self, x: Any, *, out: Any = None, async_op: bool = False) -> Any:
        """Block r of x's first dimension goes to rank r; result block r came from rank r."""
        send = as_buffer(x, "x")
        per_rank = leading_blocks(send, self.size, "x")
        recv = output(out, send, send.count, x.shape)
        return dispatch(self._handle.all_to_all, self._handle.iall_to_all,
                        (send.address, recv.address, per_rank, send.dtype),
                        (send.obj, recv.obj), recv.obj, async_op)

    def all_to_all_v(self, x: Any, send_splits: Sequence[int],
                     recv_splits: Optional[Sequence[int]] = None, *, out: Any = None) -> Any:
        """All-to-all with uneven blocks (spcclAllToAllv): the first
        send_splits[r] rows of x (its first dimension) go to rank r, the next
        send_splits[r + 1] to rank r + 1, ...; the result stacks
        recv_splits[r] rows from each rank r in rank order (shape
        ``(sum(recv_splits), *x.shape[1:])``). Zeros are allowed.

        recv_splits: what the others send this rank, rank r's
          send_splits[this rank]; None exchanges the splits first (one more,
          small all-to-all). Every rank passes it or none does. Blocking
          (the C API has no non-blocking AllToAllv)."""
        send = as_buffer(x, "x")
        size = self.size
        shape = tuple(x.shape)
        if len(shape) == 0:
            raise InvalidArgumentError("x: a 0-d array has no rows to split", 3)
        row = int(np.prod(shape[1:], dtype=np.int64))
        sends = _splits(send_splits, size, "send_splits")
        if sum(sends) != shape[0]:
            raise InvalidArgumentError(f"send_splits: sums to {sum(sends)} rows, x has "
                                       f"{shape[0]}", 3)
        if recv_splits is None:
            recvs = [int(v) for v in self.all_to_all(np.asarray(sends, dtype=np.int64))]
        else:
            recvs = _splits(recv_splits, size, "recv_splits")
        recv = output(out, send, sum(recvs) * row, (sum(recvs), *shape[1:]))
        send_counts = [s * row for s in sends]
        recv_counts = [r * row for r in recvs]
        self._handle.all_to_all_v(send.address, send_counts, _displacements(send_counts),
                                  recv.address, recv_counts, _displacements(recv_counts),
                                  send.dtype)
        return recv.obj

    def barrier(self, *, async_op: bool = False) -> Any:
        """Returns once every rank has called it (async_op: a :class:`spccl.Work`)."""
        if async_op:
            return Work(self._handle.ibarrier(), None)
        self._handle.barrier()
        return None

    def send(self, x: Any, peer: int) -> None:
        """Sends x to rank peer, which calls recv with as many elements of the same dtype.

        Outside :func:`spccl.group` it completes before returning."""
        buf = as_buffer(x, "x")
        _group.keep_alive(buf)
        self._handle.send(buf.address, buf.count, buf.dtype, peer)

    def recv(self, out: Any, peer: int) -> Any:
        """Receives into out (written in place; returned) what rank peer sent."""
        buf = as_buffer(out, "out", writable=True)
        _group.keep_alive(buf)
        self._handle.recv(buf.address, buf.count, buf.dtype, peer)
        return out
