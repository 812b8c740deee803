"""Token-level top-k all-reduce (AccTFM section 4.3.1; docs/compressed.md)
for :class:`spccl.Comm`.

In a tensor-parallel layer only the significant tokens' rows of a
``[tokens, hidden]`` partial sum are all-reduced; no indices travel, since
every rank derives the same mask: the scores are summed over ranks in rank
order and the ``keep`` tokens with the highest sums are kept (ties and NaN:
lower token index first, NaN below every number). The kept rows are
all-reduced with ``compression`` (the compressed all-reduce's bound, over
the packed kept rows) or exactly when it is None; pruned rows follow
``prune`` (:class:`spccl.PrunePolicy`, a local choice).
"""
from __future__ import annotations

import operator
from typing import Any, Optional, Tuple

import numpy as np

from ._buffers import Buffer, as_buffer, is_tensor, new_like
from ._compressed import (Compression, compressible_buffer, compression_fields,
                          compression_or_default, residual_address)
from ._enums import PrunePolicy, ReduceOp, enum_value, reduce_op
from ._errors import InvalidArgumentError
from ._work import dispatch

_FLOAT32, _UINT8 = 7, 1  # spcclDataType_t


def _rows(x: Any) -> Tuple[Buffer, int, int]:
    buf = compressible_buffer(x, "x", writable=True)  # reduced in place
    if len(x.shape) != 2:
        raise InvalidArgumentError(f"x: must be 2-D [tokens, hidden], got shape {tuple(x.shape)}",
                                   3)
    return buf, int(x.shape[0]), int(x.shape[1])


def _per_token(v: Any, tokens: int, dtype: int, dtype_text: str, name: str) -> Buffer:
    buf = as_buffer(v, name)
    if buf.dtype != dtype:
        raise InvalidArgumentError(f"{name}: dtype {v.dtype} is not {dtype_text}", 3)
    if buf.count != tokens:
        raise InvalidArgumentError(f"{name}: has {buf.count} elements, x has {tokens} tokens", 3)
    return buf


def _bytes_of_mask(mask: Any) -> Any:
    """A bool mask seen as its bytes (spccl reads one byte per token)."""
    if is_tensor(mask) and str(mask.dtype) == "torch.bool":
        import torch
        return mask.view(torch.uint8)
    if isinstance(mask, np.ndarray) and mask.dtype == np.bool_:
        return mask.view(np.uint8)
    return mask


def _cfg(compression: Optional[Compression], residual: Any, count: int) -> Tuple[Any, ...]:
    """(compressed, codec, bits, block_size, schedule, residual address)."""
    if compression is None:
        if residual is not None:
            raise InvalidArgumentError("residual: error feedback needs compression= (without it "
                                       "the kept rows are all-reduced exactly)", 3)
        return (False, *compression_fields(Compression(), 0))
    config = compression_or_default(compression)
    return (True, *compression_fields(config, residual_address(residual, count)))


class TokenTopkCollectives:
    """Mixin of :class:`spccl.Comm`; ``_handle`` is the ``_spccl.CommHandle``."""

    _handle: Any

    def token_topk_all_reduce(self, x: Any, scores: Any, keep: int,
                              op: ReduceOp | str = ReduceOp.SUM, *,
                              compression: Optional[Compression] = None,
                              prune: PrunePolicy | str = PrunePolicy.ZERO,
                              residual: Any = None, async_op: bool = False) -> Any:
        """All-reduces, in place, the rows of x ([tokens, hidden]; float32,
        float16, bfloat16) of the keep tokens with the highest scores summed
        over ranks; returns the mask (bool, tokens elements, x's kind; True =
        kept) to pass to :meth:`token_mask_all_reduce` in the backward pass.

        scores: this rank's float32 importance of each token.
        compression: a :class:`spccl.Compression` for the kept rows; None:
          exact (dense all-reduce).
        residual: error feedback (with compression only), tokens·hidden
          float32 in x's layout; pruned rows' residuals are left as they are.
        async_op: return a :class:`spccl.Work` at once (spcclItokenTopkAllReduce)
          whose ``wait()`` returns the mask."""
        buf, tokens, hidden = _rows(x)
        score_buf = _per_token(scores, tokens, _FLOAT32, "float32", "scores")
        try:
            kept = operator.index(keep)
        except TypeError:
            raise InvalidArgumentError(f"keep: expected an int, got {type(keep).__name__}",
                                       3) from None
        if kept < 0:
            raise InvalidArgumentError(f"keep: {kept} is negative", 3)
        cfg = _cfg(compression, residual, buf.count)
        mask = new_like(x, (tokens,))
        mask = mask.bool() if is_tensor(mask) else mask.astype(np.bool_)
        mask_buf = as_buffer(_bytes_of_mask(mask), "mask", writable=True)
        return dispatch(self._handle.token_topk_all_reduce, self._handle.itoken_topk_all_reduce,
                        (buf.address, score_buf.address, tokens, hidden, buf.dtype, reduce_op(op),
                         kept, *cfg, int(enum_value(PrunePolicy, prune, "prune")),
                         mask_buf.address), (x, scores, residual, mask_buf.obj), mask, async_op)

    def token_mask_all_reduce(self, x: Any, mask: Any, op: ReduceOp | str = ReduceOp.SUM, *,
                              compression: Optional[Compression] = None,
                              prune: PrunePolicy | str = PrunePolicy.ZERO,
                              residual: Any = None, async_op: bool = False) -> Any:
        """All-reduces, in place, the rows of x ([tokens, hidden]) whose mask
        entry is true (bool or uint8, tokens elements, the same on every
        rank — spccl checks); no score exchange. Returns x. compression,
        prune, residual, async_op: as in :meth:`token_topk_all_reduce`
        (``wait()`` returns x)."""
        buf, tokens, hidden = _rows(x)
        mask_buf = _per_token(_bytes_of_mask(mask), tokens, _UINT8, "bool or uint8", "mask")
        cfg = _cfg(compression, residual, buf.count)
        return dispatch(self._handle.token_mask_all_reduce, self._handle.itoken_mask_all_reduce,
                        (buf.address, mask_buf.address, tokens, hidden, buf.dtype, reduce_op(op),
                         *cfg, int(enum_value(PrunePolicy, prune, "prune"))),
                        (x, mask_buf.obj, residual), x, async_op)
