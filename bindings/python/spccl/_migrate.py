"""The load-balancing collectives (docs/algorithms.md 4; docs/migration.md) of
:class:`spccl.Comm`.

SEMI-migration (section IV): a straggler of a tensor-parallel
group sheds some of its columns to the other ranks (the helpers)::

    x = comm.migrate_broadcast(x, straggler)        # the shed inputs, to every helper
    cols = comm.migrate_slice(straggler, total)     # the columns this rank computes
    partial = ...                                   # computed, zero outside cols
    result = comm.migrate_reduce(partial, straggler)  # back to the straggler

or, when the layer ends in an all-reduce anyway, the results ride along
inside it (:meth:`MigrationCollectives.migrate_all_reduce`). Scatter and
gather (MPI semantics) are the alternative to compare against. Ranks that
disagree on a call's kind, count, dtype, op or straggler fail with
:class:`spccl.InvalidUsageError` naming the differing rank (a straggler,
dest or root disagreement on every rank, before any data moves).
"""
from __future__ import annotations

from typing import Any, Optional

from ._buffers import as_buffer, leading_blocks, output
from ._compressed import _int_argument
from ._enums import ReduceOp, reduce_op
from ._errors import InvalidArgumentError
from ._planners import BalanceCostModel, BalancePlan, balance_plan_from_fields


