"""docs/perf/gpu.md: device buffers on a lent GPU (the perf binaries' own
output from tests/gpu/run_on_gpu.sh's stages, kept under raw/gpu/)."""
import json
import os

from .common import provenance, raw_path, table

RUN = raw_path("gpu", "h100-2026-11-26")
CUDAIPC = os.path.join(RUN, "cudaipc.log")
DEVICEBENCH = os.path.join(RUN, "devicebench.log")
PIECES = os.path.join(RUN, "pieces.log")
TORCH = os.path.join(RUN, "torch.log")


def size_text(size: int) -> str:
    return f"{size >> 20} MiB"


def dense_rows(path: str) -> list:
    """(bytes, oop us, oop busbw, in-place us, in-place busbw) of a *_perf output."""
    rows = []
    for line in open(path):
        cells = line.split()
        if line.startswith("#") or len(cells) < 12 or not cells[0].isdigit():
            continue
        rows.append((int(cells[0]), float(cells[5]), float(cells[7]), float(cells[9]), float(cells[11])))
    return rows


def sparse_row(path: str) -> tuple:
    """(algorithm, sparse us, dense us) of a sparse_all_reduce_perf output."""
    for line in open(path):
        cells = line.split()
        if line.startswith("#") or len(cells) < 20 or not cells[0].isdigit():
            continue
        return cells[7], float(cells[8]), float(cells[19])
    raise ValueError(f"{path}: no result row")


def transports_table() -> str:
    shm = dense_rows(os.path.join(RUN, "cudaipc", "all_reduce_device_shm.log"))
    ipc = dense_rows(os.path.join(RUN, "cudaipc", "all_reduce_device_cuda_ipc.log"))
    rows = [[size_text(a[0]), f"{a[1]:.0f}", f"{a[2]:.2f}", f"{a[3]:.0f}", f"{a[4]:.2f}",
             f"{b[1]:.0f}", f"{b[2]:.2f}", f"{b[3]:.0f}", f"{b[4]:.2f}"] for a, b in zip(shm, ipc)]
    header = ["bytes", "shm oop µs", "busbw", "shm in place µs", "busbw", "cuda_ipc oop µs", "busbw",
              "cuda_ipc in place µs", "busbw"]
    return table(header, rows) + "\n\n" + provenance(CUDAIPC)


def ranks_table() -> str:
    two = dense_rows(os.path.join(RUN, "devicebench", "all_reduce_device_n2.log"))
    four = dense_rows(os.path.join(RUN, "devicebench", "all_reduce_device_n4.log"))
    rows = [[size_text(a[0]), f"{a[1]:.0f}", f"{a[2]:.2f}", f"{b[1]:.0f}", f"{b[2]:.2f}"]
            for a, b in zip(two, four)]
    return (table(["bytes", "n=2 oop µs", "busbw", "n=4 oop µs", "busbw"], rows) + "\n\n"
            + provenance(DEVICEBENCH))


def sparse_table() -> str:
    rows = []
    for n in (2, 4):
        for density in ("0.001", "0.01", "0.05"):
            algorithm, sparse, dense = sparse_row(
                os.path.join(RUN, "devicebench", f"sparse_device_n{n}_d{density}.log"))
            chosen = "dense" if algorithm == "dense" else algorithm.upper()
            ratio = f"{dense / sparse:.2f}"
            rows.append([n, f"{float(density) * 100:g} %", chosen, f"{sparse:.0f}", f"{dense:.0f}",
                         f"**{ratio}**" if dense > sparse else ratio])
    return (table(["ranks", "density", "chosen", "sparse µs", "dense µs", "dense / sparse"], rows)
            + "\n\n" + provenance(DEVICEBENCH))


def pieces_table() -> str:
    rows = []
    for collective, label in (("all_reduce", "all-reduce"), ("all_gather", "all-gather"),
                              ("reduce_scatter", "reduce-scatter")):
        off = dense_rows(os.path.join(RUN, "pieces", f"{collective}_pieces_off.log"))
        cut = dense_rows(os.path.join(RUN, "pieces", f"{collective}_pieces_4194304.log"))
        for a, b in zip(off, cut):
            rows.append([label, size_text(a[0]), f"{a[1]:.0f}", f"{b[1]:.0f}", f"{a[1] / b[1]:.2f}"])
    return (table(["collective", "bytes", "pieces off µs", "4 MiB pieces µs", "off / pieces"], rows)
            + "\n\n" + provenance(PIECES))


def torch_table() -> str:
    def losses(name: str) -> list:
        with open(os.path.join(RUN, "torch", f"{name}.losses.json")) as f:
            return json.load(f)["losses"]["ddp"]

    rates = {}
    for line in open(TORCH):
        if line.startswith("[ddp] steps/s "):
            continue
        if line.startswith("== ") and ": " in line and "rank(s)" in line:
            current = line.split()[1].rstrip(":")
        elif line.startswith("[ddp] ") and "steps/s;" in line:
            rates[current] = float(line.split()[1])
    rows = []
    for name, label, reference in (
            ("plain_nccl_n1", "torch's NCCL, 1 rank", None),
            ("shim_forward_n1", "drop-in, forward, 1 rank", "plain_nccl_n1"),
            ("gloo_cuda_n2", "gloo on CUDA tensors, 2 ranks", None),
            ("shim_replace_n2", "drop-in, replace, 2 ranks", "gloo_cuda_n2"),
            ("gloo_cuda_n4", "gloo on CUDA tensors, 4 ranks", None),
            ("shim_replace_n4", "drop-in, replace, 4 ranks", "gloo_cuda_n4")):
        if reference is None:
            compared = "(reference)"
        else:
            got, want = losses(name), losses(reference)
            equal = sum(g == w for g, w in zip(got, want))
            worst = max(abs(g - w) / abs(w) for g, w in zip(got, want))
            compared = f"{equal} of {len(want)} steps bit-equal, max relative difference {worst:.2g}"
        rows.append([label, f"{rates[name]:.1f}", compared])
    return (table(["run", "steps/s", "rank 0's losses against the reference"], rows) + "\n\n"
            + provenance(TORCH))


SOURCES = [CUDAIPC, DEVICEBENCH, PIECES, TORCH]
TABLES = [
    ("gpu.md", "gpu-transports", transports_table, [CUDAIPC]),
    ("gpu.md", "gpu-ranks", ranks_table, [DEVICEBENCH]),
    ("gpu.md", "gpu-sparse", sparse_table, [DEVICEBENCH]),
    ("gpu.md", "gpu-pieces", pieces_table, [PIECES]),
    ("gpu.md", "gpu-torch", torch_table, [TORCH]),
]
PLOTS = []
