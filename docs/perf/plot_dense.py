#!/usr/bin/python3
"""Plots docs/perf/dense_allreduce.csv (the dense all-reduce comparison) to
docs/perf/dense_allreduce.png: median seconds per peer on the 1 Gbit/s
testbed (n = 4 and 8) with the ring's link limit drawn in."""
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
rows = list(csv.DictReader(open(os.path.join(here, "dense_allreduce.csv"))))
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
size = 64 * 2**20
for ax, n in zip(axes, (4, 8)):
    sel = [r for r in rows if r["setting"].startswith("testbed") and int(r["n"]) == n]
    names = [r["peer"] for r in sel]
    times = [float(r["median_s"]) for r in sel]
    colors = ["tab:red" if p == "spccl" else "tab:gray" for p in names]
    ax.bar(names, times, color=colors)
    limit = 2 * (n - 1) / n * size * 8 / 1e9
    ax.axhline(limit, color="black", linestyle="--", linewidth=1, label=f"link limit {limit:.3f} s")
    ax.set_title(f"64 MiB float32 all-reduce, n = {n}, 1 Gbit/s")
    ax.tick_params(axis="x", rotation=20)
    ax.legend()
axes[0].set_ylabel("median seconds (slowest rank)")
fig.tight_layout()
fig.savefig(os.path.join(here, "dense_allreduce.png"), dpi=110)
