"""docs/perf/sparse.md: the sparse all-reduce beside Gloo
(tests/netns/bench_sparse.sh), against density for every algorithm
(bench_sparse_sweep.sh), the planner's two regimes (the sweep with other
inputs), the MPI interposer (bench_mpi_interpose.sh) and the variants
beyond Zen (sparse_variants.py)."""
import csv
import glob
import os

from . import sparse_fit, sparse_variants
from .common import median, provenance, raw_path, read_jsonl, table, thousands

SWEEP_DIR = raw_path("sparse_sweep")
GLOO_DIR = raw_path("sparse_gloo")
GLOO_1 = os.path.join(GLOO_DIR, "sparse-n8-1gbit-67108864-d0.01.jsonl")
GLOO_1_COO = os.path.join(GLOO_DIR, "sparse-n8-1gbit-67108864-d0.01-coo.jsonl")
GLOO_5 = os.path.join(GLOO_DIR, "sparse-n8-1gbit-67108864-d0.05.jsonl")
# The time-dilated testbed: 1 Gbit/s x 2 cores / 8 ranks.
HALF_DILATED = raw_path("sparse_sweep_dilated", "high-density-n8-16m-d50-twice.csv")
LINK_TIME_DILATED = raw_path("sparse_sweep_dilated", "link-time-n8-64m.csv")
# The same sweep with the schedules' messages in pieces (SPCCL_SPARSE_PIECE_BYTES
# at its default), against the sweep above (one message per stage), both on
# a quiet machine; and the COO API (no dense input to scan, no dense output).
PIECES_ON = raw_path("sparse_sweep_dilated", "link-time-n8-64m-pieces.csv")
PIECES_OFF = LINK_TIME_DILATED
PIECES_COO = raw_path("sparse_sweep_dilated", "link-time-n8-64m-pieces-coo.csv")
GLOO_1_DILATED = os.path.join(GLOO_DIR, "sparse-n8-250mbit-67108864-d0.01.jsonl")
REGIMES_DIR = raw_path("sparse_regimes")
REGIMES = [("no overlap (`-O 0`), 0.1 %", "overlap0", 0.001),
           ("no overlap (`-O 0`), 1 %", "overlap0", 0.01),
           ("Zipf rows (`-Z 1.1 -H 64`: embedding-like, 64-wide rows), 1 %", "zipf", 0.01)]
MPI = raw_path("mpi_interpose", "mpi-interpose-n8-1gbit-16777216-d0.01.jsonl")
ALGORITHMS = ["bp", "hc", "agsparse", "block"]


def nominal(density: float) -> float:
    """The requested density (the CSV has the measured mean)."""
    for d in (0.001, 0.005, 0.01, 0.05, 0.1, 0.5):
        if abs(density - d) / d < 0.2:
            return d
    return density


def read_sweep(*paths: str) -> dict:
    """{(n, nominal density, algorithm): row}; a point in two files is an error."""
    rows = {}
    for path in paths:
        for r in csv.DictReader(open(path)):
            key = (int(r["n"]), nominal(float(r["density"])), r["algorithm"])
            if key in rows:
                raise SystemExit(f"make_figures: {path}: {key} measured twice; remove the older file")
            rows[key] = r
    return rows


def sweep_files() -> list:
    """Every bench_sparse_sweep.sh CSV of the density sweep."""
    files = sorted(glob.glob(os.path.join(SWEEP_DIR, "*.csv")))
    if not files:
        raise FileNotFoundError(2, "no sweep CSV", SWEEP_DIR)
    return files


def dense_median(rows: dict, n: int, d: float) -> float:
    """spccl's dense all-reduce of the same inputs, over every run at (n, d)."""
    return median([float(r["dense_median_s"]) for (m, e, _), r in rows.items() if (m, e) == (n, d)])


def sweep_table(n: int) -> str:
    rows = read_sweep(*sweep_files())
    densities = sorted({d for (m, d, _) in rows if m == n})
    out = []
    for d in densities:
        times = {a: float(rows[(n, d, a)]["median_s"]) for a in ALGORITHMS if (n, d, a) in rows}
        dense = dense_median(rows, n, d)
        best = min(list(times.values()) + [dense])
        auto = rows.get((n, d, "auto"))
        wrong = sum(int(r["wrong"]) for (m, e, _), r in rows.items() if (m, e) == (n, d))
        out.append([f"{d * 100:g} %"] + [f"{times[a]:.3f}" if a in times else "-" for a in ALGORITHMS]
                   + [f"{dense:.3f}",
                      f"{float(auto['median_s']):.3f} ({auto['chosen']})" if auto else "-",
                      f"{float(auto['median_s']) / best:.2f}" if auto else "-", wrong])
    header = ["density"] + ALGORITHMS + ["dense", "auto (chose)", "auto / best", "wrong"]
    return table(header, out) + "\n\n" + provenance(*sweep_files())


