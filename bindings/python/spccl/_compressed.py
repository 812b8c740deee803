"""Compressed all-reduce (AccTFM; docs/algorithms.md 3; docs/compressed.md) for
:class:`spccl.Comm`.

Lossy and opt-in: float32, float16 and bfloat16; ops SUM and AVG. Every
rank gets the same bits. Each block of ``block_size`` elements travels as
one float32 scale m (its max |value|) and a ``bits``-bit code per element,
so one quantization is off by at most h·m per element (h: half the widest
quantizer step as a fraction of m — piecewise 1/(2N), linear
1/(2(2^N − 1)), N = bits − 1). The all-reduce's result, per element of
block b with A_b = the sum over ranks of each rank's block scale, is off
the exact sum by at most

- two-shot: h·(2 + h)·A_b;
- ring: ((1 + h)^n − 1)·A_b on n ranks;
- AVG: the same divided by n;

plus float32 rounding and the output type's rounding.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Optional, Tuple

from ._buffers import Buffer, as_buffer, output
from ._enums import Codec, CompressSchedule, ReduceOp, enum_value, reduce_op
from ._errors import InvalidArgumentError
from ._work import dispatch

_COMPRESSIBLE_TYPES = {6, 7, 9}  # spcclDataType_t: float16, float32, bfloat16
_FLOAT32 = 7
MIN_BITS, MAX_BITS = 2, 8
DEFAULT_BLOCK_SIZE = 256  # SPCCL_COMPRESSION_DEFAULT_BLOCK


def _int_argument(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise InvalidArgumentError(f"{name}: expected an int, got bool", 3)
    try:
        return operator.index(value)
    except TypeError:
        raise InvalidArgumentError(f"{name}: expected an int, got {type(value).__name__}",
                                   3) from None


@dataclass(frozen=True)
class Compression:
    """``spcclCompression``: how the compressed all-reduce quantizes.

    codec: :class:`spccl.Codec` or its name (``"piecewise"``, ``"linear"``).
    bits: total bits per element, sign included, 2..8.
    block_size: elements per scale (default 256).
    schedule: :class:`spccl.CompressSchedule` or its name (``"two_shot"``,
      ``"ring"``).

    Every rank must pass the same values (spccl checks: a mismatch fails
    the call on every rank with :class:`spccl.InvalidUsageError`)."""

    codec: Codec = Codec.PIECEWISE
    bits: int = 4
    block_size: int = DEFAULT_BLOCK_SIZE
    schedule: CompressSchedule = CompressSchedule.TWO_SHOT

    def __post_init__(self) -> None:
        object.__setattr__(self, "codec", enum_value(Codec, self.codec, "codec"))
        object.__setattr__(self, "schedule",
                           enum_value(CompressSchedule, self.schedule, "schedule"))
        bits = _int_argument(self.bits, "bits")
        if not MIN_BITS <= bits <= MAX_BITS:
            raise InvalidArgumentError(f"bits: {bits} is outside {MIN_BITS}..{MAX_BITS} (total "
                                       "bits per element, sign included)", 3)
        block_size = _int_argument(self.block_size, "block_size")
        if block_size < 1:
            raise InvalidArgumentError(f"block_size: {block_size} elements per scale; must be "
                                       ">= 1", 3)
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "block_size", block_size)

    def __str__(self) -> str:
        return (f"{self.codec.name.lower()} {self.bits}-bit, block {self.block_size}, "
                f"{self.schedule.name.lower()}")


def compression_or_default(config: Optional[Compression]) -> Compression:
    if config is None:
        return Compression()
    if not isinstance(config, Compression):
        raise InvalidArgumentError(f"compression: expected spccl.Compression, got "
                                   f"{type(config).__name__}", 3)
    return config


def compressible_buffer(x: Any, name: str, *, writable: bool = False) -> Buffer:
    """x checked as a buffer the compressed calls take (float32, float16, bfloat16)."""
    buf = as_buffer(x, name, writable=writable)
    if buf.dtype not in _COMPRESSIBLE_TYPES:
        raise InvalidArgumentError(f"{name}: dtype {x.dtype} is not supported by the compressed "
                                   "all-reduce (float32, float16, bfloat16)", 3)
    return buf


def residual_address(residual: Any, count: int) -> int:
    """The caller's error-feedback buffer (count float32 elements, writable),
    or 0 (no error feedback) for None."""
    if residual is None:
        return 0
    buf = as_buffer(residual, "residual", writable=True)
    if buf.dtype != _FLOAT32:
        raise InvalidArgumentError(f"residual: dtype {residual.dtype} is not float32 (the "
                                   "residual is float32 whatever x's dtype)", 3)
    if buf.count != count:
        raise InvalidArgumentError(f"residual: has {buf.count} elements, x has {count}", 3)
    return buf.address


def compression_fields(config: Compression, residual: int) -> Tuple[int, int, int, int, int]:
    """The spcclCompression fields the extension takes (src/compression_config.h)."""
    return int(config.codec), config.bits, config.block_size, int(config.schedule), residual


class CompressedCollectives:
    """Mixin of :class:`spccl.Comm`; ``_handle`` is the ``_spccl.CommHandle``."""

    _handle: Any

    def compressed_all_reduce(self, x: Any, op: ReduceOp | str = ReduceOp.SUM, *,
                              out: Any = None, compression: Optional[Compression] = None,
                              residual: Any = None, async_op: bool = False) -> Any:
        """All-reduce of x with its traffic quantized (see the module docstring
        for the error bound); the result is like x (``out=`` accepted, ``out=x``
        in place).

        compression: a :class:`spccl.Compression` (default: piecewise, 4
          bits, 256-element blocks, two-shot).
        residual: error feedback. None: off. Otherwise a float32 array or
          tensor of x's size that the caller owns, zeroes before the first
          call and passes to every call on the same tensor: each call
          quantizes x + residual and leaves in it what this rank's
          quantizations lost, so over T calls on the same inputs the
          results sum to T·S − Σ_ranks residual (the error does not
          accumulate).
        async_op: return a :class:`spccl.Work` at once (spcclIcompressedAllReduce);
          x, out and residual are held until it completes."""
        config = compression_or_default(compression)
        send = compressible_buffer(x, "x")
        recv = output(out, send, send.count, x.shape)
        fields = compression_fields(config, residual_address(residual, send.count))
        return dispatch(self._handle.compressed_all_reduce, self._handle.icompressed_all_reduce,
                        (send.address, recv.address, send.count, send.dtype, reduce_op(op),
                         *fields), (send.obj, recv.obj, residual), recv.obj, async_op)
