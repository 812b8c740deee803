#!/usr/bin/env python3
"""Checks that libspccl_nccl.so routed every call alike on every rank.

Reads a job's output (SPCCL_INTERPOSE_REPORT=1): each communicator's
report lines carry "[spccl-nccl ID rank R/N]". Every communicator must
have reported on all N of its ranks, and the lines of its ranks must be
equal once the prefix and the seconds column (this rank's time) are
dropped: the same calls, bytes and paths everywhere.
"""
import re
import sys

LINE = re.compile(r"\[spccl-nccl ([0-9a-f]+) rank (\d+)/(\d+)\] (.*)$")


def normalise(text):
    if text.startswith("|"):
        cells = [c.strip() for c in text.strip().strip("|").split("|")]
        return " | ".join(cells[:-1])  # the last column is this rank's seconds
    return text


def main():
    if len(sys.argv) != 2:
        print("usage: check_report.py OUTPUT", file=sys.stderr)
        return 2
    comms = {}
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.search(line.rstrip("\n"))
            if not m:
                continue
            comm, rank, nranks, text = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
            if text.startswith("traffic on spccl's transports (this rank)"):
                continue  # each rank's own bytes: a sparse schedule sends what its data needs
            entry = comms.setdefault(comm, {"nranks": nranks, "ranks": {}})
            entry["ranks"].setdefault(rank, []).append(normalise(text))
    if not comms:
        print("check_report: no report lines found")
        return 1
    failed = False
    for comm, entry in sorted(comms.items()):
        ranks = entry["ranks"]
        if sorted(ranks) != list(range(entry["nranks"])):
            print(f"check_report: communicator {comm}: reports from ranks {sorted(ranks)}, "
                  f"want 0..{entry['nranks'] - 1}")
            failed = True
            continue
        reference = ranks[0]
        for rank, lines in sorted(ranks.items()):
            if lines != reference:
                print(f"check_report: communicator {comm}: rank {rank} differs from rank 0:")
                for a, b in zip(reference, lines):
                    if a != b:
                        print(f"  rank 0: {a}\n  rank {rank}: {b}")
                if len(reference) != len(lines):
                    print(f"  {len(reference)} lines against {len(lines)}")
                failed = True
    if failed:
        return 1
    print(f"check_report: {len(comms)} communicators, each routed alike on all its ranks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
