"""docs/perf/codecs.md: the CPU codecs' throughput on one core
(perf/codec_throughput's rows; the raw file may hold several runs, each
starting with the binary's "# count" line: every cell is the median over
the runs)."""
from .common import median, provenance, raw_path, table

THROUGHPUT = raw_path("codec_throughput", "codec_throughput.txt")
OPS = ["quantize", "quantize + EF", "dequantize", "dequantizeAdd"]


def cells() -> dict:
    """{(variant, codec, bits, type): [GB/s per op, median over the runs]}."""
    samples = {}
    for line in open(THROUGHPUT):
        if line.startswith("#") or "|" not in line:
            continue
        head, quant, dequant = (p.split() for p in line.split("|"))
        variant, codec, bits, dtype = head
        key = (variant, codec, int(bits), dtype)
        samples.setdefault(key, []).append([float(x) for x in quant + dequant])
    return {key: [median([run[i] for run in runs]) for i in range(4)] for key, runs in samples.items()}


def runs_count() -> int:
    return sum(1 for line in open(THROUGHPUT) if line.startswith("# count"))


def fastest(data: dict) -> str:
    """The variant the library runs here (cpuKernels(): the last one the CPU supports)."""
    variants = [v for v, *_ in data]
    for v in ("avx2+f16c", "avx2", "baseline"):
        if v in variants:
            return v
    return "reference"


def variants_table(dtype: str) -> str:
    data = cells()
    best = fastest(data)
    rows = []
    for codec in ("piecewise", "linear"):
        for bits in sorted({b for (_, c, b, t) in data if c == codec and t == dtype}):
            ref, fast, base = (data[(v, codec, bits, dtype)] for v in ("reference", best, "baseline"))
            rows.append([codec, bits] + [f"{r:.2f} → **{f:.2f}** ({b:.2f})" for r, f, b in zip(ref, fast, base)])
    return (f"reference → **{best}** (baseline), GB/s, median of {runs_count()} runs\n\n"
            + table(["codec", "bits"] + OPS, rows) + "\n\n" + provenance(THROUGHPUT))


def f16c_table() -> str:
    data = cells()
    rows = []
    for codec in ("piecewise", "linear"):
        for bits in sorted({b for (_, c, b, t) in data if c == codec and t == "f16"}):
            before, after = data[("avx2", codec, bits, "f16")], data[("avx2+f16c", codec, bits, "f16")]
            rows.append([codec, bits] + [f"{b:.2f} → **{a:.2f}**" for b, a in zip(before, after)])
    return table(["codec", "bits"] + OPS, rows) + "\n\n" + provenance(THROUGHPUT)


def ratio_table() -> str:
    data = cells()
    rows = []
    for dtype, before, after in (("f16", "avx2", "avx2+f16c"), ("f32", "avx2", "avx2+f16c"),
                                 ("bf16", "avx2", "avx2+f16c"), ("f32", "baseline", "avx2"),
                                 ("f32", "reference", "avx2+f16c"), ("f16", "reference", "avx2+f16c"),
                                 ("bf16", "reference", "avx2+f16c")):
        keys = [(c, b) for (v, c, b, t) in data if v == after and t == dtype]
        line = [dtype, f"{before} → {after}"]
        for i in range(4):
            ratios = [data[(after, c, b, dtype)][i] / data[(before, c, b, dtype)][i] for c, b in keys]
            line.append(f"{median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})")
        rows.append(line)
    return (table(["type", "compared", *OPS], rows) + "\n\nMedian (range) over the 14 rows (2 codecs × "
            "widths 2–8) of the ratio after / before.\n\n" + provenance(THROUGHPUT))


TABLES = [("codecs.md", f"codecs-{t}", (lambda t=t: variants_table(t)), [THROUGHPUT])
          for t in ("f32", "f16", "bf16")] + [
    ("codecs.md", "codecs-f16c", f16c_table, [THROUGHPUT]),
    ("codecs.md", "codecs-ratios", ratio_table, [THROUGHPUT]),
]
PLOTS = []
