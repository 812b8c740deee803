#!/usr/bin/python3
"""Plots docs/perf/sparse_sweep.csv (tests/netns/bench_sparse_sweep.sh: the
sparse all-reduce against density for every algorithm, 1 Gbit/s testbed)
to docs/perf/sparse_sweep.png, and prints the markdown tables of
docs/perf/sparse.md: median seconds per algorithm, spccl's dense all-reduce
of the same inputs, what auto chose and auto's time over the best one.
Rows with algorithm "auto-measured" (auto with SPCCL_SPARSE_MEASURED_TIMES=1)
get their own columns and line."""
import csv
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "sparse_sweep.csv")
rows = list(csv.DictReader(open(path)))
algorithms = ["bp", "hc", "agsparse", "block"]
autos = ["auto"] + (["auto-measured"] if any(r["algorithm"] == "auto-measured" for r in rows) else [])
ns = sorted({int(r["n"]) for r in rows})


def nominal(density: float) -> float:
    """The sweep's requested density (the CSV has the measured mean)."""
    for d in (0.001, 0.005, 0.01, 0.05, 0.1, 0.5):
        if abs(density - d) / d < 0.2:
            return d
    return density


fig, axes = plt.subplots(1, len(ns), figsize=(6 * len(ns), 4.5), squeeze=False)
for ax, n in zip(axes[0], ns):
    sel = [r for r in rows if int(r["n"]) == n]
    densities = sorted({nominal(float(r["density"])) for r in sel})
    table = {}
    for r in sel:
        table[(nominal(float(r["density"])), r["algorithm"])] = r
    print(f"\n### n = {n}\n")
    print("| density | " + " | ".join(algorithms) + " | dense | "
          + " | ".join(f"{a} (chose) | {a} / best" for a in autos) + " | wrong |")
    print("|---" * (len(algorithms) + 3 + 2 * len(autos)) + "|")
    for d in densities:
        cells = []
        times = {}
        for a in algorithms:
            r = table.get((d, a))
            if r:
                times[a] = float(r["median_s"])
                cells.append(f"{times[a]:.3f}")
            else:
                cells.append("-")
        dense_times = [float(table[(d, a)]["dense_median_s"]) for a in algorithms + autos
                       if (d, a) in table]
        dense = statistics.median(dense_times) if dense_times else float("nan")
        times["dense"] = dense
        best = min(times.values())
        wrong = sum(int(table[(d, a)]["wrong"]) for a in algorithms + autos if (d, a) in table)
        for a in autos:
            r = table.get((d, a))
            cells.append(f"{dense:.3f}" if a == "auto" else "")
            if r:
                cells.append(f"{float(r['median_s']):.3f} ({r['chosen']})")
                cells.append(f"{float(r['median_s']) / best:.2f}")
            else:
                cells += ["-", "-"]
        cells = [c for c in cells if c != ""]
        print(f"| {d * 100:g} % | " + " | ".join(cells) + f" | {wrong} |")
    for a in algorithms + autos:
        xs = [d for d in densities if (d, a) in table]
        ys = [float(table[(d, a)]["median_s"]) for d in xs]
        style = dict(marker=".")
        if a == "auto":
            style = dict(linewidth=2.5, color="black", marker="o")
        elif a == "auto-measured":
            style = dict(linewidth=2, color="tab:red", marker="s", linestyle=":")
        ax.plot([x * 100 for x in xs], ys, label=a, **style)
    dense = [statistics.median(float(table[(d, a)]["dense_median_s"]) for a in algorithms + autos
                               if (d, a) in table) for d in densities]
    ax.plot([d * 100 for d in densities], dense, "--", color="gray", label="dense (spccl ring)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("density per rank (%)")
    ax.set_ylabel("median seconds (slowest rank)")
    ax.set_title(f"sparse all-reduce, 16 M float32, n = {n}, 1 Gbit/s, overlap 0.5")
    ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(os.path.join(here, "sparse_sweep.png"), dpi=110)
