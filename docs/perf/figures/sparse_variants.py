"""sparse.md, "What the variants beyond Zen buy": the partitioners (BP) and
the encodings (BP, HC) on the same inputs, from docs/perf/sparse_variants.sh
(one JSON line per run)."""
import os

from .common import provenance, raw_path, read_jsonl, sig3, table, thousands

DIR = raw_path("sparse_variants")
FILES = [os.path.join(DIR, f"variants-n{n}.jsonl") for n in (8, 4)]
IR = os.path.join(DIR, "ir-n4.txt")
DILATED = os.path.join(DIR, "variants-n8-dilated.jsonl")
PARTITIONERS = ("zen-hash", "two-pass", "permutation")
ENCODINGS = ("coo", "bitmap", "packed", "auto")
WORKLOADS = {"uniform": "uniform, `-O 0.5`", "zipf": "Zipf rows, `-Z 1.1 -H 64`"}


def runs() -> dict:
    """(n, workload, density, algorithm, encoding, partitioner) -> record."""
    out = {}
    for path in FILES:
        for r in read_jsonl(path):
            key = (r["n"], r["workload"], r["density"], r["algorithm"], r["encoding"], r["partitioner"])
            if key in out:
                raise SystemExit(f"make_figures: {path}: {key} measured twice")
            out[key] = r
    return out


def groups(data: dict) -> list:
    """(n, workload, density) in the tables' order: n down, uniform first, density up."""
    keys = {(n, w, d) for (n, w, d, _, _, _) in data}
    return sorted(keys, key=lambda k: (-k[0], list(WORKLOADS).index(k[1]), k[2]))


def percent(density: float) -> str:
    return f"{density * 100:g} %"


def seconds(record: dict, field: str) -> float:
    sparse = record["result"]["sparse"]
    return sparse["cpu_s_per_iter"] if field == "cpu" else sparse["median_time_us"] / 1e6


def load_range(records: list) -> str:
    loads = [r["load_1min"] for r in records]
    return f"{min(loads):.0f}–{max(loads):.0f}"


def partition_table() -> str:
    data = runs()
    rows = []
    for n, workload, density in groups(data):
        for p in PARTITIONERS:
            r = data[(n, workload, density, "bp", "auto", p)]
            res = r["result"]
            rows.append([n, WORKLOADS[workload], percent(density), p, thousands(res["stats_bytes_sent"]),
                         thousands(res["stats_bytes_sent_mean"]), f"{res['push_imbalance']:.3f}",
                         f"{res['pull_imbalance']:.3f}", sig3(seconds(r, "cpu")), sig3(seconds(r, "time")),
                         f"{r['load_1min']:.1f}"])
    header = ["n", "inputs", "density", "partitioner", "bytes sent/rank, max", "mean", "push imbalance",
              "pull imbalance", "CPU s/call", "median s", "load"]
    wrong = sum(r["result"]["sparse"]["wrong"] for r in data.values())
    return (table(header, rows) + f"\n\nWrong elements over every run of both tables: {wrong}.\n\n"
            + provenance(*FILES))


def encoding_table() -> str:
    data = runs()
    rows = []
    for n, workload, density in groups(data):
        for algorithm in ("hc", "bp"):
            recs = [data[(n, workload, density, algorithm, e, "permutation")] for e in ENCODINGS]
            sent = [r["result"]["stats_bytes_sent"] for r in recs]
            zen = min(sent[0], sent[1])
            rows.append([n, WORKLOADS[workload], percent(density), algorithm,
                         " / ".join(thousands(b) for b in sent), f"{sent[3] / zen:.3f}",
                         " / ".join(sig3(seconds(r, "cpu")) for r in recs),
                         " / ".join(sig3(seconds(r, "time")) for r in recs), load_range(recs)])
    header = ["n", "inputs", "density", "algorithm", "bytes sent/rank, max: coo / bitmap / packed / auto",
              "auto ÷ the better of coo, bitmap", "CPU s/call: coo / bitmap / packed / auto",
              "median s: coo / bitmap / packed / auto", "load"]
    return table(header, rows) + "\n\n" + provenance(*FILES)


def ir_table() -> str:
    """Callgrind instructions of one steady call (docs/perf/sparse_variants_ir.sh), millions."""
    ir = {}
    with open(IR) as f:
        for line in f:
            n, workload, density, algorithm, encoding, partitioner, count = line.split()
            ir[(workload, algorithm, encoding, partitioner)] = int(count) / 1e6
    n, density = int(n), float(density)
    cells = [ir[("uniform", "bp", "auto", p)] for p in PARTITIONERS]
    rows = [["bp", "partitioner: " + " / ".join(PARTITIONERS), WORKLOADS["uniform"],
             " / ".join(f"{c:.1f}" for c in cells)]]
    for algorithm in ("hc", "bp"):
        cells = [ir[("uniform", algorithm, e, "permutation")] for e in ENCODINGS]
        rows.append([algorithm, "encoding: " + " / ".join(ENCODINGS), WORKLOADS["uniform"],
                     " / ".join(f"{c:.1f}" for c in cells)])
    header = ["algorithm", "variants", "inputs", f"M instructions per call, rank 0 (n = {n}, {percent(density)})"]
    return table(header, rows) + "\n\n" + provenance(IR)


def dilated_table() -> str:
    """The same variants on the testbed at the dilated rate, one row each."""
    rows = []
    for r in read_jsonl(DILATED):
        res = r["result"]
        variant = f"-E {r['encoding']}" if r["partitioner"] == "permutation" else f"-P {r['partitioner']}"
        if r["algorithm"] == "bp" and r["encoding"] == "auto":
            variant = f"-E auto -P {r['partitioner']}"
        rows.append([r["algorithm"], variant, thousands(res["stats_bytes_sent"]),
                     sig3(seconds(r, "cpu")), sig3(seconds(r, "time")),
                     sig3(res["dense"]["median_time_us"] / 1e6), f"{r['load_1min']:.1f}"])
    first = read_jsonl(DILATED)[0]
    header = ["algorithm", "variant", "bytes sent/rank, max", "CPU s/call", "median s",
              "dense ring, same run: median s", "load"]
    return (table(header, rows) + f"\n\nn = {first['n']}, {first['links']} links, "
            f"{WORKLOADS[first['workload']]}, {percent(first['density'])}.\n\n" + provenance(DILATED))


TABLES = [
    ("sparse.md", "sparse-variants-partition", partition_table, [DIR]),
    ("sparse.md", "sparse-variants-encoding", encoding_table, [DIR]),
    ("sparse.md", "sparse-variants-ir", ir_table, [IR]),
    ("sparse.md", "sparse-variants-dilated", dilated_table, [DILATED]),
]
PLOTS = []
