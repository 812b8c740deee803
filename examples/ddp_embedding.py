#!/usr/bin/python3
"""Data-parallel training of a large-embedding model with spccl's DDP hook.

The model is a fastText-style text classifier (Joulin et al., "Bag of Tricks
for Efficient Text Classification", 2017): the words and word bigrams of a
window of text are hashed into the rows of one large ``nn.Embedding``, the
rows are averaged, and an MLP says which document the window came from.
The task is real: the corpus is the licence texts Debian ships in
/usr/share/common-licenses (GPL, LGPL, Apache, MPL, ...), one class per file.

The embedding's gradient is dense (``sparse=False``, as most models leave
it) but only the rows of the hashed features a step saw are non-zero —
well under 1% of a 2**18-row table — so DDP's default all-reduce moves
megabytes of zeros that spccl's sparse all-reduce skips.

    build/bin/spcclrun -n 4 /usr/bin/python3 examples/ddp_embedding.py
    torchrun --nproc_per_node 4 examples/ddp_embedding.py
    sudo tests/netns/netlab run 4 -- /usr/bin/python3 examples/ddp_embedding.py

``--hooks gloo,sparse,compressed`` trains the same model from the same
initial weights on the same batches once per hook (gloo: DDP's default
all-reduce over the gloo process group; sparse:
``spccl.torch.hooks.sparse_allreduce_hook``; compressed:
``spccl.torch.hooks.compressed_allreduce_hook``, configured by ``--bits``,
``--codec``, ``--block-size``, ``--schedule`` and ``--no-error-feedback``)
and prints, on rank 0, steps/s and the losses of each side by side.
Put bindings/python's build (build/python) on PYTHONPATH, or pip install it.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import time
import zlib
from dataclasses import dataclass
from typing import Dict, List, Sequence

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

import spccl
import spccl.torch
import spccl.torch.hooks

TEXT_DIR = "/usr/share/common-licenses"
HOOKS = ("gloo", "sparse", "compressed")
HOOK_STATES = {"sparse": spccl.torch.hooks.SparseAllReduceState,
               "compressed": spccl.torch.hooks.CompressedAllReduceState}
HOOK_FUNCTIONS = {"sparse": spccl.torch.hooks.sparse_allreduce_hook,
                  "compressed": spccl.torch.hooks.compressed_allreduce_hook}


@dataclass
class Corpus:
    """Hashed features of every token, the class of every token, and the
    positions where a window of tokens lies inside one document."""

    unigrams: torch.Tensor  # int64 [tokens]
    bigrams: torch.Tensor   # int64 [tokens]: the bigram ending at each token
    labels: torch.Tensor    # int64 [tokens]
    starts: torch.Tensor    # int64 [windows]
    names: List[str]
    window: int

    def batch(self, size: int, generator: torch.Generator):
        """size random windows: features [size, 2 * window - 1], labels [size]."""
        starts = self.starts[torch.randint(len(self.starts), (size,), generator=generator)]
        positions = starts.unsqueeze(1) + torch.arange(self.window)
        features = torch.cat([self.unigrams[positions], self.bigrams[positions[:, 1:]]], dim=1)
        return features, self.labels[starts]


def feature_id(text: str, buckets: int) -> int:
    # crc32, not hash(): Python salts str hashes per process, and every rank
    # must map a word to the same row.
    return zlib.crc32(text.encode()) % buckets


def load_corpus(directory: str, buckets: int, window: int) -> Corpus:
    """Every regular file of directory (symlinks are aliases there) is a class."""
    names = sorted(f for f in os.listdir(directory)
                   if os.path.isfile(os.path.join(directory, f))
                   and not os.path.islink(os.path.join(directory, f)))
    unigrams: List[int] = []
    bigrams: List[int] = []
    labels: List[int] = []
    starts: List[int] = []
    for label, name in enumerate(names):
        with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
            words = re.findall(r"[a-z0-9]+", f.read().lower())
        if len(words) < window:
            continue
        first = len(unigrams)
        previous = "<s>"
        for word in words:
            unigrams.append(feature_id(word, buckets))
            bigrams.append(feature_id(previous + " " + word, buckets))
            labels.append(label)
            previous = word
        starts.extend(range(first, first + len(words) - window + 1))
    if not starts:
        raise SystemExit(f"no text of {window}+ words under {directory}")
    as_tensor = lambda values: torch.tensor(values, dtype=torch.int64)  # noqa: E731
    return Corpus(as_tensor(unigrams), as_tensor(bigrams), as_tensor(labels), as_tensor(starts),
                  names, window)


class EmbeddingMLP(nn.Module):
    """Mean of the hashed features' embeddings, then an MLP over the classes."""

    def __init__(self, buckets: int, dim: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(buckets, dim)  # dense gradient, mostly zero rows
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.embedding(features).mean(dim=1))


