#!/usr/bin/python3
"""Sidecar notes for the raw results of a benchmark (docs/perf/raw/).

  raw_meta.py begin META [--wait-load L] [--wait-max S] [--note TEXT] -- COMMAND...
      optionally wait until the 1-minute load average is below L (polled
      every 30 s, at most S seconds, default 2400; past that the run goes
      on and the notes say so), then write META: the command line, the
      start time (UTC), the machine (host name, OS, kernel, CPU model, CPUs,
      memory), the repository's commit and whether the tracked files
      outside docs/ were the commit's, the
      load averages at the start and what the wait did.
  raw_meta.py end META
      add the finish time and the load averages at the end.
  raw_meta.py wait L [S]
      only the wait; print what it did (a line for the notes).

BENCH_NOTES in the environment (lines) adds notes to every META begun,
e.g. the outcome of one wait before several bench scripts in a row
(docs/perf/measure.sh).

docs/perf/make_figures.py quotes these notes (date, machine, load) under
every table it generates from the raw files beside them.
"""
import datetime
import json
import os
import platform
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def loadavg() -> list:
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def os_name() -> str:
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return ""


def memory_gib() -> float:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    return 0.0


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def wait_for_load(limit: float, max_seconds: float) -> str:
    """Polls every 30 s; returns what happened, for the notes."""
    start = time.monotonic()
    while True:
        one = loadavg()[0]
        waited = time.monotonic() - start
        if one < limit:
            return f"waited {waited:.0f} s for the 1-minute load to fall below {limit} (it was {one})"
        if waited >= max_seconds:
            return (f"gave up waiting after {waited:.0f} s for the 1-minute load to fall below "
                    f"{limit}; ran at load {one}")
        print(f"raw_meta: 1-minute load {one} >= {limit}; waiting ({waited:.0f} s so far)",
              file=sys.stderr, flush=True)
        time.sleep(30)


def begin(argv: list) -> None:
    meta, limit, max_seconds, notes = argv[0], None, 2400.0, []
    rest = argv[1:]
    while rest and rest[0] != "--":
        option, value, rest = rest[0], rest[1], rest[2:]
        if option == "--wait-load":
            limit = float(value)
        elif option == "--wait-max":
            max_seconds = float(value)
        elif option == "--note":
            notes.append(value)
        else:
            sys.exit(f"raw_meta: unknown option {option}")
    command = rest[1:]
    notes += [line for line in os.environ.get("BENCH_NOTES", "").splitlines() if line.strip()]
    if limit is not None:
        notes.append(wait_for_load(limit, max_seconds))
    uname = platform.uname()
    doc = {
        "command": " ".join(command),
        "cwd": os.path.relpath(os.getcwd(), REPO) if os.getcwd().startswith(REPO) else os.getcwd(),
        "started": now(),
        "machine": {"host": uname.node, "os": os_name(), "kernel": f"{uname.system} {uname.release}",
                    "cpu": cpu_model(), "cpus": os.cpu_count(), "memory_gib": memory_gib()},
        "commit": git("rev-parse", "--short=12", "HEAD"),
        # Whether the sources (tracked files outside docs/) were the commit's.
        "tree_clean": git("status", "--porcelain", "--untracked-files=no", "--", ":!docs") == "",
        "load_start": loadavg(),
        "notes": notes,
    }
    os.makedirs(os.path.dirname(os.path.abspath(meta)), exist_ok=True)
    with open(meta, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def end(argv: list) -> None:
    with open(argv[0]) as f:
        doc = json.load(f)
    doc["finished"] = now()
    doc["load_end"] = loadavg()
    with open(argv[0], "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("begin", "end", "wait"):
        sys.exit(__doc__)
    if sys.argv[1] == "wait":
        print(wait_for_load(float(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 2400.0))
    else:
        (begin if sys.argv[1] == "begin" else end)(sys.argv[2:])
