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
Put bindings/python's build (build/python) on PYTHONPATH, or pip install it
(only the sparse and compressed hooks, and a launch by spcclrun, need it).

On CUDA (``--device cuda``) with ``--backend nccl`` and ``--hooks ddp``
(DDP's own all-reduce over the default group), the all-reduces are NCCL
calls, which ``libspccl_nccl.so`` can serve (docs/nccl-interposer.md):

    SPCCL_NCCL_MODE=replace LD_PRELOAD=build/interpose/nccl/libspccl_nccl.so \
      python3 -m torch.distributed.run --nproc_per_node 4 examples/ddp_embedding.py \
      --device cuda --backend nccl --hooks ddp --print-losses

Rank r uses GPU r modulo the number of GPUs, so several ranks may share
one (the interposer in replace mode allows that; NCCL itself refuses).
``--backend gloo --device cuda`` runs the same model on the same GPU with
gloo's all-reduce: the reference for a loss-by-loss comparison. Runs are
deterministic (seeded weights and batches, deterministic CUDA algorithms):
``--print-losses`` prints every step's loss on rank 0 as Python's exact
repr of the float, ``--loss-file`` writes them as JSON; at the end rank 0
prints steps/s.
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

TEXT_DIR = "/usr/share/common-licenses"
# "ddp": DDP's own all-reduce over the default process group, whatever its
# backend; "gloo" is its older name, kept.
HOOKS = ("gloo", "ddp", "sparse", "compressed")
DEFAULT_HOOKS = ("gloo", "ddp")


def spccl_modules():
    """spccl's Python package, imported only where it is used (the spccl
    hooks, a launch by spcclrun): the CUDA runs under the NCCL interposer
    need no spccl package."""
    import spccl
    import spccl.torch
    import spccl.torch.hooks
    return spccl


def hook_state_class(hook: str):
    hooks = spccl_modules().torch.hooks
    return {"sparse": hooks.SparseAllReduceState,
            "compressed": hooks.CompressedAllReduceState}[hook]


def hook_function(hook: str):
    hooks = spccl_modules().torch.hooks
    return {"sparse": hooks.sparse_allreduce_hook,
            "compressed": hooks.compressed_allreduce_hook}[hook]


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


def synthetic_texts(seed: int, classes: int = 12, words: int = 4000) -> Dict[str, str]:
    """A stand-in corpus where directory is missing (a container without
    Debian's licence texts): classes documents, each drawn from its own
    Zipf-like distribution over a shared vocabulary; the same on every host
    for a given seed."""
    generator = torch.Generator().manual_seed(seed)
    vocabulary = [f"w{i}" for i in range(3000)]
    ranks = torch.arange(1, len(vocabulary) + 1, dtype=torch.float64)
    texts = {}
    for c in range(classes):
        order = torch.randperm(len(vocabulary), generator=generator)
        weights = torch.empty(len(vocabulary), dtype=torch.float64)
        weights[order] = 1.0 / ranks
        picks = torch.multinomial(weights, words, replacement=True, generator=generator)
        texts[f"synthetic-{c:02d}"] = " ".join(vocabulary[i] for i in picks.tolist())
    return texts


def load_corpus(directory: str, buckets: int, window: int) -> Corpus:
    """Every regular file of directory (symlinks are aliases there) is a class.
    directory "synthetic", or one that does not exist: synthetic_texts()."""
    if directory == "synthetic" or not os.path.isdir(directory):
        return corpus_of(synthetic_texts(1), buckets, window, directory)
    texts = {}
    for name in sorted(f for f in os.listdir(directory)
                       if os.path.isfile(os.path.join(directory, f))
                       and not os.path.islink(os.path.join(directory, f))):
        with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
            texts[name] = f.read()
    return corpus_of(texts, buckets, window, directory)


def corpus_of(texts: Dict[str, str], buckets: int, window: int, directory: str) -> Corpus:
    """texts: class name -> text, classes in the order of their names."""
    names = sorted(texts)
    unigrams: List[int] = []
    bigrams: List[int] = []
    labels: List[int] = []
    starts: List[int] = []
    for label, name in enumerate(names):
        words = re.findall(r"[a-z0-9]+", texts[name].lower())
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


def wrap(model: nn.Module, hook: str, comm: object, *, device: torch.device | None = None,
         **options: object):
    """DDP over the default group (hook "ddp" or "gloo": its own all-reduce);
    with hook "sparse" or "compressed" the buckets go through spccl (comm, a
    spccl.Comm) instead, options going to the hook's state. device: a CUDA
    device to put the model on. Returns (ddp, hook state or None)."""
    if device is not None and device.type == "cuda":
        ddp = DistributedDataParallel(model.to(device), device_ids=[device.index])
    else:
        ddp = DistributedDataParallel(model)
    if hook in ("gloo", "ddp"):
        return ddp, None
    state = hook_state_class(hook)(comm, **options)
    ddp.register_comm_hook(state, hook_function(hook))
    return ddp, state


def hook_options(args: argparse.Namespace, hook: str) -> Dict[str, object]:
    """The command line's settings for hook's state."""
    if hook != "compressed":
        return {}
    return {"codec": args.codec, "bits": args.bits, "block_size": args.block_size,
            "schedule": args.schedule, "error_feedback": args.error_feedback}


def barrier(device: torch.device | None) -> None:
    """dist.barrier, as an all-reduce on the model's device: NCCL's barrier
    would guess a GPU per rank, and several ranks may share one."""
    if device is None or device.type != "cuda":
        dist.barrier()
        return
    flag = torch.zeros(1, device=device)
    dist.all_reduce(flag)
    torch.cuda.synchronize(device)


def train(ddp: nn.Module, corpus: Corpus, args: argparse.Namespace, steps: int,
          device: torch.device | None = None, label: str = "") -> Dict[str, object]:
    """steps of SGD on this rank's batches (seeded by rank: each rank its own
    shard of the sampling; drawn on the CPU, so the same on any device).
    Returns losses and the timing of the steps after the first
    args.warmup. With args.print_losses rank 0 prints each step's loss."""
    optimizer = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    generator = torch.Generator().manual_seed(args.seed * 1000 + dist.get_rank())
    losses: List[float] = []
    started = None
    show = getattr(args, "print_losses", False) and dist.get_rank() == 0
    for step in range(steps):
        if step == args.warmup:
            barrier(device)
            started = time.perf_counter()
        features, labels = corpus.batch(args.batch, generator)
        if device is not None:
            features, labels = features.to(device), labels.to(device)
        optimizer.zero_grad(set_to_none=False)
        loss = nn.functional.cross_entropy(ddp(features), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if show:
            # repr: the shortest text that reads back as exactly this float.
            print(f"[{label}] step {step} loss {losses[-1]!r}", flush=True)
    barrier(device)
    elapsed = time.perf_counter() - started if started is not None else float("nan")
    timed = steps - args.warmup
    return {"losses": losses, "seconds": elapsed, "steps_per_s": timed / elapsed if timed > 0 else
            float("nan")}


def describe_buckets(state: object, buckets: int) -> List[Dict[str, object]]:
    """What the hook did with each bucket on the last step: the sparse
    planner's record, or the RMS of the compressed hook's residual."""
    described: List[Dict[str, object]] = []
    sparse_state = hook_state_class("sparse")
    for i in range(buckets):
        if isinstance(state, sparse_state):
            stats = state.stats(i)
            described.append({"algorithm": stats.algorithm.name, "density": round(stats.density, 4),
                              "gamma": round(stats.gamma, 3), "bytes_sent": stats.bytes_sent,
                              "seconds": round(stats.measured_seconds, 4)})
        else:
            residual = state.residual(i)
            rms = None if residual is None else residual.square().mean().sqrt().item()
            described.append({"compression": str(state.compression), "residual_rms": rms})
    return described


def mean_loss_over_ranks(losses: Sequence[float], last: int,
                         device: torch.device | None = None) -> float:
    window = torch.tensor(sum(losses[-last:]) / min(last, len(losses)), dtype=torch.float64,
                          device=device)
    dist.all_reduce(window)
    return window.item() / dist.get_world_size()


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hooks", default="gloo,sparse,compressed",
                   help=f"comma-separated, of {HOOKS} (gloo and ddp: DDP's own all-reduce over "
                        "the default group, whatever --backend is)")
    p.add_argument("--backend", choices=("gloo", "nccl"), default="gloo",
                   help="torch.distributed backend of the default group")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="cuda: rank r on GPU r %% (number of GPUs)")
    p.add_argument("--print-losses", action="store_true",
                   help="rank 0 prints every step's loss, exactly (repr)")
    p.add_argument("--loss-file", default=None,
                   help="rank 0 writes {hook: [loss per step]} there as JSON")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5, help="untimed first steps")
    p.add_argument("--buckets", type=int, default=1 << 18, help="embedding rows")
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--batch", type=int, default=64, help="windows per rank and step")
    p.add_argument("--window", type=int, default=24, help="words per window")
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--text-dir", default=TEXT_DIR,
                   help="one class per file; 'synthetic' (or a missing directory): generated text")
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
    if args.backend == "nccl" and args.device != "cuda":
        p.error("--backend nccl needs --device cuda")
    if args.device == "cuda" and any(h not in DEFAULT_HOOKS for h in args.hooks):
        p.error("on --device cuda only the hooks gloo/ddp (DDP's own all-reduce) run; the spccl "
                "hooks take CPU tensors")
    if "compressed" in args.hooks:
        spccl = spccl_modules()
        try:  # the compressed hook's settings, checked before any rank starts
            spccl.Compression(args.codec, args.bits, args.block_size, args.schedule)
        except spccl.InvalidArgumentError as error:
            p.error(str(error))
    return args


