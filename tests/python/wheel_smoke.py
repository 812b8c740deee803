"""Smoke test of an installed spccl wheel (tests/python/wheel_in_venv.sh runs
it from outside the source tree): the package imports from site-packages,
its extension carries libspccl, and two ranks all-reduce numpy arrays —
blocking and non-blocking — and run an uneven all_to_all_v, each checked
against a reference."""
from __future__ import annotations

import multiprocessing
import os
import sys
import sysconfig

import numpy as np


def rank_main(raw_id: bytes, rank: int, size: int) -> None:
    import spccl

    with spccl.Comm(spccl.UniqueId(raw_id), rank, size, timeout_ms=60000) as comm:
        x = np.arange(1000, dtype=np.float32) * (rank + 1)
        expected = np.arange(1000, dtype=np.float32) * sum(r + 1 for r in range(size))
        np.testing.assert_array_equal(comm.all_reduce(x), expected)
        work = comm.all_reduce(x.astype(np.float64), "max", async_op=True)
        np.testing.assert_array_equal(work.wait(), np.arange(1000, dtype=np.float64) * size)
        assert work.is_completed()
        rows = np.full((rank + 2, 3), rank, dtype=np.int64)  # rank r sends r + 1 rows to rank 1
        got = comm.all_to_all_v(rows, [1, rank + 1])
        want = np.concatenate([np.full((1 if rank == 0 else r + 1, 3), r, dtype=np.int64)
                               for r in range(size)])
        np.testing.assert_array_equal(got, want)


def main() -> int:
    import spccl

    site = sysconfig.get_paths()["purelib"]
    where = os.path.dirname(os.path.abspath(spccl.__file__))
    assert where.startswith(site), f"spccl imported from {where}, not from {site}"
    ext = spccl._spccl.__file__
    with open("/proc/self/maps") as maps:
        assert "libspccl.so" not in maps.read(), "the extension loaded a separate libspccl.so"
    print(f"spccl {spccl.__version__} from {where}; extension {os.path.basename(ext)}; "
          f"libspccl version code {spccl.library_version()}")

    size = 2
    uid = spccl.unique_id()  # this process serves the rendezvous
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=rank_main, args=(uid.raw, r, size)) for r in range(size)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    codes = [p.exitcode for p in procs]
    if codes != [0] * size:
        print(f"wheel smoke test: rank exit codes {codes}", file=sys.stderr)
        return 1
    print(f"wheel smoke test: {size} ranks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
