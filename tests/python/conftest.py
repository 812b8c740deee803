"""pytest runs SPMD here: ``spcclrun -n N python3 -m pytest tests/python``
starts N copies, every one runs the same tests in the same order, and the
collectives inside a test span the N ranks. Each rank computes the
reference result itself from every rank's (seeded) input.

Run alone (no launcher variables), pytest is a 1-rank job.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import spccl


def _launched() -> bool:
    return "SPCCL_RANK" in os.environ or "RANK" in os.environ


def _rank() -> int:
    return int(os.environ.get("SPCCL_RANK", os.environ.get("RANK", "0")))


def pytest_configure(config: pytest.Config) -> None:
    if _rank() != 0:
        config.option.verbose = -2  # rank 0 reports; the others print failures only


def pytest_report_header(config: pytest.Config) -> str:
    return f"spccl rank {_rank()}, libspccl version {spccl.library_version()}"


@pytest.fixture(scope="session")
def comm() -> spccl.Comm:
    """The job's communicator (from spcclrun's variables), or a 1-rank one."""
    if _launched():
        c = spccl.Comm.from_env()
    else:
        c = spccl.Comm(spccl.unique_id(), 0, 1)
    yield c
    c.close()


@pytest.fixture(scope="session")
def torch_dist(comm: spccl.Comm) -> None:
    """torch.distributed's default (gloo) group over the same ranks."""
    import torch.distributed as dist

    import spccl.torch

    spccl.torch.init_process_group("gloo", timeout_s=120, comm=comm)
    assert dist.get_world_size() == comm.size and dist.get_rank() == comm.rank
    yield
    dist.destroy_process_group()


def share_unique_id(comm: spccl.Comm) -> spccl.UniqueId:
    """Rank 0's new unique id, on every rank (broadcast over comm)."""
    raw = np.frombuffer(spccl.unique_id().raw if comm.rank == 0 else bytes(spccl._spccl.UNIQUE_ID_BYTES),
                        dtype=np.uint8).copy()
    return spccl.UniqueId(comm.broadcast(raw, 0).tobytes())
