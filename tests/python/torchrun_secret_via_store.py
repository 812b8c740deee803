"""One worker of the python_torchrun_secret test (CMakeLists.txt): under
torchrun, with no spccl secret in the environment, the "spccl" backend's
rank 0 draws one (in a unique id, spcclGetUniqueId) and the other workers
get it through torch's store (spccl/torch/backend.py, _create). Every
worker checks a sum all-reduce and prints "torchrun_secret: rank R OK".
docs/security.md, "Secrets per launcher": the store is torch's TCPStore,
unauthenticated, so the secret is only as private as the store.
"""
import datetime
import os
import sys

import torch
import torch.distributed as dist

import spccl.torch.backend

for name in ("SPCCL_JOB_SECRET", "SPCCL_JOB_SECRET_FILE", "SPCCL_AUTH"):
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
