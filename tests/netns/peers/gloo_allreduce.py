#!/usr/bin/python3
"""Gloo all-reduce peer (torch.distributed, Debian's python3-torch 1.13).

Run one process per host, e.g.
  tests/netns/netlab run 4 -- /usr/bin/python3 tests/netns/peers/gloo_allreduce.py --bytes 67108864
Rendezvous comes from the env that `netlab run` sets: MASTER_ADDR,
MASTER_PORT, RANK, WORLD_SIZE; GLOO_SOCKET_IFNAME pins Gloo to the
namespace's interface.

Modes (docs/benchmarking.md, "Side by side"):
  dense   all_reduce of a float32 tensor of --bytes bytes (Gloo's ring).
  sparse  all_reduce of a torch sparse COO float32 tensor with --bytes/4
          elements at --density; half of each rank's non-zeros come from a
          pool shared by all ranks, half are private to the rank, so the
          union grows with n as in real gradient sparsity. Gloo implements
          this as an all-gather of indices and values.

Timing: --warmup untimed iterations, then --iters timed ones. Per iteration
each rank's time is all_reduce(MAX)'d so the result is the slowest rank's.
Rank 0 prints one JSON line: {"peer", "mode", "n", "bytes", "elements",
"density", "iters", "median_s", "times_s", ...}.
"""
import argparse
import datetime
import json
import os
import statistics
import time

import torch
import torch.distributed as dist

SHARED_POOL_SEED = 1234  # same on every rank: the shared half of the non-zeros


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bytes", type=int, default=64 << 20, help="dense size in bytes (float32)")
    p.add_argument("--mode", choices=("dense", "sparse"), default="dense")
    p.add_argument("--density", type=float, default=0.01, help="sparse: fraction of non-zeros per rank")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds for any one collective")
    args = p.parse_args()
    if args.iters < 5:
        p.error("--iters must be >= 5 (docs/benchmarking.md: median over at least 5 timed iterations)")
    if args.bytes % 4 or args.bytes <= 0:
        p.error("--bytes must be a positive multiple of 4 (float32)")
    if not 0.0 < args.density <= 1.0:
        p.error("--density must be in (0, 1]")
    return args


def sparse_input(elements: int, density: float, rank: int) -> torch.Tensor:
    """COO vector: nnz/2 indices from the shared pool, nnz/2 private to rank."""
    nnz = max(2, int(elements * density))
    shared_n = nnz // 2
    private_n = nnz - shared_n
    shared_gen = torch.Generator().manual_seed(SHARED_POOL_SEED)
    # A pool twice the shared count, so ranks overlap in part, not fully.
    pool = torch.randperm(elements, generator=shared_gen)[: 2 * shared_n]
    rank_gen = torch.Generator().manual_seed(SHARED_POOL_SEED + 1 + rank)
    shared = pool[torch.randperm(pool.numel(), generator=rank_gen)[:shared_n]]
    # Private indices: drawn from outside the pool by rejecting pool members.
    in_pool = torch.zeros(elements, dtype=torch.bool)
    in_pool[pool] = True
    candidates = torch.randint(0, elements, (4 * private_n + 64,), generator=rank_gen)
    candidates = candidates[~in_pool[candidates]].unique()
    private = candidates[torch.randperm(candidates.numel(), generator=rank_gen)[:private_n]]
    indices = torch.cat([shared, private]).unique().unsqueeze(0)
    values = torch.rand(indices.shape[1], generator=rank_gen)
    return torch.sparse_coo_tensor(indices, values, (elements,)).coalesce()


def main() -> None:
    args = parse_args()
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.timeout))
    rank, n = dist.get_rank(), dist.get_world_size()
    elements = args.bytes // 4

    if args.mode == "dense":
        make_input = lambda: torch.full((elements,), float(rank + 1), dtype=torch.float32)  # noqa: E731
    else:
        template = sparse_input(elements, args.density, rank)
        make_input = lambda: template.clone()  # noqa: E731

    times = []
    for it in range(args.warmup + args.iters):
        tensor = make_input()
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(tensor)
        local = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
        dist.all_reduce(local, op=dist.ReduceOp.MAX)
        if it >= args.warmup:
            times.append(local.item())

    if args.mode == "dense":  # every element must be sum(1..n)
        expected = n * (n + 1) / 2
        if not torch.all(tensor == expected):
            raise SystemExit(f"rank {rank}: dense result wrong, expected {expected}")

    if rank == 0:
        result = {
            "peer": "gloo",
            "torch": torch.__version__,
            "mode": args.mode,
            "n": n,
            "bytes": args.bytes,
            "elements": elements,
            "density": args.density if args.mode == "sparse" else 1.0,
            "iters": args.iters,
            "median_s": statistics.median(times),
            "times_s": [round(t, 6) for t in times],
            "ifname": os.environ.get("GLOO_SOCKET_IFNAME", ""),
        }
        if args.mode == "sparse":
            result["result_nnz"] = int(tensor.coalesce()._nnz())
        print(json.dumps(result), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
