"""``spccl.group()``: point-to-point calls issued together (spcclGroupStart/End).

Inside a group, send and recv are deferred until the outermost group ends,
so the arrays they name must live until then: the group keeps them.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

from . import _spccl

_state = threading.local()  # groups nest per thread, like spcclGroupStart


def _depth() -> int:
    return getattr(_state, "depth", 0)


def keep_alive(obj: Any) -> None:
    """Holds obj until the outermost group ends (no-op outside a group)."""
    if _depth() > 0:
        _state.pinned.append(obj)


@contextlib.contextmanager
def group() -> Iterator[None]:
    """Defers the send/recv calls in the block and issues them together on exit.

    A pair of ranks that send to each other must use a group; outside one
    each call completes before returning::

        with spccl.group():
            comm.send(x, peer)
            comm.recv(y, peer)
    """
    _spccl.group_start()
    if _depth() == 0:
        _state.pinned = []
    _state.depth = _depth() + 1
    try:
        yield
    finally:
        _state.depth -= 1
        try:
            _spccl.group_end()  # nested: only counts down; outermost: issues
        finally:
            if _state.depth == 0:
                _state.pinned = []
