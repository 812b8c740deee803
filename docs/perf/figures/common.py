"""What every figure module shares: where the raw results live, how to read
them and their notes (*.meta.json, written by tests/netns/lib/raw_meta.py),
markdown tables, and the provenance line under every generated table."""
import json
import os
import statistics

PERF = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # docs/perf
RAW = os.path.join(PERF, "raw")


def raw_path(*parts: str) -> str:
    return os.path.join(RAW, *parts)


def rel(path: str) -> str:
    """A path as the docs in docs/perf link it."""
    return os.path.relpath(path, PERF)


def read_jsonl(path: str) -> list:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def meta_of(data_path: str) -> dict:
    """The notes beside a raw file: FILE.meta.json for FILE.EXT."""
    base, _ = os.path.splitext(data_path)
    with open(base + ".meta.json") as f:
        return json.load(f)


def _day(stamp: str) -> str:
    return stamp[:10]


def _time(stamp: str) -> str:
    return stamp[11:16]


def provenance(*data_paths: str) -> str:
    """One line per raw file: where it came from, when, on what, under what load."""
    lines = []
    for path in data_paths:
        meta = meta_of(path)
        machine = meta.get("machine", {})
        when = meta.get("date") or _day(meta.get("started", ""))
        if "started" in meta and "finished" in meta:
            when = f"{_day(meta['started'])} {_time(meta['started'])}–{_time(meta['finished'])} UTC"
        what = machine.get("description") or (
            f"{machine.get('os', '?')} VM, {machine.get('cpus', '?')} CPUs ({machine.get('cpu', '?')}), "
            f"{machine.get('memory_gib', '?')} GiB")
        load = ""
        if "load_start" in meta:
            load = f", load {meta['load_start'][0]:.1f}"
            if "load_end" in meta:
                load += f" → {meta['load_end'][0]:.1f}"
            load += " (1-minute average at start → end; the end counts the benchmark itself)"
        elif meta.get("load"):
            load = f", load {meta['load']}"
        commit = f", commit {meta['commit']}" if meta.get("commit") else ""
        if meta.get("tree_clean") is False:
            commit += " with local changes"
        notes = "".join(f"; {note}" for note in meta.get("notes", []))
        lines.append(f"[`{rel(path)}`]({rel(path)}): {when}, {what}{load}{commit}{notes}.")
    return "<sub>Data: " + "<br>".join(lines) + "</sub>"


def table(header: list, rows: list) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(out)


def median(values: list) -> float:
    return statistics.median(values)


def sig3(value: float) -> str:
    """Three significant digits, trailing zeros kept (0.430, 1.70)."""
    return f"{value:#.3g}".rstrip(".")


def thousands(value: float) -> str:
    """12 345 678: the docs' digit grouping."""
    return f"{value:,.0f}".replace(",", " ")


def rate_bits(rate: str) -> float:
    rate = rate.lower()
    for unit, scale in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1.0)):
        if rate.endswith(unit):
            return float(rate[: -len(unit)]) * scale
    raise ValueError(f"rate {rate}")


def ring_limit_s(n: int, size: int, rate: str) -> float:
    """Link limit of a dense ring all-reduce: 2(n-1)/n * S / b."""
    return 2 * (n - 1) / n * size * 8 / rate_bits(rate)


def pyplot():
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("make_figures: plots need matplotlib (Debian: apt-get install python3-matplotlib, "
                         "then run /usr/bin/python3 docs/perf/make_figures.py), or pass --no-plots")

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
