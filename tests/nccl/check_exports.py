#!/usr/bin/env python3
"""Checks that a library exports every function nccl.h declares.

Usage: check_exports.py NCCL_H LIBRARY

Every ncclX and pncclX declared in the header must be a defined function
in the library's dynamic symbol table (nm -D --defined-only), and the
library must export nothing else (its export map keeps spccl's internals
private). The host functions of NCCL's device API (nccl_device/*.h beside
nccl.h, NCCL 2.28 on; declared without pnccl twins there, exported with
them by the real NCCL) count as declared, with their twins, where those
headers exist.
"""
import glob
import os
import re
import subprocess
import sys

DECLARATION = re.compile(r"^\s*(?:ncclResult_t|const\s+char\s*\*|void)\s+(p?nccl\w+)\s*\(", re.M)
DEVICE_API_HOST_FUNCTION = re.compile(
    r"^\s*NCCL_EXTERN_C\s+__host__\s+(?:ncclResult_t|int|ncclTeam_t)\s+(nccl\w+)\s*\(", re.M)


def device_api_functions(header):
    """The device API's host functions and their pnccl twins, by the headers beside nccl.h."""
    names = set()
    for path in sorted(glob.glob(os.path.join(os.path.dirname(header), "nccl_device", "*.h"))):
        with open(path, encoding="utf-8") as f:
            names.update(DEVICE_API_HOST_FUNCTION.findall(f.read()))
    return names | {"p" + n for n in names}


def main():
    if len(sys.argv) != 3:
        print("usage: check_exports.py NCCL_H LIBRARY", file=sys.stderr)
        return 2
    header, library = sys.argv[1], sys.argv[2]
    with open(header, encoding="utf-8") as f:
        declared = set(DECLARATION.findall(f.read()))
    device_api = device_api_functions(header)
    declared |= device_api
    functions = sorted(n for n in declared if n.startswith("nccl"))
    missing_twins = [n for n in functions if "p" + n not in declared]
    if len(functions) < 40 or missing_twins:
        print(f"check_exports: parsed {len(functions)} functions from {header} "
              f"(want at least 40), without a pnccl twin: {missing_twins}")
        return 1
    nm = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True,
                        check=True)
    exported = {}
    for line in nm.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            exported[parts[2].split("@")[0]] = parts[1]
    missing = [n for n in sorted(declared) if n not in exported]
    not_code = [n for n in sorted(declared) if n in exported and exported[n] not in "TW"]
    extra = sorted(n for n in exported if n not in declared)
    ok = not missing and not not_code and not extra
    found = [n for n in functions if n in exported and "p" + n in exported]
    print(f"check_exports: {len(found)} of {len(functions)} functions of {header} "
          f"({len(device_api) // 2} of them from nccl_device/) exported by {library}, "
          f"each with its pnccl twin")
    if missing:
        print(f"  missing: {missing}")
    if not_code:
        print(f"  not functions: {not_code}")
    if extra:
        print(f"  exported but not in nccl.h: {extra}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
