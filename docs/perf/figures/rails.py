"""docs/perf/dense.md: one rail against two on the dilated testbed
(tests/netns/bench_rails.sh's JSON lines: rails used, round, result)."""
from .common import median, provenance, raw_path, read_jsonl, table

DILATED = raw_path("rails", "rails-n8-dilated-67108864.jsonl")
TWO_HOSTS = raw_path("rails", "rails-n2-250mbit-67108864.jsonl")


def rails_table(path: str) -> str:
    runs = read_jsonl(path)
    by_rails = {}
    for run in runs:
        by_rails.setdefault(run["rails_used"], []).append(run["result"])
    one = median([r["median_s"] for r in by_rails[1]])
    rows = []
    for rails, results in sorted(by_rails.items()):
        seconds = median([r["median_s"] for r in results])
        rows.append([rails, f"{seconds:.3f}", f"**{one / seconds:.2f}×**" if rails > 1 else "1.00×",
                     " ".join(f"{r['median_s']:.3f}" for r in results),
                     f"{median([r['cpu_s_per_iter'] for r in results]):.3f}",
                     sum(r["wrong"] for r in results)])
    return (table(["rails", "median s", "speed-up", "per-round medians", "CPU s per call (rank 0)",
                   "wrong"], rows) + "\n\n" + provenance(path))


TABLES = [("dense.md", "rails-dilated", lambda: rails_table(DILATED), [DILATED]),
          ("dense.md", "rails-n2-250mbit", lambda: rails_table(TWO_HOSTS), [TWO_HOSTS])]
PLOTS = []
