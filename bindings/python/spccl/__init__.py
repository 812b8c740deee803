"""spccl: sparse- and compression-aware collective communication for Python.

numpy arrays and torch CPU tensors in, the same kinds out::

    import spccl
    comm = spccl.Comm.from_env()           # spcclrun, torchrun, mpirun, srun
    total = comm.all_reduce(x)              # dense
    grad = comm.sparse_all_reduce(g)        # only g's non-zeros travel
    approx = comm.compressed_all_reduce(g, compression=spccl.Compression(bits=4))  # lossy
    x = comm.migrate_broadcast(x, straggler)  # SEMI-migration (and its planners)
    work = comm.all_reduce(x, async_op=True)  # non-blocking: spccl.Work; work.wait()

Errors raise :class:`spccl.Error` subclasses with the library's message.
PyTorch integration (DDP hooks, a torch.distributed backend): ``spccl.torch``.

Planners (local): :func:`plan_partitions` (micro-batches), :func:`stage_partition`
and :func:`repack` (pipeline stages); :meth:`Comm.balance_plan` (collective).
"""
from __future__ import annotations

from . import _spccl
from ._comm import Comm, UniqueId, unique_id
from ._compressed import Compression
from ._enums import (BalanceAction, Codec, CompressSchedule, PrunePolicy, ReduceOp,
                     SparseAlgorithm, SparseEncoding, SparsePartitioner, StageMethod)
from ._errors import (Error, InProgressError, InternalError, InvalidArgumentError,
                      InvalidUsageError, RemoteError, RevokedError, SystemError, TimeoutError)
from ._group import group
from ._planners import (BalanceCostModel, BalancePlan, BalanceRank, MicroBatchPlan, Repack,
                        StagePartition, fit_linear_cost, plan_partitions, repack,
                        stage_partition)
from ._sparse import SparseStats
from ._work import Work

__version__ = "0.1.0"


def library_version() -> int:
    """The loaded libspccl's SPCCL_VERSION_CODE (major * 10000 + minor * 100 + patch)."""
    return _spccl.version()


__all__ = [
    "Comm", "UniqueId", "unique_id", "group", "library_version", "Work",
    "ReduceOp", "SparseAlgorithm", "SparseEncoding", "SparsePartitioner", "SparseStats",
    "Compression", "Codec", "CompressSchedule", "PrunePolicy",
    "plan_partitions", "MicroBatchPlan", "stage_partition", "StagePartition", "StageMethod",
    "repack", "Repack", "BalanceCostModel", "BalancePlan", "BalanceRank", "BalanceAction",
    "fit_linear_cost",
    "Error", "SystemError", "InternalError", "InvalidArgumentError", "InvalidUsageError",
    "RemoteError", "InProgressError", "TimeoutError", "RevokedError",
]
