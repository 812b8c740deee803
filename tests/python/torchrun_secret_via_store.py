"""The python_torchrun_secret test (CMakeLists.txt): as under torchrun, with
no spccl secret in the environment, the "spccl" backend's rank 0 draws one
(in a unique id, spcclGetUniqueId) and the other workers get it through
torch's store (spccl/torch/backend.py, _create). Every worker checks a sum
all-reduce and prints "torchrun_secret: rank R OK". docs/security.md,
"Secrets per launcher": the store is torch's TCPStore, unauthenticated, so
the secret is only as private as the store.

  torchrun_secret_via_store.py --launch N   starts N workers with the
      variables torchrun gives them (MASTER_ADDR, MASTER_PORT, RANK,
      WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE) and no secret variable.
      torchrun itself is not used: torch 1.13's launcher fails under
      Python 3.11 before it starts a worker (AttributeError in its
      redirects parsing), and init_process_group's env:// sees only these.
  torchrun_secret_via_store.py              one worker
"""
import datetime
import os
import socket
import subprocess
import sys

SECRET_VARIABLES = ("SPCCL_JOB_SECRET", "SPCCL_JOB_SECRET_FILE", "SPCCL_AUTH")


def launch(n):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k not in SECRET_VARIABLES}
    workers = [subprocess.Popen([sys.executable, __file__],
                                env=dict(env, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                                         RANK=str(r), WORLD_SIZE=str(n), LOCAL_RANK=str(r),
                                         LOCAL_WORLD_SIZE=str(n)))
               for r in range(n)]
    codes = []
    for w in workers:
        try:
            codes.append(w.wait(timeout=120))
        except subprocess.TimeoutExpired:
            w.kill()
            codes.append("timeout")
    if any(c != 0 for c in codes):
        sys.exit(f"torchrun_secret: workers exited {codes}")


if len(sys.argv) == 3 and sys.argv[1] == "--launch":
    launch(int(sys.argv[2]))
    sys.exit(0)

import torch
import torch.distributed as dist

import spccl.torch.backend

for name in SECRET_VARIABLES:
    if name in os.environ:
        sys.exit(f"torchrun_secret: {name} is set; this test is about running without it")
spccl.torch.backend.register()
dist.init_process_group("spccl", timeout=datetime.timedelta(seconds=60))
rank, size = dist.get_rank(), dist.get_world_size()
t = torch.full((4096,), float(rank + 1))
dist.all_reduce(t)
want = float(size * (size + 1) // 2)
if not bool((t == want).all()):
    sys.exit(f"torchrun_secret: rank {rank}: all-reduce gave {t[:4].tolist()}..., expected {want}")
print(f"torchrun_secret: rank {rank} OK", flush=True)
dist.destroy_process_group()
