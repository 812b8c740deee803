#!/usr/bin/env python3
"""The table soak.sh prints: faults by kind, detection latency, mismatches,
exit statuses and leak trends, from the ranks' "chaos:" lines
(tests/faults/chaos/chaos_rank.cc) and the injected faults.

usage: soak_report.py LOGDIR FAULTS_TSV TIMEOUT_MS SHM_BEFORE SHM_AFTER
Exit status 1 when a result was wrong, a rank crashed (a signal the soak
did not send), or a short link outage failed a call.
"""
from __future__ import annotations

import collections
import pathlib
import re
import sys

KV = re.compile(r'(\w+)=("[^"]*"|\S+)')
STATUS_MEANING = {
    0: "finished, every result right",
    1: "WRONG RESULT",
    3: "agreed failed, left (resumed or cut off)",
    4: "too few ranks left",
    5: "gave up (unrecoverable error)",
    7: "creation failed",
    124: "HUNG past the soak's hard limit",
    137: "SIGKILL (by the soak)",
}


def parse_line(line: str) -> tuple[str, dict[str, str]] | None:
    if not line.startswith("chaos: "):
        return None
    rest = line[len("chaos: "):]
    event = rest.split(" ", 1)[0]
    return event, {k: v.strip('"') for k, v in KV.findall(rest)}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(p / 100.0 * len(ordered) + 0.5)) - 1))
    return ordered[index]


