"""torch.distributed rendezvous beside spccl's, from one launcher environment.

spccl's rank 0 listens on SPCCL_COMM_ID's port, or on MASTER_PORT + 1 when
only torchrun's variables are set (src/core/env_discovery.h); torch's
TCPStore must listen elsewhere:

- SPCCL_COMM_ID set (spcclrun, tests/netns/netlab): the store goes to the
  same host, port + 1 — netlab sets MASTER_PORT to SPCCL_COMM_ID's port,
  so MASTER_PORT itself would collide.
- otherwise (torchrun, or MASTER_ADDR/MASTER_PORT by hand): ``env://``.

Rank and world size: RANK/WORLD_SIZE, else SPCCL_RANK/SPCCL_NRANKS.

Port + 1 is free when spcclrun looks, not necessarily when the store binds
it seconds later: another job's connection or listener on the same host can
take it (CI saw "Address already in use" with two test jobs side by side).
Given a ``comm`` already set up, :func:`init_process_group` avoids the
guess: rank 0's store listens on a port the kernel picks, and the comm
broadcasts that port to the others.
"""
from __future__ import annotations

import datetime
import os
from typing import TYPE_CHECKING, Any, Optional, Tuple

import numpy as np

from .._errors import InvalidArgumentError

if TYPE_CHECKING:
    from .._comm import Comm


def _split_host_port(text: str) -> Tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise InvalidArgumentError(f"SPCCL_COMM_ID={text!r} is not host:port", 3)
    return host, int(port)


def torch_init_method() -> Tuple[str, int, int]:
    """``(init_method, rank, world_size)`` for ``torch.distributed.init_process_group``."""
    env = os.environ
    rank = env.get("RANK") or env.get("SPCCL_RANK")
    size = env.get("WORLD_SIZE") or env.get("SPCCL_NRANKS")
    if rank is None or size is None:
        raise InvalidArgumentError("no launcher environment: set RANK and WORLD_SIZE (torchrun) "
                                   "or SPCCL_RANK and SPCCL_NRANKS (spcclrun)", 3)
    comm_id = env.get("SPCCL_COMM_ID")
    if comm_id:
        host, port = _split_host_port(comm_id)
        return f"tcp://{host}:{port + 1}", int(rank), int(size)
    if not (env.get("MASTER_ADDR") and env.get("MASTER_PORT")):
        raise InvalidArgumentError("neither SPCCL_COMM_ID nor MASTER_ADDR and MASTER_PORT is set", 3)
    return "env://", int(rank), int(size)


def rank0_host() -> str:
    """The address rank 0 is reached at: SPCCL_COMM_ID's host, else MASTER_ADDR,
    else 127.0.0.1 (a job on one host)."""
    comm_id = os.environ.get("SPCCL_COMM_ID")
    if comm_id:
        return _split_host_port(comm_id)[0]
    return os.environ.get("MASTER_ADDR") or "127.0.0.1"


def store_over(comm: "Comm", timeout: datetime.timedelta) -> Any:
    """A ``torch.distributed.TCPStore`` whose port rank 0's kernel picked and
    ``comm`` broadcast; collective over ``comm``."""
    import torch.distributed as dist

    host = rank0_host()
    port = np.zeros(1, dtype=np.int64)
    store = None
    if comm.rank == 0:
        # No world size: a master given one waits in its constructor for the
        # others, who cannot connect before the broadcast below tells them where.
        store = dist.TCPStore(host, 0, None, True, timeout, wait_for_workers=False)
        port[0] = store.port
    port = comm.broadcast(port, 0)
    if store is None:
        store = dist.TCPStore(host, int(port[0]), None, False, timeout)
    return store


def init_process_group(backend: str = "gloo", timeout_s: float = 300.0,
                       comm: Optional["Comm"] = None, **kwargs: Any) -> None:
    """``torch.distributed.init_process_group`` over the same ranks as spccl's.

    With ``comm``, the group has comm's rank and size and its store is
    :func:`store_over` ``comm``; without, :func:`torch_init_method`'s rendezvous."""
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=timeout_s)
    if comm is not None:
        dist.init_process_group(backend, store=store_over(comm, timeout), rank=comm.rank,
                                world_size=comm.size, timeout=timeout, **kwargs)
        return
    method, rank, size = torch_init_method()
    dist.init_process_group(backend, init_method=method, rank=rank, world_size=size,
                            timeout=timeout, **kwargs)
