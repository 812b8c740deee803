"""torch.distributed rendezvous beside spccl's, from one launcher environment.

spccl's rank 0 listens on SPCCL_COMM_ID's port, or on MASTER_PORT + 1 when
only torchrun's variables are set (src/core/env_discovery.h); torch's
TCPStore must listen elsewhere:

- SPCCL_COMM_ID set (spcclrun, tests/netns/netlab): the store goes to the
  same host, port + 1 — netlab sets MASTER_PORT to SPCCL_COMM_ID's port,
  so MASTER_PORT itself would collide.
- otherwise (torchrun, or MASTER_ADDR/MASTER_PORT by hand): ``env://``.

Rank and world size: RANK/WORLD_SIZE, else SPCCL_RANK/SPCCL_NRANKS.
"""
from __future__ import annotations

import datetime
import os
from typing import Any, Tuple

from .._errors import InvalidArgumentError


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


def init_process_group(backend: str = "gloo", timeout_s: float = 300.0, **kwargs: Any) -> None:
    """``torch.distributed.init_process_group`` with :func:`torch_init_method`'s rendezvous."""
    import torch.distributed as dist

    method, rank, size = torch_init_method()
    dist.init_process_group(backend, init_method=method, rank=rank, world_size=size,
                            timeout=datetime.timedelta(seconds=timeout_s), **kwargs)
