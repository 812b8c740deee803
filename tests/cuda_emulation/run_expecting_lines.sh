#!/usr/bin/env bash
# run_expecting_lines.sh PATTERN... -- COMMAND...
# Runs COMMAND and passes only when it exits 0 and its output (stdout and
# stderr together) has a line matching each extended regular expression
# PATTERN. For a ctest that must see several lines in whatever order the
# ranks' output interleaves them: CTest's PASS_REGULAR_EXPRESSION passes
# on any one of its patterns and ignores the exit status.
set -u
patterns=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  patterns+=("$1")
  shift
done
if [ $# -lt 2 ]; then
  echo "usage: $0 PATTERN... -- COMMAND..." >&2
  exit 2
fi
shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne 0 ]; then
  echo "run_expecting_lines: $1 exited with status $status" >&2
  exit 1
fi
missing=0
for pattern in "${patterns[@]}"; do
  if ! printf '%s\n' "$output" | grep -Eq -- "$pattern"; then
    echo "run_expecting_lines: no line matches: $pattern" >&2
    missing=1
  fi
done
exit "$missing"
