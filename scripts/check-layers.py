#!/usr/bin/env python3
"""Fails when an #include goes the wrong way between spccl's layers.

The order, lowest first (CONTRIBUTING.md, "Layers"): a file may include its
own folder, the public headers (include/) and any lower layer; never a
higher one, nor another folder of its own layer.
"""
import os
import re
import sys

# (folder, rank): the longest matching folder names a file's layer.
LAYERS = [
    ("src/base", 0),            # check, log, clock, knobs, socket, enums
    ("kernels", 1),             # reduction, sparse and codec kernels (CPU, CUDA)
    ("src/device", 1),          # CUDA driver (loaded at run time), memory kinds, staging
    ("src/topology", 2),        # hwloc: NIC choice per rank
    ("transports/common", 2),   # side channel, stream framing
    ("transports/tcp", 3),
    ("transports/shm", 3),
    ("transports/ucx", 3),
    ("transports/ib", 3),
    ("src/runtime", 4),         # the p2p engine, frames, CollContext
    ("src/coll", 5),            # dense algorithms, cost model, small all-gather
    ("src/sparse", 6),
    ("src/compress", 6),
    ("src/migrate", 6),
    ("src/core", 7),            # the communicator, bootstrap, transport registry
    ("src/api", 8),             # the C API's entry points and argument checks
    ("interpose", 9),           # LD_PRELOAD interposers (MPI, NCCL)
]
CHECKED_ROOTS = ["src", "kernels", "transports", "interpose"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    best = None
    for folder, rank in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best[0]):
                best = (folder, rank)
    return best


def resolve(including_file, name, top):
    """The included file's path relative to top, or None (system or public)."""
    here = os.path.dirname(including_file)
    for base in (here, os.path.join(top, "src"), top):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(candidate):
            return os.path.relpath(candidate, top)
    return None


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    checked = 0
    wrong = []
    for root in CHECKED_ROOTS:
        for folder, _, files in os.walk(os.path.join(top, root)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc", ".cu", ".cuh", ".c")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, top)
                mine = layer_of(rel)
                if mine is None:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for included in INCLUDE.findall(text):
                    target = resolve(path, included, top)
                    if target is None or target.startswith("include/"):
                        continue
                    theirs = layer_of(target)
                    if theirs is None:
                        continue
                    checked += 1
                    if theirs[0] == mine[0]:
                        continue
                    if theirs[1] >= mine[1]:
                        how = "a higher layer" if theirs[1] > mine[1] else "a sibling of its layer"
                        wrong.append(f"{rel}: includes {target} ({theirs[0]}, {how} than {mine[0]})")
    for line in wrong:
        print(line)
    print(f"check-layers: {checked} project includes checked, {len(wrong)} go the wrong way")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