def fmt_ms(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{percentile(values, 50):.0f} / {percentile(values, 99):.0f} ms (n = {len(values)})"


def main() -> int:
    logdir = pathlib.Path(sys.argv[1])
    timeout_ms = float(sys.argv[3])
    shm_before, shm_after = int(sys.argv[4]), int(sys.argv[5])
    faults = []
    for row in pathlib.Path(sys.argv[2]).read_text().splitlines():
        t, kind, job, rank = row.split("\t")
        faults.append((float(t), kind, int(job), int(rank)))

    # events[job][rank] = [(event, fields)]; statuses[job][rank] = exit status
    events: dict[int, dict[int, list]] = collections.defaultdict(dict)
    statuses: dict[int, dict[int, int]] = collections.defaultdict(dict)
    for jobdir in sorted(logdir.glob("job*")):
        job = int(jobdir.name[3:])
        for log in jobdir.glob("rank*.log"):
            rank = int(log.stem[4:])
            parsed = [parse_line(l) for l in log.read_text(errors="replace").splitlines()]
            events[job][rank] = [p for p in parsed if p]
            status = jobdir / f"rank{rank}.status"
            if status.exists():
                statuses[job][rank] = int(status.read_text().strip() or -1)

    by_kind = collections.Counter(kind for _, kind, _, _ in faults)
    detect: dict[str, list[float]] = collections.defaultdict(list)
    recover: dict[str, list[float]] = collections.defaultdict(list)
    undetected: collections.Counter = collections.Counter()
    false_failures = 0
    victim_outcomes: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for i, (t, kind, job, victim) in enumerate(faults):
        later = [f[0] for f in faults[i + 1:] if f[2] == job]
        window_end = later[0] if later else float("inf")
        if kind in ("stop", "link-long"):
            # What the rank that came back saw first, and how it ended.
            first_rc = next((f["rc"] for e, f in events[job].get(victim, [])
                             if e == "fail" and float(f["t"]) >= t), "none")
            end = statuses[job].get(victim, -1)
            victim_outcomes[kind][f"first rc {first_rc}, exit {end}"] += 1
        for rank, evs in events[job].items():
            if rank == victim:
                continue
            times = [float(f["t"]) for e, f in evs if "t" in f]
            ready = [float(f["t"]) for e, f in evs if e == "ready"]
            if not ready or ready[0] > t or not times or max(times) < t:
                continue  # not in the job at the time
            fails = [float(f["t"]) for e, f in evs
                     if e == "fail" and t <= float(f["t"]) < window_end]
            shrunk = [float(f["t"]) for e, f in evs
                      if e == "shrunk" and t <= float(f["t"]) < window_end]
            if kind == "link-short":
                false_failures += len(fails)
                continue
            if fails:
                detect[kind].append(fails[0] - t)
            else:
                undetected[kind] += 1
            if shrunk:
                recover[kind].append(shrunk[0] - t)

    wrong = sum(1 for job in events.values() for evs in job.values()
                for e, _ in evs if e == "WRONG")
    status_count = collections.Counter(s for job in statuses.values() for s in job.values())
    crashes = sum(c for s, c in status_count.items() if s not in STATUS_MEANING or s == 124)

    print(f"| fault | injected | detection p50 / p99 | recovered (shrunk) p50 / p99 | survivors that saw no failure |")
    print("|---|---|---|---|---|")
    for kind in ("kill", "stop", "link-short", "link-long"):
        if kind not in by_kind:
            continue
        if kind == "link-short":
            print(f"| {kind} (T/4 = {timeout_ms / 4:.0f} ms) | {by_kind[kind]} | - | - | "
                  f"calls failed: {false_failures} (must be 0) |")
            continue
        print(f"| {kind} | {by_kind[kind]} | {fmt_ms(detect[kind])} | {fmt_ms(recover[kind])} | "
              f"{undetected[kind]} |")
    every = [v for k in detect for v in detect[k]]
    print(f"| all detected | {sum(by_kind.values())} | {fmt_ms(every)} | "
          f"{fmt_ms([v for k in recover for v in recover[k]])} | |")
    for kind, outcomes in sorted(victim_outcomes.items()):
        print(f"\n{kind}: the victim, once back: " + "; ".join(
            f"{o} x{c}" for o, c in sorted(outcomes.items())))
    print()
    print(f"jobs (re-initialisations + 1): {len(events)}; data mismatches: {wrong} (must be 0)")
    print("rank exit statuses: " + ", ".join(
        f"{s} {STATUS_MEANING.get(s, 'CRASH')} x{c}" for s, c in sorted(status_count.items())))

    # Leaks: every process's first sample (its first step, every rank in
    # the communicator) against its last (at its end: still in a
    # communicator of `size` ranks when it finished, none when it left
    # alone or excluded), grouped by how it ended. A leak shows as a last
    # value that varies with how long the process ran or how many
    # failures it went through, not with how it ended.
    groups: dict[tuple, list] = collections.defaultdict(list)
    for job in sorted(events):
        for rank in sorted(events[job]):
            stats = [f for e, f in events[job][rank] if e == "stat"]
            if len(stats) < 2 or stats[-1].get("when") != "last":
                continue
            ended = "finished" if statuses[job].get(rank) == 0 else "left (no communicator)"
            shrinks = sum(1 for e, _ in events[job][rank] if e == "shrunk")
            groups[(ended, stats[-1]["size"])].append((stats[0], stats[-1], shrinks))
    def span(values: list[int]) -> str:
        return f"{min(values)}" if min(values) == max(values) else f"{min(values)}-{max(values)}"
    print()
    print("| ended | processes | shrinks survived | steps | fds first -> last | threads first -> last "
          "| RSS KiB first -> last | /dev/shm maps first -> last |")
    print("|---|---|---|---|---|---|---|---|")
    for (ended, size), rows in sorted(groups.items()):
        def col(key: str) -> str:
            return (f"{span([int(a[key]) for a, _, _ in rows])} -> "
                    f"{span([int(b[key]) for _, b, _ in rows])}")
        label = (f"{ended}, size {size}" if ended == "finished" else
                 f"{ended}, its last communicator had {size}")
        print(f"| {label} | {len(rows)} | {span([k for _, _, k in rows])} | "
              f"{span([int(b['step']) for _, b, _ in rows])} | {col('fds')} | {col('threads')} | "
              f"{col('rss_kb')} | {col('shm_maps')} |")
    print()
    print(f"/dev/shm entries (whole machine): {shm_before} before, {shm_after} after")
    bad = wrong > 0 or crashes > 0 or false_failures > 0 or status_count.get(1, 0) > 0
    print("soak: " + ("FAIL" if bad else "PASS"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
