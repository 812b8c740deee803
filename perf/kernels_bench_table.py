#!/usr/bin/env python3
"""The bandwidth table of perf/kernels_bench, as Markdown.

    kernels_bench --benchmark_out=bench.json --benchmark_out_format=json
    perf/kernels_bench_table.py bench.json

One row per kernel: GB/s of the bytes it must move, its fraction of the
device-to-device copy measured in the same run (the issue's target is
>= 0.70 for the streaming kernels), and indices/s where it counts them.
"""
import json
import sys


def main(path):
    with open(path) as f:
        run = json.load(f)
    context = run.get("context", {})
    print(f"device: {context.get('device', '?')}, elements: {context.get('elements', '?')}, "
          f"copy: {float(context.get('copy_GB/s', 0)):.0f} GB/s")
    print()
    print("| kernel | GB/s | of copy | indices/s |")
    print("|---|---:|---:|---:|")
    for b in run.get("benchmarks", []):
        if b.get("run_type") == "aggregate" or "error_message" in b:
            continue
        items = b.get("items/s")
        print(f"| {b['name'].split('/manual_time')[0]} | {b.get('GB/s', 0):.0f} "
              f"| {b.get('of_copy', 0):.2f} | {f'{items:.3g}' if items else ''} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