def init_default_group(backend: str) -> None:
    """torchrun (RANK, WORLD_SIZE, MASTER_ADDR in the environment): env://;
    else spccl's launch (spcclrun's variables)."""
    if all(v in os.environ for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")):
        dist.init_process_group(backend, init_method="env://")
    else:
        spccl_modules().torch.init_process_group(backend)


def pick_device(args: argparse.Namespace) -> torch.device | None:
    """The rank's GPU (LOCAL_RANK, else RANK, modulo the GPUs), with the
    settings that make CUDA runs repeat bit for bit; None on the CPU."""
    if args.device != "cuda":
        return None
    # cuBLAS is deterministic only with a fixed workspace (set before CUDA starts).
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    if not torch.cuda.is_available():
        raise SystemExit("ddp_embedding: --device cuda, but torch sees no GPU")
    local = int(os.environ.get("LOCAL_RANK", os.environ.get("RANK", "0")))
    device = torch.device("cuda", local % torch.cuda.device_count())
    torch.cuda.set_device(device)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return device


def main() -> None:
    args = parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    device = pick_device(args)
    init_default_group(args.backend)
    comm = (spccl_modules().Comm.from_env() if any(h not in DEFAULT_HOOKS for h in args.hooks)
            else None)
    rank, size = dist.get_rank(), dist.get_world_size()
    corpus = load_corpus(args.text_dir, args.buckets, args.window)
    params = sum(p.numel() for p in make_model(args, len(corpus.names)).parameters())
    if rank == 0:
        print(f"ddp_embedding: {size} ranks, {len(corpus.names)} classes, "
              f"{len(corpus.unigrams)} words from {args.text_dir}; model {params / 1e6:.1f} M "
              f"parameters ({args.buckets} x {args.dim} embedding + MLP); batch {args.batch} "
              f"x {args.window} words per rank; backend {args.backend} on "
              f"{device if device is not None else 'cpu'}", flush=True)
    results = {}
    for hook in args.hooks:
        ddp, state = wrap(make_model(args, len(corpus.names)), hook, comm, device=device,
                          **hook_options(args, hook))
        sent_before = comm.counters()["bytes_sent"] if state is not None else 0
        result = train(ddp, corpus, args, args.steps, device, hook)
        result["final_loss"] = mean_loss_over_ranks(result["losses"], 10, device)
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
    if rank == 0 and args.loss_file:
        with open(args.loss_file, "w") as f:
            json.dump({"n": size, "backend": args.backend, "device": args.device,
                       "steps_per_s": {h: r["steps_per_s"] for h, r in results.items()},
                       "losses": {h: r["losses"] for h, r in results.items()}}, f)
    if rank == 0:
        for hook, result in results.items():
            print(f"[{hook}] steps/s {result['steps_per_s']:.3f} ({size} ranks, backend "
                  f"{args.backend}, {args.device})", flush=True)
    if rank == 0 and len(results) > 1:
        print("| hook | steps/s | final loss |\n|---|---|---|")
        for hook, result in results.items():
            print(f"| {hook} | {result['steps_per_s']:.2f} | {result['final_loss']:.4f} |")
    if comm is not None:
        comm.close()
    barrier(device)  # no rank tears the group down while another still uses it
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
