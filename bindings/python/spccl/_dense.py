"""The dense collectives of :class:`spccl.Comm` on numpy arrays and torch tensors.

Each takes its input as ``x``, returns the result in a new array of x's kind
and dtype, or writes ``out=`` when given (``out=x`` works in place). Every
call blocks until this rank's part is done and releases the GIL meanwhile.
"""
from __future__ import annotations

from typing import Any, Optional

from . import _group
from ._buffers import as_buffer, leading_blocks, output
from ._enums import ReduceOp, reduce_op


class DenseCollectives:
    """Mixin of :class:`spccl.Comm`; ``_handle`` is the ``_spccl.CommHandle``."""

    _handle: Any

    @property
    def size(self) -> int:
        return self._handle.size()

    def all_reduce(self, x: Any, op: ReduceOp | str = ReduceOp.SUM, *, out: Any = None) -> Any:
        """Element-wise reduction of x over all ranks; every rank gets the result."""
        send = as_buffer(x, "x")
        recv = output(out, send, send.count, x.shape)
        self._handle.all_reduce(send.address, recv.address, send.count, send.dtype, reduce_op(op))
        return recv.obj

    def broadcast(self, x: Any, root: int = 0, *, out: Any = None) -> Any:
        """Rank root's x on every rank. Other ranks' x only gives shape and dtype."""
        send = as_buffer(x, "x")
        recv = output(out, send, send.count, x.shape)
        self._handle.broadcast(send.address, recv.address, send.count, send.dtype, root)
        return recv.obj

    def reduce(self, x: Any, root: int = 0, op: ReduceOp | str = ReduceOp.SUM, *,
               out: Any = None) -> Optional[Any]:
        """Like all_reduce, but only rank root gets the result (others get ``out``, default None)."""
        send = as_buffer(x, "x")
        if self._handle.rank() == root:
            recv = output(out, send, send.count, x.shape)
            address, result = recv.address, recv.obj
        else:
            address, result = 0, out
        self._handle.reduce(send.address, address, send.count, send.dtype, reduce_op(op), root)
        return result

    def all_gather(self, x: Any, *, out: Any = None) -> Any:
        """Every rank's x, stacked: result[r] is rank r's (shape ``(size, *x.shape)``)."""
        send = as_buffer(x, "x")
        size = self.size
        recv = output(out, send, send.count * size, (size, *x.shape))
        self._handle.all_gather(send.address, recv.address, send.count, send.dtype)
        return recv.obj

    def reduce_scatter(self, x: Any, op: ReduceOp | str = ReduceOp.SUM, *, out: Any = None) -> Any:
        """Reduces x over all ranks and gives rank r block r of the first dimension
        (x.shape[0] must be a multiple of size; result shape ``(x.shape[0] // size, ...)``)."""
        send = as_buffer(x, "x")
        size = self.size
        per_rank = leading_blocks(send, size, "x")
        recv = output(out, send, per_rank, (x.shape[0] // size, *x.shape[1:]))
        self._handle.reduce_scatter(send.address, recv.address, per_rank, send.dtype, reduce_op(op))
        return recv.obj

    def all_to_all(self, x: Any, *, out: Any = None) -> Any:
        """Block r of x's first dimension goes to rank r; result block r came from rank r."""
        send = as_buffer(x, "x")
        per_rank = leading_blocks(send, self.size, "x")
        recv = output(out, send, send.count, x.shape)
        self._handle.all_to_all(send.address, recv.address, per_rank, send.dtype)
        return recv.obj

    def barrier(self) -> None:
        """Returns once every rank has called it."""
        self._handle.barrier()

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
