#!/usr/bin/env bash
# ctest's fuzz_NAME: replays every seed (tests/fuzz/corpus/NAME) and every
# regression input (tests/fuzz/regressions/NAME) once, then mutates from the
# seeds for SECONDS in a scratch copy, so the source tree is never written.
# A crashing input is kept in fuzz-artifacts/ of the test's directory.
# Usage: run_harness.sh BINARY FUZZ_SOURCE_DIR NAME SECONDS
set -euo pipefail
bin=$1 src=$2 name=$3 seconds=$4
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/corpus" fuzz-artifacts
for dir in "$src/corpus/$name" "$src/regressions/$name"; do
  [ -d "$dir" ] && cp "$dir"/* "$scratch/corpus/" 2>/dev/null || true
done
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mapfile -t inputs < <(find "$scratch/corpus" -type f | sort)
echo "fuzz_$name: replaying ${#inputs[@]} inputs"
if [ ${#inputs[@]} -gt 0 ]; then
  "$bin" -artifact_prefix="$PWD/fuzz-artifacts/$name-" "${inputs[@]}" >"$scratch/replay.log" 2>&1 ||
    { tail -50 "$scratch/replay.log"; exit 1; }
fi
echo "fuzz_$name: mutating for ${seconds}s"
"$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$PWD/fuzz-artifacts/$name-" "$scratch/corpus" >"$scratch/fuzz.log" 2>&1 ||
  { tail -50 "$scratch/fuzz.log"; exit 1; }
grep -E '^stat::(number_of_executed_units|new_units_added)' "$scratch/fuzz.log" || true