def make_model(args: argparse.Namespace, classes: int) -> EmbeddingMLP:
    torch.manual_seed(args.seed)  # the same initial weights for every hook
    return EmbeddingMLP(args.buckets, args.dim, args.hidden, classes)


def wrap(model: nn.Module, hook: str, comm: spccl.Comm | None, **options: object):
    """DDP over the default (gloo) group; with hook "sparse" or "compressed"
    the buckets go through spccl instead, options going to the hook's state.
    Returns (ddp, hook state or None)."""
    ddp = DistributedDataParallel(model)
    if hook == "gloo":
        return ddp, None
    state = HOOK_STATES[hook](comm, **options)
    ddp.register_comm_hook(state, HOOK_FUNCTIONS[hook])
    return ddp, state


def hook_options(args: argparse.Namespace, hook: str) -> Dict[str, object]:
    """The command line's settings for hook's state."""
    if hook != "compressed":
        return {}
    return {"codec": args.codec, "bits": args.bits, "block_size": args.block_size,
            "schedule": args.schedule, "error_feedback": args.error_feedback}


def train(ddp: nn.Module, corpus: Corpus, args: argparse.Namespace, steps: int) -> Dict[str, object]:
    """steps of SGD on this rank's batches (seeded by rank: each rank its own
    shard of the sampling). Returns losses and the timing of the steps after
    the first args.warmup."""
    optimizer = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    generator = torch.Generator().manual_seed(args.seed * 1000 + dist.get_rank())
    losses: List[float] = []
    started = None
    for step in range(steps):
        if step == args.warmup:
            dist.barrier()
            started = time.perf_counter()
        features, labels = corpus.batch(args.batch, generator)
        optimizer.zero_grad(set_to_none=False)
        loss = nn.functional.cross_entropy(ddp(features), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    dist.barrier()
    elapsed = time.perf_counter() - started if started is not None else float("nan")
    timed = steps - args.warmup
    return {"losses": losses, "seconds": elapsed, "steps_per_s": timed / elapsed if timed > 0 else
            float("nan")}


def describe_buckets(state: object, buckets: int) -> List[Dict[str, object]]:
    """What the hook did with each bucket on the last step: the sparse
    planner's record, or the RMS of the compressed hook's residual."""
    described: List[Dict[str, object]] = []
    for i in range(buckets):
        if isinstance(state, spccl.torch.hooks.SparseAllReduceState):
            stats = state.stats(i)
            described.append({"algorithm": stats.algorithm.name, "density": round(stats.density, 4),
                              "gamma": round(stats.gamma, 3), "bytes_sent": stats.bytes_sent,
                              "seconds": round(stats.measured_seconds, 4)})
        else:
            residual = state.residual(i)
            rms = None if residual is None else residual.square().mean().sqrt().item()
            described.append({"compression": str(state.compression), "residual_rms": rms})
    return described


def mean_loss_over_ranks(losses: Sequence[float], last: int) -> float:
    window = torch.tensor(sum(losses[-last:]) / min(last, len(losses)), dtype=torch.float64)
    dist.all_reduce(window)
    return window.item() / dist.get_world_size()


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hooks", default="gloo,sparse,compressed",
                   help=f"comma-separated, of {HOOKS}")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5, help="untimed first steps")
    p.add_argument("--buckets", type=int, default=1 << 18, help="embedding rows")
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--batch", type=int, default=64, help="windows per rank and step")
    p.add_argument("--window", type=int, default=24, help="words per window")
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--text-dir", default=TEXT_DIR)
    p.add_argument("--print-every", type=int, default=20)
    p.add_argument("--json", action="store_true", help="rank 0 also prints one JSON line per hook")
    p.add_argument("--codec", default="piecewise", help="compressed hook: piecewise or linear")
    p.add_argument("--bits", type=int, default=4, help="compressed hook: bits per element, 2..8")
    p.add_argument("--block-size", type=int, default=256, help="compressed hook: elements per scale")
    p.add_argument("--schedule", default="two_shot", help="compressed hook: two_shot or ring")
    p.add_argument("--error-feedback", action=argparse.BooleanOptionalAction, default=True,
                   help="compressed hook: keep a per-bucket error-feedback residual")
    args = p.parse_args(argv)
    args.hooks = [h for h in args.hooks.split(",") if h]
    if not args.hooks or any(h not in HOOKS for h in args.hooks):
        p.error(f"--hooks takes a comma-separated list of {HOOKS}")
    if args.steps <= args.warmup:
        p.error("--steps must exceed --warmup")
    try:  # the compressed hook's settings, checked before any rank starts
        spccl.Compression(args.codec, args.bits, args.block_size, args.schedule)
    except spccl.InvalidArgumentError as error:
        p.error(str(error))
    return args


