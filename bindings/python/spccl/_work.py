"""Non-blocking collectives: ``async_op=True`` returns a :class:`Work`.

The collective starts at once (spcclIallReduce and the other non-blocking
forms of the C API) and runs on the communicator's worker thread, in issue
order with the communicator's other calls, while Python goes on. The Work
holds the arrays the collective reads and writes until it completes, so
dropping it early frees nothing spccl still uses; ``Comm.close()`` first
completes every operation still in flight.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

from . import _spccl
from ._errors import Error


class Work:
    """A collective in flight, from a call with ``async_op=True``.

    ``wait()`` blocks until it completed — with the GIL released, so other
    Python threads run meanwhile — and returns what the blocking call would
    have returned; a failure raises its :class:`spccl.Error` subclass with
    the library's message (every ``wait()`` raises it again).
    ``is_completed()`` looks without blocking."""

    __slots__ = ("_request", "_result")

    def __init__(self, request: _spccl.Request, result: Any) -> None:
        self._request = request
        self._result = result

    def wait(self) -> Any:
        """The collective's result, once it completed (raises if it failed)."""
        self._request.wait()
        return self._result

    def is_completed(self) -> bool:
        """True once the collective finished, successfully or not (never raises)."""
        return self._request.test()

    def exception(self) -> Optional[Error]:
        """The error the collective failed with; None while it runs or if it succeeded."""
        if not self.is_completed():
            return None
        try:
            self._request.wait()
        except Error as error:
            return error
        return None

    def __repr__(self) -> str:
        if not self.is_completed():
            return "<spccl.Work in flight>"
        error = self.exception()
        return "<spccl.Work completed>" if error is None else f"<spccl.Work failed: {error}>"


def dispatch(blocking: Callable[..., Any], nonblocking: Callable[..., _spccl.Request],
             args: Tuple[Any, ...], keep: Tuple[Any, ...], result: Any, async_op: bool) -> Any:
    """Runs a collective blocking, returning result, or starts it and returns a
    :class:`Work` that holds keep (the arrays it uses) until it completes."""
    if async_op:
        return Work(nonblocking(*args, keep), result)
    blocking(*args)
    return result
