"""docs/perf/dense.md: the dense all-reduce beside Gloo and Open MPI on the
1 Gbit/s testbed (tests/netns/bench_peers.sh) and on loopback
(bench_loopback.sh); the plot dense_allreduce.png (the README's headline)."""
import os

from .common import median, provenance, raw_path, read_jsonl, ring_limit_s, table, thousands

DIR = raw_path("dense")
SIZE = 67108864
RATE = "1gbit"
TESTBED = {n: os.path.join(DIR, f"peers-n{n}-{RATE}-{SIZE}.jsonl") for n in (4, 8)}
# The time-dilated testbed (tests/netns/lib/dilation.sh): 1 Gbit/s x 2 cores / 8 ranks.
DILATED_RATE = "250mbit"
DILATED = {8: os.path.join(DIR, f"peers-n8-{DILATED_RATE}-{SIZE}.jsonl")}
LOOPBACK = os.path.join(DIR, f"loopback-n4-{SIZE}.jsonl")
LABELS = {
    "gloo": "Gloo (torch {torch})",
    "openmpi-ring": "Open MPI 4.1 ring (forced)",
    "openmpi-default": "Open MPI 4.1 default",
    "spccl": "**spccl** (tcp, ring)",
    "spccl-shm": "spccl, shm transport (process_vm_readv, single copy)",
    "spccl-tcp": "spccl, tcp transport",
    "openmpi": "Open MPI 4.1 (vader shared memory)",
}


def by_peer(path: str) -> dict:
    """{peer: [each round's JSON line]} in the order the peers ran."""
    peers = {}
    for run in read_jsonl(path):
        peers.setdefault(run["peer"], []).append(run["result"])
    return peers


def label(peer: str, results: list) -> str:
    return LABELS.get(peer, peer).format(torch=results[0].get("torch", "?").split("a")[0])


def testbed_rows(runs: dict = TESTBED, rate: str = RATE) -> list:
    """(n, peer, label, median s, rounds, fraction of the link limit, results)."""
    rows = []
    for n, path in runs.items():
        limit = ring_limit_s(n, SIZE, rate)
        for peer, results in by_peer(path).items():
            times = [r["median_s"] for r in results]
            rows.append((n, peer, label(peer, results), median(times), times, limit / median(times),
                         results))
    return rows


def testbed_table(runs: dict = TESTBED, rate: str = RATE) -> str:
    out = []
    for n, peer, name, med, times, fraction, _ in testbed_rows(runs, rate):
        bold = "**" if peer == "spccl" else ""
        out.append([n, name, f"{bold}{med:.3f}{bold}", " / ".join(f"{t:.3f}" for t in times),
                    f"{bold}{100 * fraction:.0f} %{bold}"])
    notes = []
    for n, peer, _, _, _, _, results in testbed_rows(runs, rate):
        if peer == "spccl":
            sent = median([r["bytes_sent_per_rank"] for r in results])
            ring = 2 * (n - 1) / n * SIZE
            cpu = median([r["cpu_s_per_iter"] for r in results])
            wrong = sum(r["wrong"] for r in results)
            notes.append(f"n = {n}: spccl sent {thousands(sent)} bytes per rank per call (the ring's "
                         f"2(n−1)/n · S = {thousands(ring)}), {cpu:.3f} CPU-s per call per rank, "
                         f"{wrong} wrong elements")
    limits = ", ".join(f"{ring_limit_s(n, SIZE, rate):.3f} s (n = {n})" for n in runs)
    return (table(["n", "peer", "median s", "rounds", "of ring link limit"], out)
            + f"\n\nLink limit of a ring all-reduce, 2(n−1)/n · S / b: {limits}. "
            + "; ".join(notes) + ".\n\n" + provenance(*runs.values()))


def loopback_table() -> str:
    n = 4
    out = []
    for peer, results in by_peer(LOOPBACK).items():
        times = [r["median_s"] for r in results]
        med = median(times)
        out.append([label(peer, results), f"{med:.3f}", " / ".join(f"{t:.3f}" for t in times),
                    f"{2 * (n - 1) / n * SIZE / med / 1e9:.2f}"])
    return (table([f"peer (n = {n})", "median s", "rounds", "busbw GB/s"], out) + "\n\n"
            + provenance(LOOPBACK))


def draw(png: str) -> None:
    from .common import pyplot

    plt = pyplot()
    rows = testbed_rows()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, n in zip(axes, TESTBED):
        sel = [r for r in rows if r[0] == n]
        names = [r[1] for r in sel]
        times = [r[3] for r in sel]
        spread = [[r[3] - min(r[4]) for r in sel], [max(r[4]) - r[3] for r in sel]]
        colors = ["tab:red" if p == "spccl" else "tab:gray" for p in names]
        ax.bar(names, times, color=colors, yerr=spread, capsize=3)
        limit = ring_limit_s(n, SIZE, RATE)
        ax.axhline(limit, color="black", linestyle="--", linewidth=1, label=f"link limit {limit:.3f} s")
        ax.set_title(f"64 MiB float32 all-reduce, n = {n}, 1 Gbit/s")
        ax.tick_params(axis="x", rotation=20)
        ax.legend()
    axes[0].set_ylabel("median seconds (slowest rank)")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


TABLES = [
    ("dense.md", "dense-testbed", testbed_table, list(TESTBED.values())),
    ("dense.md", "dense-testbed-dilated", lambda: testbed_table(DILATED, DILATED_RATE),
     list(DILATED.values())),
    ("dense.md", "dense-loopback", loopback_table, [LOOPBACK]),
]
PLOTS = [("dense_allreduce.png", draw, list(TESTBED.values()))]