def main() -> None:
    args = parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    spccl.torch.init_process_group("gloo")
    comm = spccl.Comm.from_env() if any(h != "gloo" for h in args.hooks) else None
    rank, size = dist.get_rank(), dist.get_world_size()
    corpus = load_corpus(args.text_dir, args.buckets, args.window)
    params = sum(p.numel() for p in make_model(args, len(corpus.names)).parameters())
    if rank == 0:
        print(f"ddp_embedding: {size} ranks, {len(corpus.names)} classes, "
              f"{len(corpus.unigrams)} words from {args.text_dir}; model {params / 1e6:.1f} M "
              f"parameters ({args.buckets} x {args.dim} embedding + MLP); batch {args.batch} "
              f"x {args.window} words per rank", flush=True)
    results = {}
    for hook in args.hooks:
        ddp, state = wrap(make_model(args, len(corpus.names)), hook, comm,
                          **hook_options(args, hook))
        sent_before = comm.counters()["bytes_sent"] if state is not None else 0
        result = train(ddp, corpus, args, args.steps)
        result["final_loss"] = mean_loss_over_ranks(result["losses"], 10)
        results[hook] = result
        if state is not None:
            state.close()
            result["buckets"] = describe_buckets(state, state.buckets_reduced // args.steps)
            # This rank's spccl traffic (the hook's only), warm-up steps included.
            result["bytes_sent_per_step"] = (comm.counters()["bytes_sent"] - sent_before) / args.steps
        if rank == 0:
            shown = ", ".join(f"{i}: {result['losses'][i]:.3f}"
                              for i in range(0, args.steps, args.print_every))
            sent = (f"; spccl sent {result['bytes_sent_per_step'] / 1e6:.3f} MB per step (rank 0)"
                    if "bytes_sent_per_step" in result else "")
            print(f"[{hook}] {result['steps_per_s']:.2f} steps/s; rank 0 losses {shown}; "
                  f"final (mean of last 10 steps over ranks) {result['final_loss']:.4f}{sent}",
                  flush=True)
            for i, bucket in enumerate(result.get("buckets", [])):
                print(f"[{hook}] bucket {i}: {bucket}", flush=True)
            if args.json:
                print(json.dumps({"hook": hook, "n": size, "steps": args.steps,
                                  "steps_per_s": result["steps_per_s"],
                                  "final_loss": result["final_loss"],
                                  "losses_rank0": result["losses"], "params": params,
                                  "bytes_sent_per_step": result.get("bytes_sent_per_step"),
                                  "buckets": result.get("buckets", [])}), flush=True)
    if rank == 0 and len(results) > 1:
        print("| hook | steps/s | final loss |\n|---|---|---|")
        for hook, result in results.items():
            print(f"| {hook} | {result['steps_per_s']:.2f} | {result['final_loss']:.4f} |")
    if comm is not None:
        comm.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