def draw_sweep(png: str) -> None:
    from .common import pyplot

    plt = pyplot()
    rows = read_sweep(*sweep_files())
    ns = sorted({n for (n, _, _) in rows})
    fig, axes = plt.subplots(1, len(ns), figsize=(6 * len(ns), 4.5), squeeze=False)
    for ax, n in zip(axes[0], ns):
        densities = sorted({d for (m, d, _) in rows if m == n})
        for a in ALGORITHMS + ["auto"]:
            xs = [d for d in densities if (n, d, a) in rows]
            style = dict(linewidth=2.5, color="black", marker="o") if a == "auto" else dict(marker=".")
            ax.plot([x * 100 for x in xs], [float(rows[(n, x, a)]["median_s"]) for x in xs], label=a,
                    **style)
        ax.plot([d * 100 for d in densities], [dense_median(rows, n, d) for d in densities], "--",
                color="gray", label="dense (spccl ring)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("density per rank (%)")
        ax.set_ylabel("median seconds (slowest rank)")
        ax.set_title(f"sparse all-reduce, 16 M float32, n = {n}, 1 Gbit/s, overlap 0.5")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def side_by_side(runs: dict) -> dict:
    """One bench_sparse.sh file: medians over its rounds."""
    gloo = [r["result"]["median_s"] for r in runs if r["peer"] == "gloo-sparse"]
    spccl = [r["result"] for r in runs if r["peer"] == "spccl"]
    return {
        "gloo": median(gloo), "gloo_rounds": gloo,
        "spccl": median([s["median_s"] for s in spccl]), "spccl_rounds": [s["median_s"] for s in spccl],
        "dense": median([s["dense_median_s"] for s in spccl]),
        "chose": sorted({s["algorithm"] for s in spccl}),
        "spccl_rounds_chose": [s["algorithm"] for s in spccl],
        "sent": median([s["bytes_sent_per_rank"] for s in spccl]),
        "predicted": median([s["predicted_bytes_sent"] for s in spccl]),
        "cpu": median([s["cpu_s_per_iter"] for s in spccl]),
        "wrong": sum(s["wrong"] for s in spccl), "rounds": len(spccl),
    }


def rounds_text(values: list) -> str:
    return " / ".join(f"{v:.3f}" for v in values)


def gloo_table() -> str:
    columns = [("dense API", side_by_side(read_jsonl(GLOO_1))),
               ("COO API", side_by_side(read_jsonl(GLOO_1_COO)))]
    rows = [
        ["Gloo sparse all-reduce (torch sparse COO, all-gather)"]
        + [f"{c['gloo']:.3f} s ({rounds_text(c['gloo_rounds'])})" for _, c in columns],
        ["spccl sparse, auto (chose " + "/".join(sorted({a for _, c in columns for a in c["chose"]})) + ")"]
        + [f"{c['spccl']:.3f} s ({rounds_text(c['spccl_rounds'])})" for _, c in columns],
        ["spccl dense ring, same inputs"] + [f"{c['dense']:.3f} s" for _, c in columns],
        ["speed-up over Gloo / over the dense ring"]
        + [f"{c['gloo'] / c['spccl']:.1f}× / {c['dense'] / c['spccl']:.1f}×" for _, c in columns],
        ["bytes sent per rank: measured / the chosen schedule's formula"]
        + [f"{thousands(c['sent'])} / {thousands(c['predicted'])} ({100 * (c['sent'] / c['predicted'] - 1):+.2f} %)"
           for _, c in columns],
        ["CPU seconds per call per rank (spccl sparse)"] + [f"{c['cpu']:.3f}" for _, c in columns],
        ["wrong elements (every round checked)"] + [str(c["wrong"]) for _, c in columns],
    ]
    return (table(["what"] + [name for name, _ in columns], rows)
            + "\n\nMedian over rounds (each round: median of 5 timed calls, slowest rank; the rounds in brackets)."
            + "\n\n" + provenance(GLOO_1, GLOO_1_COO))


def dilated_gloo_table() -> str:
    c = side_by_side(read_jsonl(GLOO_1_DILATED))
    link_s = c["sent"] * 8 / 250e6
    rows = [["Gloo sparse all-reduce", f"{c['gloo']:.3f}", rounds_text(c["gloo_rounds"])],
            [f"spccl sparse, auto (chose {'/'.join(c['chose'])})", f"**{c['spccl']:.3f}**",
             rounds_text(c["spccl_rounds"])],
            ["spccl dense ring, same inputs", f"{c['dense']:.3f}", ""]]
    return (table(["what", "median s", "rounds"], rows)
            + f"\n\nspccl auto: **{c['gloo'] / c['spccl']:.1f}×** Gloo's speed and "
            f"**{c['dense'] / c['spccl']:.1f}×** the dense ring's; {thousands(c['sent'])} bytes sent per "
            f"rank ({link_s:.3f} s on a 250 Mbit/s link: the call took {c['spccl'] / link_s:.2f}× that), "
            f"{c['cpu']:.3f} CPU-s per call per rank; wrong elements: {c['wrong']}.\n\n"
            + provenance(GLOO_1_DILATED))


def auto_at_half_table() -> str:
    """auto against the best at 50 %: two passes of auto, BP and dense (the sparse API's)."""
    import csv

    rows = list(csv.DictReader(open(HALF_DILATED)))
    passes = [rows[i:i + 3] for i in range(0, len(rows), 3)]
    out = []
    for k, run in enumerate(passes, 1):
        times = {r["algorithm"]: float(r["median_s"]) for r in run}
        ring = median([float(r["dense_median_s"]) for r in run])
        best = min(min(times.values()), ring)
        chose = next(r["chosen"] for r in run if r["algorithm"] == "auto")
        out.append([k, f"{times['auto']:.3f} ({chose})", f"{times['bp']:.3f}", f"{times['dense']:.3f}",
                    f"{ring:.3f}", f"**{times['auto'] / best:.2f}**"])
    return (table(["pass", "auto (chose)", "bp", "dense (sparse call)", "dense ring (plain)",
                   "auto / best"], out)
            + "\n\n" + provenance(HALF_DILATED))


def link_time_rows(path: str) -> list:
    """(density, label, seconds, bytes sent, link seconds, row) per run of a sweep CSV,
    against the time its own bytes need on a 250 Mbit/s link."""
    out = []
    for r in csv.DictReader(open(path)):
        seconds, sent = float(r["median_s"]), float(r["bytes_sent"])
        label = r["algorithm"] + (f" ({r['chosen']})" if r["algorithm"] == "auto" else "")
        out.append((f"{100 * float(r['density']):.2g} %", label, seconds, sent, sent * 8 / 250e6, r))
    return out


def link_time_table(path: str = LINK_TIME_DILATED) -> str:
    """Each run's time against the time its own bytes need on a 250 Mbit/s link."""
    out = [[density, label, f"{seconds:.3f}", thousands(sent), f"{link:.3f}",
            f"**{seconds / link:.2f}**", f"{float(r['dense_median_s']) / seconds:.1f}×", r["wrong"]]
           for density, label, seconds, sent, link, r in link_time_rows(path)]
    return (table(["density", "algorithm", "median s", "bytes sent per rank", "link time s",
                   "time / link time", "dense ring / this", "wrong"], out)
            + "\n\n" + provenance(path))


def pieces_table() -> str:
    """The link-time sweep with pieces against without, row by row."""
    off = {(d, a.split(" ")[0]): (s, link, r) for d, a, s, _, link, r in link_time_rows(PIECES_OFF)}
    out = []
    for density, label, seconds, sent, link, r in link_time_rows(PIECES_ON):
        before, before_link, before_row = off[(density, label.split(" ")[0])]
        before_label = before_row["chosen"] if r["algorithm"] == "auto" else ""
        out.append([density, label + (f" / {before_label}" if before_label else ""),
                    f"{before:.3f} ({before / before_link:.2f}×)",
                    f"**{seconds:.3f}** (**{seconds / link:.2f}×**)", f"{before / seconds:.2f}×",
                    thousands(sent), f"{float(r['dense_median_s']) / seconds:.1f}×",
                    f"{before_row['wrong']} / {r['wrong']}"])
    return (table(["density", "algorithm (auto: chose with / without)",
                   "without pieces: s (× link time)", "with pieces: s (× link time)", "speed-up",
                   "bytes sent per rank", "dense ring / with pieces", "wrong (without / with)"], out)
            + "\n\n" + provenance(PIECES_OFF, PIECES_ON))


def five_percent_table() -> str:
    c = side_by_side(read_jsonl(GLOO_5))
    chosen = " / ".join(f"{t:.3f} ({a})" for t, a in zip(c["spccl_rounds"], c["spccl_rounds_chose"]))
    rows = [["Gloo sparse", f"{c['gloo']:.3f}", rounds_text(c["gloo_rounds"])],
            ["spccl auto (chose)", f"{c['spccl']:.3f}", chosen],
            ["spccl dense ring, same inputs", f"{c['dense']:.3f}", ""]]
    return (table(["what", "median s", "rounds"], rows)
            + f"\n\nspccl auto: {c['gloo'] / c['spccl']:.1f}× faster than Gloo, {c['dense'] / c['spccl']:.2f}× "
            f"the dense ring's speed; wrong elements: {c['wrong']}.\n\n" + provenance(GLOO_5))


def regimes_table() -> str:
    paths = {key: os.path.join(REGIMES_DIR, f"{key}.csv") for key in ("overlap0", "zipf")}
    links = {key: os.path.join(REGIMES_DIR, f"{key}-links-only.csv") for key in paths}
    rows = []
    for label, key, d in REGIMES:
        sweep, alpha_beta = read_sweep(paths[key]), read_sweep(links[key])
        n = next(m for (m, _, _) in sweep)
        auto, auto_ab = sweep[(n, d, "auto")], alpha_beta[(n, d, "auto")]
        rows.append([label, f"{float(auto['median_s']):.3f} ({auto['chosen']})",
                     f"{float(auto_ab['median_s']):.3f} ({auto_ab['chosen']})"]
                    + [f"{float(sweep[(n, d, a)]['median_s']):.3f}" if (n, d, a) in sweep else "-"
                       for a in ("bp", "hc", "agsparse")]
                    + [f"{dense_median(sweep, n, d):.3f}",
                       f"{thousands(float(auto['bytes_sent']))} / {thousands(float(auto['predicted_bytes']))}"])
    header = ["workload", "auto (chose)", "auto, links only (chose)", "bp", "hc", "agsparse", "dense",
              "bytes/rank of auto's choice: measured / formula"]
    sources = list(paths.values()) + list(links.values())
    return table(header, rows) + "\n\n" + provenance(*sources)


def mpi_table() -> str:
    runs = read_jsonl(MPI)
    rows, med = [], {}
    for peer, label in (("plain", "Open MPI 4.1 (no preload)"),
                        ("spccl", "same binary, `LD_PRELOAD=libspccl_mpi_interpose.so`")):
        mine = [r for r in runs if r["peer"] == peer]
        med[peer] = median([r["result"]["median_s"] for r in mine])
        rows.append([label, f"{med[peer]:.3f}", rounds_text([r["result"]["median_s"] for r in mine]),
                     sum(r["result"]["wrong"] for r in mine), f"{median([r['wall_s'] for r in mine]):.2f}"])
    return (table(["run", "median s per call", "rounds", "wrong", "mpirun wall s (median)"], rows)
            + f"\n\nSpeed-up with the interposer: {med['plain'] / med['spccl']:.1f}× per call.\n\n"
            + provenance(MPI))


TABLES = [
    ("sparse.md", "sparse-gloo-1pct", gloo_table, [GLOO_1, GLOO_1_COO]),
    ("sparse.md", "sparse-gloo-1pct-dilated", dilated_gloo_table, [GLOO_1_DILATED]),
    ("sparse.md", "sparse-auto-half-dilated", auto_at_half_table, [HALF_DILATED]),
    ("sparse.md", "sparse-link-time-dilated", link_time_table, [LINK_TIME_DILATED]),
    ("sparse.md", "sparse-pieces-dilated", pieces_table, [PIECES_ON, PIECES_OFF]),
    ("sparse.md", "sparse-pieces-coo-dilated", lambda: link_time_table(PIECES_COO), [PIECES_COO]),
    ("sparse.md", "sparse-gloo-5pct", five_percent_table, [GLOO_5]),
    ("sparse.md", "sparse-sweep-n4", lambda: sweep_table(4), [SWEEP_DIR]),
    ("sparse.md", "sparse-sweep-n8", lambda: sweep_table(8), [SWEEP_DIR]),
    ("sparse.md", "sparse-regimes", regimes_table, [REGIMES_DIR]),
    ("sparse.md", "sparse-mpi-interpose", mpi_table, [MPI]),
] + sparse_fit.TABLES + sparse_variants.TABLES
PLOTS = [("sparse_sweep.png", draw_sweep, [SWEEP_DIR])]
