#!/usr/bin/env bash
# Fails when a tracked C, C++ or CUDA file differs from .clang-format.
# Fix with: git ls-files '*.h' '*.cc' '*.cu' '*.cuh' '*.c' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.h' '*.cc' '*.cu' '*.cuh' '*.c' '*.cpp')
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/check-format.$$; then
  grep -E '^[^ ].*: (error|warning):' /tmp/check-format.$$ | cut -d: -f1 | sort -u | sed 's/^/  /'
  rm -f /tmp/check-format.$$
  echo "check-format: the files above differ from .clang-format ($(clang-format --version))" >&2
  exit 1
fi
rm -f /tmp/check-format.$$
echo "check-format: ${#files[@]} files match .clang-format"
