"""PyTorch integration of spccl (CPU tensors; torch >= 1.13).

- :mod:`spccl.torch.hooks`: DDP communication hooks; ``sparse_allreduce_hook``
  sends each gradient bucket through the sparse all-reduce.
- :mod:`spccl.torch.backend`: ``register()`` makes ``"spccl"`` a
  ``torch.distributed`` backend (all_reduce — dense or sparse COO —,
  broadcast, all_gather, reduce, barrier).
- :func:`init_process_group`: torch.distributed's rendezvous from the same
  launcher variables spccl reads, on a port that does not collide with
  spccl's own.

``compressed_allreduce_hook`` joins :mod:`spccl.torch.hooks` when the
compressed all-reduce is in spccl's C API (not in this build).
"""
from .launch import init_process_group, torch_init_method

__all__ = ["init_process_group", "torch_init_method"]
