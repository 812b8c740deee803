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


# ctest's SKIP_RETURN_CODE (tests/python/CMakeLists.txt).
SKIP_EXIT_STATUS = 77


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run in which every collected test skipped and none failed exits 77,
    which ctest counts as skipped (pytest itself would exit 0, a pass). The
    reasons are printed for scripts/run-tests.sh's summary."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if exitstatus != pytest.ExitCode.OK or reporter is None:
        return
    skipped = reporter.stats.get("skipped", [])
    if not skipped or any(reporter.stats.get(k) for k in ("passed", "failed", "error", "xfailed", "xpassed")):
        return
    reasons = sorted({str(r.longrepr[2]).removeprefix("Skipped: ") if isinstance(r.longrepr, tuple)
                      else str(r.longrepr) for r in skipped})
    reporter.write_line(f"\nSKIPPED: every test ({len(skipped)}) skipped: {'; '.join(reasons)}")
    session.exitstatus = SKIP_EXIT_STATUS
