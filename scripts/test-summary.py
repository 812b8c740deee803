#!/usr/bin/env python3
"""Summarises a ctest run from its JUnit file (ctest --output-junit FILE):
how many tests passed, failed and were skipped, and why each skipped.

    test-summary.py FILE [LABEL]

ctest counts a test as skipped when it exits with its SKIP_RETURN_CODE (77:
the netns, mpi and python entries) or prints its SKIP_REGULAR_EXPRESSION
(GoogleTest's "[  SKIPPED ]", which gtest_discover_tests sets). The reason
is the skip message the test printed: GoogleTest's line after "Skipped",
or a line of the form "...SKIP: reason" / "SKIPPED: reason" / "skipped:
reason". Skipped tests are grouped by reason. Exits 0 unless FILE cannot be
read (scripts/run-tests.sh keeps ctest's own exit status).
"""
from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict

# "netns_smoke: SKIP: needs root", "SKIPPED: every test ...", "skipped: the Python ..."
SKIP_LINE = re.compile(r"\bskip(?:ped)?\b\s*:\s*(?P<reason>\S.*)", re.IGNORECASE)
# GoogleTest: "path/file.h:28: Skipped", then the message on the next lines.
GTEST_SKIPPED = re.compile(r":\d+: Skipped$")
GTEST_END = re.compile(r"^\[  SKIPPED \]")
MAX_NAMES = 4


def skip_reason(output: str) -> str:
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if GTEST_SKIPPED.search(line):
            message = []
            for following in lines[i + 1:]:
                if GTEST_END.match(following):
                    break
                message.append(following.strip())
            if any(message):
                return " ".join(m for m in message if m)
            return "GTEST_SKIP() without a message"
    for line in lines:
        match = SKIP_LINE.search(line)
        if match:
            return match.group("reason").strip()
    return "no reason printed"


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    label = f" ({sys.argv[2]})" if len(sys.argv) == 3 else ""
    try:
        suite = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as error:
        print(f"test-summary: cannot read {sys.argv[1]}: {error}", file=sys.stderr)
        return 1
    passed, failed, disabled = [], [], []
    skipped: dict[str, list[str]] = defaultdict(list)
    for case in suite.iter("testcase"):
        name, status = case.get("name", "?"), case.get("status", "")
        if status == "run":
            passed.append(name)
        elif status == "fail":
            failed.append(name)
        elif status == "disabled":
            disabled.append(name)
        else:  # notrun: skipped (return code or regular expression), or never started
            skip = case.find("skipped")
            why = skip_reason(case.findtext("system-out") or "")
            if skip is not None and skip.get("message", "").startswith("SKIP_"):
                skipped[why].append(name)
            else:
                skipped[f"not run ({skip.get('message') if skip is not None else 'no result'})"].append(name)
    total = len(passed) + len(failed) + len(disabled) + sum(map(len, skipped.values()))
    print(f"\n== test summary{label}: {total} tests: {len(passed)} passed, {len(failed)} failed, "
          f"{sum(map(len, skipped.values()))} skipped" + (f", {len(disabled)} disabled" if disabled else ""))
    for name in failed:
        print(f"  FAILED  {name}")
    if skipped:
        print("skipped, by reason:")
    for why, names in sorted(skipped.items(), key=lambda item: (-len(item[1]), item[0])):
        print(f"  {len(names):4d}  {why}\n        {shown(names)}")
    if disabled:
        print(f"disabled (DISABLED_ tests, or ctest's DISABLED property):\n        {shown(disabled)}")
    return 0


def shown(names: list[str]) -> str:
    more = f", ... ({len(names) - MAX_NAMES} more)" if len(names) > MAX_NAMES else ""
    return ", ".join(names[:MAX_NAMES]) + more


if __name__ == "__main__":
    sys.exit(main())
