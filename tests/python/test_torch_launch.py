"""spccl.torch.launch: torch.distributed's store beside spccl's rendezvous."""
from __future__ import annotations

import datetime
import os
import socket
from typing import Optional

import pytest

import spccl
from spccl.torch import launch

TIMEOUT = datetime.timedelta(seconds=60)


def occupy(port: int) -> Optional[socket.socket]:
    """A listener on 0.0.0.0:port, as another job's would be; None when the
    port is taken already (by another job: the case under test all the same).
    Never a skip: every rank must run the collectives that follow."""
    s = socket.socket()
    try:
        s.bind(("0.0.0.0", port))
    except OSError:
        s.close()
        return None
    s.listen()
    return s


def test_store_over_comm_ignores_a_taken_comm_id_port_plus_one(comm):
    """The CI failure: SPCCL_COMM_ID's port + 1 held by someone else. The
    store over comm does not use it, and every rank sees rank 0's key."""
    pytest.importorskip("torch")
    comm_id = os.environ.get("SPCCL_COMM_ID")
    blocker = None
    if comm.rank == 0 and comm_id:
        blocker = occupy(int(comm_id.rpartition(":")[2]) + 1)
    try:
        store = launch.store_over(comm, TIMEOUT)
        if comm.rank == 0:
            store.set("launch-test", f"size {comm.size}")
        assert store.get("launch-test") == f"size {comm.size}".encode()
        if comm_id:
            assert store.port != int(comm_id.rpartition(":")[2]) + 1
    finally:
        comm.barrier()  # rank 0's store outlives the others' reads
        if blocker is not None:
            blocker.close()


def test_rank0_host_follows_the_launcher(monkeypatch):
    monkeypatch.setenv("SPCCL_COMM_ID", "10.0.0.7:4000")
    monkeypatch.setenv("MASTER_ADDR", "10.9.9.9")
    assert launch.rank0_host() == "10.0.0.7"
    monkeypatch.delenv("SPCCL_COMM_ID")
    assert launch.rank0_host() == "10.9.9.9"
    monkeypatch.delenv("MASTER_ADDR")
    assert launch.rank0_host() == "127.0.0.1"
    monkeypatch.setenv("SPCCL_COMM_ID", "no-port")
    with pytest.raises(spccl.InvalidArgumentError, match="SPCCL_COMM_ID"):
        launch.rank0_host()
