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
