"""The C API's enumerations, with the same values as ``include/spccl.h``."""
from __future__ import annotations

import enum

from ._errors import InvalidArgumentError


class ReduceOp(enum.IntEnum):
    """``spcclRedOp_t``. AVG is the sum divided by the number of ranks."""

    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    AVG = 4


class SparseAlgorithm(enum.IntEnum):
    """``spcclSparseAlgorithm_t``: how the sparse all-reduce moves data."""

    AUTO = 0
    BALANCED_PARALLELISM = 1
    HIERARCHICAL = 2
    ALL_GATHER = 3
    BLOCK = 4
    DENSE = 5


class SparseEncoding(enum.IntEnum):
    """``spcclSparseEncoding_t``: how non-zeros travel."""

    AUTO = 0
    COO = 1
    BITMAP = 2
    PACKED = 3
    DENSE = 4


class SparsePartitioner(enum.IntEnum):
    """``spcclSparsePartitioner_t``: which rank owns which index."""

    AUTO = 0
    ZEN_HASH = 1
    PERMUTATION = 2
    TWO_PASS = 3


def reduce_op(op: ReduceOp | str | int) -> ReduceOp:
    """Accepts ``ReduceOp.SUM``, ``"sum"`` or ``0``."""
    try:
        return ReduceOp[op.upper()] if isinstance(op, str) else ReduceOp(op)
    except (KeyError, ValueError):
        names = [o.name.lower() for o in ReduceOp]
        raise InvalidArgumentError(f"op {op!r} is not one of {names}", 3) from None
