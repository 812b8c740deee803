"""examples/ddp_embedding.py, imported as a module by the DDP tests."""
from __future__ import annotations

import importlib.util
import pathlib
import sys

_PATH = pathlib.Path(__file__).resolve().parents[2] / "examples" / "ddp_embedding.py"
_spec = importlib.util.spec_from_file_location("ddp_embedding", _PATH)
ddp_embedding = importlib.util.module_from_spec(_spec)
sys.modules["ddp_embedding"] = ddp_embedding  # dataclasses look their module up there
_spec.loader.exec_module(ddp_embedding)

# Small enough for 4 ranks x 2 models x 50 steps on 2 cores in seconds; the
# embedding gradient is still mostly zero rows (16 x 23 features of 16384).
SMALL = ["--buckets", str(1 << 14), "--dim", "32", "--hidden", "64", "--batch", "16",
         "--window", "12", "--steps", "50", "--warmup", "1"]


def baseline_and_hooked(comm, hook: str, **options):
    """(args, corpus, gloo DDP model, DDP model with `hook`, its state, the
    hook's communicator) on SMALL, both models from the same weights."""
    import torch
    torch.set_num_threads(1)
    args = ddp_embedding.parse_args(SMALL)
    corpus = ddp_embedding.load_corpus(args.text_dir, args.buckets, args.window)
    classes = len(corpus.names)
    hook_comm = comm.split(0)  # the hook's worker thread has it to itself
    baseline, _ = ddp_embedding.wrap(ddp_embedding.make_model(args, classes), "gloo", None)
    hooked, state = ddp_embedding.wrap(ddp_embedding.make_model(args, classes), hook, hook_comm,
                                       **options)
    return args, corpus, baseline, hooked, state, hook_comm
