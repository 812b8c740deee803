#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz) with clang in build-fuzz/ and
# runs each for SECONDS, as many at once as there are cores, from a
# scratch copy of its seed corpus and regression inputs (the source tree
# is never written). Prints, per
# harness, executions, executions per second, new corpus units, coverage
# and crashes; exits non-zero on any crash, leaving the crashing input in
# build-fuzz/fuzz-artifacts/ (named in the output). docs/security.md, "Fuzzing".
# Usage: scripts/fuzz.sh SECONDS [HARNESS...]   (default: every harness)
# Environment: SPCCL_FUZZ_JOBS (build jobs, default nproc),
#              SPCCL_FUZZ_PARALLEL (harnesses at once, default nproc),
#              SPCCL_FUZZ_RSS_MB (libFuzzer's -rss_limit_mb, default 2048).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 SECONDS [HARNESS...]" >&2
  exit 2
fi
seconds=$1
shift
all=(frame handshake unique_id sparse compress token_mask npy knobs side_channel tcp_stream
     shm_stream sparse_call rank_table)
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${all[@]}")
for h in "${harnesses[@]}"; do
  [ -f "tests/fuzz/fuzz_$h.cc" ] || { echo "fuzz.sh: no harness '$h' (${all[*]})" >&2; exit 2; }
done
command -v clang++ >/dev/null || { echo "fuzz.sh: needs clang (scripts/install-deps.sh)" >&2; exit 2; }

build=build-fuzz
configure_log=$(mktemp)
# -gline-tables-only, as OSS-Fuzz builds: file and line in every report's
# stack, at 15-20 % less compile time than full -g (this build is most of
# CI's fuzz step).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DSPCCL_BUILD_FUZZERS=ON \
  -DSPCCL_BUILD_TESTS=OFF -DSPCCL_BUILD_PERF=OFF -DSPCCL_BUILD_PYTHON=OFF \
  -DSPCCL_BUILD_CUDA=OFF >"$configure_log" 2>&1 ||
  { cat "$configure_log"; exit 1; }
rm -f "$configure_log"
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$build" -j"${SPCCL_FUZZ_JOBS:-$(nproc)}" --target "${targets[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
artifacts=$PWD/$build/fuzz-artifacts
mkdir -p "$artifacts"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# One harness: its summary line in $scratch/$h.row, non-zero on a crash.
fuzz_one() {
  local h=$1 corpus=$scratch/$1 log=$scratch/$1.log before rc=0 cov crashes
  mkdir -p "$corpus"
  for dir in "tests/fuzz/corpus/$h" "tests/fuzz/regressions/$h"; do
    [ -d "$dir" ] && cp "$dir"/* "$corpus/" 2>/dev/null || true
  done
  before=$(find "$artifacts" -name "$h-*" | wc -l)
  "$build/tests/fuzz/fuzz_$h" -max_total_time="$seconds" -rss_limit_mb="${SPCCL_FUZZ_RSS_MB:-2048}" \
    -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts/$h-" "$corpus" >"$log" 2>&1 ||
    rc=$?
  stat() { grep -m1 "^stat::$1:" "$log" | awk '{print $2}' || true; }
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}' || true)
  crashes=$(( $(find "$artifacts" -name "$h-*" | wc -l) - before ))
  [ "$rc" -eq 0 ] || [ "$crashes" -gt 0 ] || crashes="1 (exit $rc)"
  {
    printf '%-12s %12s %9s %9s %8s %s\n' "$h" "$(stat number_of_executed_units)" \
      "$(stat average_exec_per_sec)" "$(stat new_units_added)" "${cov:-?}" "$crashes"
    if [ "$rc" -ne 0 ]; then
      grep -E 'ERROR: |runtime error|invariant failed|Test unit written' "$log" | head -5 |
        sed 's/^/    /' || true
      cp "$log" "$artifacts/$h.log"
      echo "    full log: $artifacts/$h.log"
    fi
  } >"$scratch/$h.row"
  return "$rc"
}

# As many harnesses at once as there are cores (SPCCL_FUZZ_PARALLEL):
# each is one single-threaded process.
parallel=${SPCCL_FUZZ_PARALLEL:-$(nproc)}
declare -A running=()  # pid -> harness
status=0
reap() {
  local pid
  wait -n -p pid "${!running[@]}" || status=1
  unset "running[$pid]"
}
for h in "${harnesses[@]}"; do
  while [ ${#running[@]} -ge "$parallel" ]; do reap; done
  fuzz_one "$h" &
  running[$!]=$h
done
while [ ${#running[@]} -gt 0 ]; do reap; done
printf '%-12s %12s %9s %9s %8s %s\n' harness executions exec/s new-units cov crashes
for h in "${harnesses[@]}"; do cat "$scratch/$h.row"; done
exit "$status"
