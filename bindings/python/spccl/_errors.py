"""Exceptions raised by spccl: one class per ``spcclResult_t``.

Every failed call raises a subclass of :class:`Error` whose message is the
library's own (``spcclGetLastError``): it names the argument, rank or peer at
fault. Arguments that the Python layer can check before calling the library
(dtype, contiguity, shapes) raise the same classes with messages of the same
kind.
"""
from __future__ import annotations

import builtins


class Error(RuntimeError):
    """Base of every spccl error. ``code`` is the ``spcclResult_t`` value."""

    code: int = -1

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class SystemError(Error):  # noqa: A001 - the library's own name (spcclSystemError)
    """A system call failed (socket, mmap, ...)."""

    code = 1


class InternalError(Error):
    """A bug in spccl."""

    code = 2


class InvalidArgumentError(Error, ValueError):
    """A bad argument; the message names it."""

    code = 3


class InvalidUsageError(Error):
    """A call that is wrong in context, e.g. ranks called different collectives."""

    code = 4


class RemoteError(Error):
    """A peer failed or went away."""

    code = 5


class InProgressError(Error):
    """A non-blocking operation is not finished yet."""

    code = 6


class TimeoutError(Error, builtins.TimeoutError):  # noqa: A001 - spcclTimeout
    """A wait passed its deadline (``SPCCL_TIMEOUT_MS`` / ``timeout_ms``)."""

    code = 7


class RevokedError(Error):
    """The communicator was revoked (``spcclCommRevoke``, on any rank): only
    ``agree``, ``shrink`` and ``destroy``/``abort`` remain usable."""

    code = 8


_BY_CODE = {cls.code: cls for cls in (SystemError, InternalError, InvalidArgumentError,
                                       InvalidUsageError, RemoteError, InProgressError, TimeoutError,
                                       RevokedError)}


def error_class(code: int) -> type[Error]:
    """The exception class for a ``spcclResult_t`` value (:class:`Error` if unknown)."""
    return _BY_CODE.get(code, Error)