class MigrationCollectives:
    """Mixin of :class:`spccl.Comm`; ``_handle`` is the ``_spccl.CommHandle``."""

    _handle: Any

    def migrate_broadcast(self, x: Any, straggler: int) -> Any:
        """Rank straggler's x into x on every rank, in place; returns x.

        Along a pipelined chain rooted at the straggler in which the helpers
        relay, so the (already slow) straggler sends each byte once whatever
        the number of ranks. Other ranks' x gives the element count and
        dtype and is overwritten."""
        buf = as_buffer(x, "x", writable=True)
        root = _int_argument(straggler, "straggler")
        self._handle.migrate_broadcast(buf.address, buf.count, buf.dtype, root)
        return x

    def migrate_slice(self, straggler: int, total: int) -> slice:
        """The columns of the straggler's ``total`` migrated columns that this
        rank computes, as ``slice(begin, begin + length)``. Helper r' = (rank
        + size − straggler) mod size takes block r' − 1 of total cut into
        size − 1 nearly equal blocks (the first ``total mod (size − 1)`` one
        column more), so every column is computed exactly once; the
        straggler gets an empty slice. Local: no messages."""
        begin, length = self._handle.migrate_slice(_int_argument(straggler, "straggler"),
                                                   _non_negative(total, "total"))
        return slice(begin, begin + length)

    def migrate_reduce(self, x: Any, dest: int, op: ReduceOp | str = ReduceOp.SUM, *,
                       out: Any = None) -> Optional[Any]:
        """Reduction of every rank's x at rank dest (the straggler collecting
        its migrated results: helpers pass theirs placed at their slice and
        zero elsewhere; dest's own x takes part). Along a chain towards dest,
        which receives each byte once. dest gets the result (like x, or in
        ``out``; ``out=x`` works in place); the other ranks get ``out``
        (default None)."""
        send = as_buffer(x, "x")
        root = _int_argument(dest, "dest")
        if self._handle.rank() == root:
            recv = output(out, send, send.count, x.shape)
            address, result = recv.address, recv.obj
        else:
            address, result = 0, out
        self._handle.migrate_reduce(send.address, address, send.count, send.dtype, reduce_op(op),
                                    root)
        return result

    def migrate_all_reduce(self, x: Any, migrated: Any = None, offset: int = 0,
                           op: ReduceOp | str = ReduceOp.SUM, *, out: Any = None) -> Any:
        """Reduce merging (section IV-A): the all-reduce of every rank's
        contribution, where a rank's contribution is x with its migrated
        partial result folded in by op at flat elements
        ``[offset, offset + migrated.size)``. One collective; the fold is
        part of the pass that copies x to the result. migrated (x's dtype,
        any shape, read flat) may differ in size between ranks; None (the
        straggler, or a rank with nothing migrated) folds nothing. x's size
        must be the same on every rank. Result like x (``out=`` accepted)."""
        send = as_buffer(x, "x")
        start = _non_negative(offset, "offset")
        if migrated is None:
            part_address, part_count = 0, 0
        else:
            part = as_buffer(migrated, "migrated")
            if part.dtype != send.dtype:
                raise InvalidArgumentError(f"migrated: dtype {migrated.dtype} differs from x's "
                                           f"{x.dtype}", 3)
            part_address, part_count = part.address, part.count
        if start + part_count > send.count:
            raise InvalidArgumentError(f"offset: {start} + migrated's {part_count} elements "
                                       f"exceed x's {send.count}", 3)
        recv = output(out, send, send.count, x.shape)
        self._handle.migrate_all_reduce(send.address, recv.address, send.count, part_address,
                                        part_count, start, send.dtype, reduce_op(op))
        return recv.obj

    def scatter(self, x: Any, root: int = 0, *, out: Any = None) -> Any:
        """Block r of root's x (first dimension split in size equal blocks)
        to rank r: result shape ``(x.shape[0] // size, *x.shape[1:])``. The
        root sends every block itself (no relaying). Other ranks' x gives
        only shape and dtype."""
        send = as_buffer(x, "x")
        source = _int_argument(root, "root")
        per_rank = leading_blocks(send, self._handle.size(), "x")
        recv = output(out, send, per_rank, (x.shape[0] // self._handle.size(), *x.shape[1:]))
        self._handle.scatter(send.address, recv.address, per_rank, send.dtype, source)
        return recv.obj

    def gather(self, x: Any, root: int = 0, *, out: Any = None) -> Optional[Any]:
        """Every rank's x at root, stacked: result[r] is rank r's (shape
        ``(size, *x.shape)``); each rank sends its x to the root directly.
        Other ranks get ``out`` (default None)."""
        send = as_buffer(x, "x")
        dest = _int_argument(root, "root")
        size = self._handle.size()
        if self._handle.rank() == dest:
            recv = output(out, send, send.count * size, (size, *x.shape))
            address, result = recv.address, recv.obj
        else:
            address, result = 0, out
        self._handle.gather(send.address, address, send.count, send.dtype, dest)
        return result

    def balance_plan(self, iter_time: float, matmul_time: float, columns: int,
                     cost_model: Optional[BalanceCostModel] = None) -> BalancePlan:
        """Collective: SEMI-migration's planner (Eq. (1)-(3),
        Algorithm 2; docs/migration.md). Every rank passes its iteration
        time T_i, the matmul part of it M_i and its column count L_i; all
        are gathered and every rank returns the same :class:`spccl.BalancePlan`
        (who keeps, migrates or resizes how many columns). Bad values on any
        rank (NaN, negative, matmul_time > iter_time, columns 0) fail every
        rank with :class:`spccl.InvalidArgumentError` naming that rank;
        ranks passing different cost models fail with
        :class:`spccl.InvalidUsageError`. cost_model: None for the default
        (5 % straggler tolerance, zero costs, helpers' measured speed)."""
        if cost_model is not None and not isinstance(cost_model, BalanceCostModel):
            raise InvalidArgumentError(f"cost_model: expected spccl.BalanceCostModel, got "
                                       f"{type(cost_model).__name__}", 3)
        fields = None if cost_model is None else cost_model.fields()
        return balance_plan_from_fields(self._handle.balance_plan(
            _float(iter_time, "iter_time"), _float(matmul_time, "matmul_time"),
            _non_negative(columns, "columns"), fields))


def _non_negative(value: Any, name: str) -> int:
    number = _int_argument(value, name)
    if number < 0:
        raise InvalidArgumentError(f"{name}: {number} is negative", 3)
    return number


def _float(value: Any, name: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{name}: expected a number, got {type(value).__name__}",
                                   3) from None
