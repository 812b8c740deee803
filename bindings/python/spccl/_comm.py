"""Communicators: :func:`unique_id`, :class:`Comm` (explicit rank/size or from
the launcher's environment), split, close/abort."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _spccl
from ._compressed import CompressedCollectives
from ._dense import DenseCollectives
from ._errors import Error, InvalidArgumentError
from ._migrate import MigrationCollectives
from ._sparse import SparseCollectives
from ._token_topk import TokenTopkCollectives


@dataclass(frozen=True)
class UniqueId:
    """A rendezvous id: rank 0 creates it, every rank passes it to :class:`Comm`.

    Picklable, and ``bytes(uid)`` / ``UniqueId(raw)`` for any other channel."""

    raw: bytes

    def __bytes__(self) -> bytes:
        return self.raw


def unique_id() -> UniqueId:
    """A new id; also starts this process's rendezvous service for it
    (a thread that serves one rendezvous, then exits)."""
    return UniqueId(_spccl.get_unique_id())


class Comm(DenseCollectives, SparseCollectives, CompressedCollectives, TokenTopkCollectives,
           MigrationCollectives):
    """A communicator over ``size`` ranks.

    Keyword options (None: the library default, which the ``SPCCL_*``
    variables may set): ``timeout_ms`` (deadline of every wait),
    ``transport`` ("tcp", "shm", "auto" or a plugin), ``socket_ifname``
    (NCCL syntax), ``profile_links`` (measure alpha/beta per link at init),
    ``blocking`` (False: return at once while the rendezvous and connections
    run in the background, NCCL's non-blocking communicator; poll
    :meth:`async_error` until it is no longer :class:`InProgressError`.
    Other calls meanwhile wait for the creation; ``SPCCL_COMM_BLOCKING``).

    Usable as a context manager; ``close()`` when done (garbage collection
    closes it too)."""

    def __init__(self, unique_id: UniqueId | bytes, rank: int, size: int, *,
                 timeout_ms: Optional[int] = None, transport: Optional[str] = None,
                 socket_ifname: Optional[str] = None, profile_links: Optional[bool] = None,
                 blocking: Optional[bool] = None) -> None:
        if not isinstance(unique_id, (UniqueId, bytes)):
            raise InvalidArgumentError(
                f"unique_id: expected spccl.UniqueId or bytes, got {type(unique_id).__name__}", 3)
        self._handle = _spccl.CommHandle.init_rank(bytes(unique_id), rank, size, timeout_ms,
                                                   transport, socket_ifname, profile_links,
                                                   blocking)

    @classmethod
    def from_env(cls, *, timeout_ms: Optional[int] = None, transport: Optional[str] = None,
                 socket_ifname: Optional[str] = None,
                 profile_links: Optional[bool] = None,
                 blocking: Optional[bool] = None) -> "Comm":
        """Rank, size and rendezvous from the launcher: spcclrun (``SPCCL_*``),
        torchrun (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``:
        spccl listens on MASTER_PORT + 1), Open MPI, PMI or Slurm."""
        return cls._wrap(_spccl.CommHandle.init_from_env(timeout_ms, transport, socket_ifname,
                                                         profile_links, blocking))

    @classmethod
    def _wrap(cls, handle: Any) -> "Comm":
        comm = cls.__new__(cls)
        comm._handle = handle
        return comm

    @property
    def rank(self) -> int:
        return self._handle.rank()

    @property
    def closed(self) -> bool:
        return self._handle.closed

    def split(self, color: int, key: Optional[int] = None) -> Optional["Comm"]:
        """Collective: ranks passing the same color form a new communicator,
        ordered by (key, old rank); key defaults to this rank. color < 0:
        this rank joins none and gets None."""
        handle = self._handle.split(color, self.rank if key is None else key)
        return None if handle is None else Comm._wrap(handle)

    def revoke(self) -> None:
        """Revokes the communicator on every rank (as ULFM's ``MPI_Comm_revoke``):
        every pending and later call on it, on every rank, raises
        :class:`RevokedError`; only :meth:`agree`, :meth:`shrink`,
        :meth:`close` and :meth:`abort` remain. Returns at once; idempotent."""
        self._handle.revoke()

    def agree(self, flag: int = 1) -> Tuple[int, List[int]]:
        """Fault-tolerant agreement among the ranks alive: returns the bitwise
        AND of their flags and the failed ranks (increasing), the same on every
        one of them. A rank that is dead, or does not reach the call within the
        timeout, counts as failed. Works on a revoked or broken communicator."""
        value, failed = self._handle.agree(int(flag))
        return value, list(failed)

    def shrink(self, exclude: Sequence[int], *, timeout_ms: Optional[int] = None) -> "Comm":
        """Called by every rank not in ``exclude`` (and no other): a new
        communicator of those ranks, in their old order, renumbered from 0.
        Needs nothing from the excluded ranks (dead, stopped or alive, rank 0
        among them). ``timeout_ms``: the new communicator's (default: this
        one's)."""
        return Comm._wrap(self._handle.shrink([int(r) for r in exclude], timeout_ms))

    def counters(self) -> Dict[str, int]:
        """Traffic since creation: bytes_sent, bytes_received, messages_sent, messages_received."""
        return self._handle.counters()

    def async_error(self) -> Optional[Error]:
        """The communicator's state, never waiting (``spcclCommGetAsyncError``):
        None when it is ready and nothing failed; an :class:`InProgressError`
        while a non-blocking creation or :meth:`finalize` is under way;
        otherwise the failure (creation, or a call enqueued on a stream) as
        an :class:`Error` instance, returned, not raised."""
        return self._handle.async_error()

    def finalize(self) -> None:
        """Completes every operation issued on the communicator and leaves it
        ready for :meth:`close` (``spcclCommFinalize``); later calls raise
        :class:`InvalidUsageError`. A non-blocking communicator returns at
        once: poll :meth:`async_error` until it is no longer
        :class:`InProgressError`."""
        self._handle.finalize()

    def close(self) -> None:
        """Destroys the communicator (local; idempotent)."""
        self._handle.close()

    def abort(self) -> None:
        """Tears the communicator down at once; peers' pending calls fail with RemoteError."""
        self._handle.abort()

    def __enter__(self) -> "Comm":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return "<spccl.Comm closed>"
        return f"<spccl.Comm rank {self.rank} of {self.size}>"
