"""docs/perf/migration.md: perf/migrate_perf on the testbed
(tests/netns/bench_migrate.sh; each run's -J JSON is one line of the raw
file) and the plot migration.png."""
import os

from .common import median, provenance, raw_path, read_jsonl, table

DIR = raw_path("migration")
RUNS = {e: os.path.join(DIR, f"migrate-e{e}-1gbit.jsonl") for e in (4, 8)}
# migrate_perf --compute sleep (the device model) on the time-dilated
# testbed (1 Gbit/s x 2 cores / e): table name -> raw file.
SLEEP_RUNS = {
    f"migration-sleep-e{e}-{rate}-{flops}": os.path.join(DIR, f"migrate-e{e}-{rate}-sleep{flops}.jsonl")
    for e, rate in ((4, "500mbit"), (8, "250mbit")) for flops in ("20g", "4g")}
# The same compute-bound runs with (b)'s broadcasts queued during the own
# GEMMs (migrate_perf --overlap 1, spcclImigrateBroadcast).
SLEEP_RUNS.update({
    f"migration-sleep-e{e}-{rate}-4g-overlap":
        os.path.join(DIR, f"migrate-e{e}-{rate}-sleep4g-overlap.jsonl")
    for e, rate in ((4, "500mbit"), (8, "250mbit"))})
MODES = ["(a) none", "(b) bcast-reduce", "(c) scatter-gather", "(d) plan"]


def cells(path: str) -> tuple:
    """({(chi, mode): [row of each run]}, [each run's JSON])."""
    runs = [r["result"] for r in read_jsonl(path)]
    rows = {}
    for run in runs:
        for row in run["results"]:
            rows.setdefault((row["chi"], row["mode"]), []).append(row)
    return rows, runs


def base_ms(rows: dict) -> float:
    """(a) at the first chi (1: no straggler), median over runs."""
    chi = min(c for c, _ in rows)
    return median([r["median_ms"] for r in rows[(chi, MODES[0])]])


def migration_table(path: str) -> str:
    rows, runs = cells(path)
    base = base_ms(rows)
    out = []
    for chi in sorted({c for c, _ in rows}):
        line = [f"{chi:g}"]
        for mode in MODES:
            times = [r["median_ms"] for r in rows[(chi, mode)]]
            med = median(times)
            line.append(f"{med:.0f} ({med / base:.2f}×) [{'/'.join(f'{t:.0f}' for t in times)}]")
        sent = {m: median([r["straggler_bytes_sent_per_iter"] for r in rows[(chi, m)]]) / 1e6
                for m in MODES[:3]}
        line.append(f"{sent[MODES[0]]:.3f} → {sent[MODES[1]]:.3f} = {sent[MODES[2]]:.3f}")
        line.append(f"{rows[(chi, MODES[1])][0]['migrated_bytes'] / 1e6:.3f}")
        out.append(line)
    plans = []
    for chi in sorted({c for c, _ in rows}):
        each = [f"z={r['plan_stragglers']} beta={r['plan_beta']:.2f} L_mig={r['migrated_columns']} "
                f"L_resize={r['resized_columns']}" for r in rows[(chi, MODES[3])]]
        plans.append(f"χ={chi:g}: " + " / ".join(each))
    checks = [run["check_result"] for run in runs]
    opts = runs[0]["options"]
    model = ""
    if opts.get("compute") == "sleep":
        model = (f"Compute: the device model (--compute sleep), {opts['flops'] / 1e9:g} GFLOP/s per "
                 "rank, the straggler χ times slower. ")
    if opts.get("overlap"):
        model += ("(b)'s broadcasts queued during each rank's own GEMMs (--overlap 1, "
                  "spcclImigrateBroadcast). ")
    header = ["χ", "(a) none", "(b) broadcast-reduce, merged", "(c) scatter-gather", "(d) plan",
              "straggler MB sent (a) → (b) = (c)", "migrated MB"]
    return (model + f"ms per iteration, median of {len(runs)} runs of the binary [each run], each run the "
            f"median of {opts['rounds']} interleaved rounds of {opts['iters']} iterations after "
            f"{opts['warmup_iters']} warm-up iterations; × = ratio to χ = 1 without balancing "
            f"({base:.0f} ms). Check of (b), (c) and (d without resizing) against (a): "
            f"{', '.join(str(c) for c in checks)}.\n\n" + table(header, out)
            + "\n\nPlans (d) per run: " + "; ".join(plans) + "\n\n" + provenance(path))


def draw(png: str) -> None:
    from .common import pyplot

    plt = pyplot()
    fig, axes = plt.subplots(1, len(RUNS), figsize=(10, 4), sharey=True)
    for ax, e in zip(axes, RUNS):
        rows, _ = cells(RUNS[e])
        base = base_ms(rows)
        chis = sorted({c for c, _ in rows})
        for mode in MODES:
            times = [[r["median_ms"] / base for r in rows[(c, mode)]] for c in chis]
            mids = [median(t) for t in times]
            spread = [[m - min(t) for m, t in zip(mids, times)], [max(t) - m for m, t in zip(mids, times)]]
            ax.errorbar(chis, mids, yerr=spread, marker="o", capsize=3, label=mode)
        ax.axhline(1.2, color="grey", linestyle=":", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_xticks(chis, [f"{c:g}" for c in chis])
        ax.set_title(f"e = {e}, 1 Gbit/s testbed (2 shared cores)")
        ax.set_xlabel("straggler slowdown χ")
    axes[0].set_ylabel("iteration time / (a) at χ = 1")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


TABLES = [("migration.md", f"migration-e{e}", (lambda p=path: migration_table(p)), [path])
          for e, path in RUNS.items()]
TABLES += [("migration.md", name, (lambda p=path: migration_table(p)), [path])
           for name, path in SLEEP_RUNS.items()]
PLOTS = [("migration.png", draw, list(RUNS.values()))]
