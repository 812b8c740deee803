#!/bin/sh
# all_reduce_perf -p 1 prints one progress line per size on stderr (rank 0
# only), the last one "N/N sizes"; by default, with stderr not a terminal,
# none. stdout, the table scripts parse, is the same either way (the
# timings aside).
set -u
spcclrun=$1
perf=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $1"
  for f in "$dir"/*; do
    echo "== $f"
    cat "$f"
  done
  exit 1
}
args="-b 8 -e 32K -f 4 -n 2 -w 1 -c 1"  # 8 B .. 32 KiB by 4: 7 sizes
"$spcclrun" -n 2 -- "$perf" $args -p 1 >"$dir/asked.out" 2>"$dir/asked.err" || fail "-p 1 run failed"
"$spcclrun" -n 2 -- "$perf" $args >"$dir/default.out" 2>"$dir/default.err" || fail "default run failed"

lines=$(grep -c '# progress: ' "$dir/asked.err")
[ "$lines" = 7 ] || fail "expected 7 progress lines with -p 1, got $lines"
grep -q '# progress: 1/7 sizes (8 bytes float sum) in [0-9.]* s, about [0-9.]* [smh]i*n* left$' \
  "$dir/asked.err" || fail "first progress line"
grep -q '# progress: 7/7 sizes (32768 bytes float sum) in [0-9.]* [smh]i*n*$' "$dir/asked.err" ||
  fail "last progress line"
grep -q 'progress' "$dir/default.err" && fail "progress lines without -p and without a terminal"
grep -q 'progress' "$dir/asked.out" && fail "progress lines on stdout"

# The same table: the same lines, the same first column (sizes and header
# words), apart from each rank's pid.
[ "$(wc -l <"$dir/asked.out")" = "$(wc -l <"$dir/default.out")" ] || fail "stdout differs in length"
awk '{print $1, $2}' "$dir/asked.out" | grep -v Pid >"$dir/asked.cols"
awk '{print $1, $2}' "$dir/default.out" | grep -v Pid >"$dir/default.cols"
cmp -s "$dir/asked.cols" "$dir/default.cols" || fail "stdout differs"
echo "perf progress: 7 lines on stderr with -p 1, none by default, stdout unchanged"
