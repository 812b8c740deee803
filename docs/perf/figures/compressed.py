"""docs/perf/compressed.md: the compressed all-reduce against spccl's dense
ring on the testbed (tests/netns/bench_compressed.sh: rank 0's output of
perf/compressed_all_reduce_perf per run)."""
from .common import median, provenance, raw_path, table, thousands

TESTBED = raw_path("compressed", "compressed-n8-1gbit-67108864.txt")
DILATED = raw_path("compressed", "compressed-n8-250mbit-67108864.txt")
MODES = {"two-shot": "piecewise 4-bit two-shot", "topk": "token top-k 50 % + piecewise 4-bit"}


def runs(path: str) -> dict:
    """{mode: [each round's row as a dict]}."""
    out, mode = {}, None
    for line in open(path):
        if line.startswith("## mode="):
            mode = line.split()[1].split("=")[1]
            continue
        if line.startswith("#") or "|" not in line or mode is None:
            continue
        parts = [p.split() for p in line.split("|")]
        _, count, _, _ = parts[0]
        dense_us, comp_us, speedup = map(float, parts[1])
        dense_cpu, comp_cpu = map(float, parts[2])
        ratio, wire, formula, _ = map(float, parts[3])
        max_err, rmse, rel_err = map(float, parts[4][:3])
        out.setdefault(mode, []).append({
            "count": int(count), "dense_s": dense_us / 1e6, "comp_s": comp_us / 1e6,
            "dense_cpu_s": dense_cpu / 1e6, "comp_cpu_s": comp_cpu / 1e6, "ratio": ratio,
            "wire": wire, "formula": formula, "max_err": max_err, "rel_err": rel_err,
            "wrong": int(parts[4][3]), "tokens": parts[6] if len(parts) > 6 else None})
        mode = None
    return out


def testbed_table(path: str) -> str:
    rows = []
    for mode, results in runs(path).items():
        dense = median([r["dense_s"] for r in results])
        comp = median([r["comp_s"] for r in results])
        speedups = [r["dense_s"] / r["comp_s"] for r in results]
        last = results[-1]
        rows.append([
            MODES.get(mode, mode), f"{dense:.3f}", f"{comp:.3f}",
            f"**{median(speedups):.2f}** ({' / '.join(f'{s:.2f}' for s in speedups)})",
            f"{median([r['dense_cpu_s'] for r in results]):.3f} / {median([r['comp_cpu_s'] for r in results]):.3f}",
            f"{thousands(last['wire'])} ({100 * last['wire'] / last['formula']:.1f} %)",
            f"{last['ratio']:.2f}", f"{last['max_err']:.3g} / {last['rel_err']:.3g}",
            sum(r["wrong"] for r in results)])
    header = ["run", "dense s", "compressed s", "speed-up (rounds)",
              "CPU s/call dense / compressed (per rank)", "wire B/rank (of formula)", "traffic ratio",
              "max err / rel err (kept)", "#wrong"]
    return (table(header, rows)
            + "\n\nTimes: each round's loop time / iterations, slowest rank (the binary's `dense_us` "
            "and `comp_us`; top-k's input-restoring memcpy timed on its own and subtracted), median "
            "over the rounds; speed-up per round in brackets.\n\n" + provenance(path))


TABLES = [("compressed.md", "compressed-testbed", lambda: testbed_table(TESTBED), [TESTBED]),
          ("compressed.md", "compressed-testbed-dilated", lambda: testbed_table(DILATED), [DILATED])]
PLOTS = []
