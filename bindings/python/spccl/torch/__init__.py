"""PyTorch integration of spccl (CPU tensors; torch >= 1.13).

- :mod:`spccl.torch.hooks`: DDP communication hooks; ``sparse_allreduce_hook``
  sends each gradient bucket through the sparse all-reduce,
  ``compressed_allreduce_hook`` through the compressed all-reduce (with
  error feedback).
- :mod:`spccl.torch.backend`: ``register()`` makes ``"spccl"`` a
  ``torch.distributed`` backend (all_reduce — dense or sparse COO —,
  broadcast, all_gather, reduce, barrier, all_to_all_single with uneven
  splits, all_to_all); ``async_op=True`` overlaps with the caller.
- :func:`init_process_group`: torch.distributed's group over the same
  ranks: given a ``spccl.Comm``, its store listens on a port the kernel
  picks and the comm tells the others; otherwise from the launcher
  variables spccl reads, on a port that does not collide with spccl's own.
"""
from .launch import init_process_group, store_over, torch_init_method

__all__ = ["init_process_group", "store_over", "torch_init_method"]
