#!/usr/bin/env python3
"""The README's table of environment variables is `spccl_info --markdown`
(src/base/knobs.cc): fails, with a diff, when a knob was added, removed or
changed without regenerating the table.
Usage: check_readme_knobs.py SPCCL_INFO README.md"""
import difflib
import subprocess
import sys


def readme_table(path):
    rows, inside = [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                inside = line.strip() == "## Environment variables"
                continue
            if inside and line.startswith("|"):
                rows.append(line.rstrip("\n"))
    return rows


def main():
    info, readme = sys.argv[1:3]
    generated = subprocess.run([info, "--markdown"], capture_output=True, text=True,
                               check=True, timeout=60).stdout.splitlines()
    generated = [line for line in generated if line.startswith("|")]
    current = readme_table(readme)
    if current == generated:
        print(f"README knob table: {len(generated) - 2} knobs, as spccl_info --markdown prints")
        return 0
    sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(
        current, generated, "README.md", "spccl_info --markdown", lineterm=""))
    print("README knob table differs from `spccl_info --markdown`: paste its output under "
          "'## Environment variables'")
    return 1


if __name__ == "__main__":
    sys.exit(main())
