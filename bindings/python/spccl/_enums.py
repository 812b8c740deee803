"""The C API's enumerations, with the same values as ``include/spccl.h``
(tests/python/test_enums.py holds them to it). The library's short names
of the values ("bp", "two-shot", ...), as its logs and the perf binaries
print them, come from the library: ``member.library_name``."""
from __future__ import annotations

import enum
from typing import Any, Callable, Dict

from . import _spccl
from ._errors import InvalidArgumentError


class _LibraryNamed(enum.IntEnum):
    """An enumeration whose values the library names (``spccl*Name`` in spccl.h)."""

    @property
    def library_name(self) -> str:
        """The library's name of this value, e.g. ``"bp"`` for
        ``SparseAlgorithm.BALANCED_PARALLELISM``."""
        return _LIBRARY_NAMES[type(self)](int(self))


class ReduceOp(_LibraryNamed):
    """``spcclRedOp_t``. AVG is the sum divided by the number of ranks."""

    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    AVG = 4


class SparseAlgorithm(_LibraryNamed):
    """``spcclSparseAlgorithm_t``: how the sparse all-reduce moves data."""

    AUTO = 0
    BALANCED_PARALLELISM = 1
    HIERARCHICAL = 2
    ALL_GATHER = 3
    BLOCK = 4
    DENSE = 5


class SparseEncoding(_LibraryNamed):
    """``spcclSparseEncoding_t``: how non-zeros travel."""

    AUTO = 0
    COO = 1
    BITMAP = 2
    PACKED = 3
    DENSE = 4


class SparsePartitioner(_LibraryNamed):
    """``spcclSparsePartitioner_t``: which rank owns which index."""

    AUTO = 0
    ZEN_HASH = 1
    PERMUTATION = 2
    TWO_PASS = 3


class Codec(_LibraryNamed):
    """``spcclCodec_t``: how the compressed all-reduce quantizes (docs/compressed.md)."""

    PIECEWISE = 0  # AccTFM Eq. (6)-(12): finer steps near zero
    LINEAR = 1     # AccTFM Eq. (4)-(5): equal steps


class CompressSchedule(_LibraryNamed):
    """``spcclCompressSchedule_t``: where the compressed all-reduce quantizes."""

    TWO_SHOT = 0  # each input and the output quantized once
    RING = 1      # the partial sum re-quantized at every hop (error grows with n)


class PrunePolicy(enum.IntEnum):
    """``spcclPrunePolicy_t``: what the token top-k all-reduce leaves in pruned rows."""

    ZERO = 0        # pruned rows are set to 0
    KEEP_LOCAL = 1  # pruned rows keep this rank's partial sum


# The C function that names each _LibraryNamed kind's values.
_LIBRARY_NAMES: Dict[type, Callable[[int], str]] = {
    ReduceOp: _spccl.op_name,
    SparseAlgorithm: _spccl.sparse_algorithm_name,
    SparseEncoding: _spccl.sparse_encoding_name,
    SparsePartitioner: _spccl.sparse_partitioner_name,
    Codec: _spccl.codec_name,
    CompressSchedule: _spccl.compress_schedule_name,
}


def enum_value(kind: type[enum.IntEnum], value: enum.IntEnum | str | int, name: str) -> Any:
    """A member of kind from a member, its name in any case (``-`` for ``_``)
    or its value; otherwise InvalidArgumentError naming the argument."""
    try:
        if isinstance(value, str):
            return kind[value.upper().replace("-", "_")]
        return kind(value)
    except (KeyError, ValueError):
        names = [member.name.lower() for member in kind]
        raise InvalidArgumentError(f"{name} {value!r} is not one of {names}", 3) from None


def reduce_op(op: ReduceOp | str | int) -> ReduceOp:
    """Accepts ``ReduceOp.SUM``, ``"sum"`` or ``0``."""
    return enum_value(ReduceOp, op, "op")


class StageMethod(enum.IntEnum):
    """``spcclStageMethod_t``: how :func:`spccl.stage_partition` lays layers onto stages."""

    BY_TIME = 0        # minimise the slowest stage's summed layer cost (exact)
    BY_PARAMETERS = 1  # minimise the largest stage's summed layer memory (exact)
    DIFFUSION = 2      # move boundary layers between neighbours from a given partition


class BalanceAction(enum.IntEnum):
    """``spcclBalanceAction_t``: what :meth:`spccl.Comm.balance_plan` tells a rank to do."""

    KEEP = 0                # not a straggler (or nothing to shed)
    MIGRATE = 1             # sheds migrate_columns to the helpers
    RESIZE = 2              # prunes resize_columns (ZERO-resizing)
    MIGRATE_AND_RESIZE = 3  # the single heavy straggler of Eq. (2)
