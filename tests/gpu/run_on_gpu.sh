#!/usr/bin/env bash
# Builds the CUDA kernels and their tests on a machine with a GPU and runs
# them: the tests at every count (tests/gpu/README.md), then again, at small
# counts, under compute-sanitizer memcheck and racecheck. One command, from
# the repository root or anywhere:
#
#   tests/gpu/run_on_gpu.sh [build-dir]        (default: build-gpu)
#
# Environment:
#   SPCCL_CUDA_ARCHS          architectures to build (default: the GPU's own, as nvidia-smi
#                             reports it, e.g. 90-real; else 90-real)
#   SPCCL_GPU_TEST_MAX_COUNT  largest element count of the plain runs (default 16777217;
#                             300000000 adds a run of hundreds of millions)
#   SPCCL_SANITIZER_MAX_COUNT largest count under compute-sanitizer (default 70000)
#   SPCCL_SANITIZER_TOOLS     compute-sanitizer tools to run (default "memcheck racecheck";
#                             initcheck and synccheck exist too)
#   SPCCL_GPU_RESULTS         where the logs go (default: <build-dir>/gpu-results)
#   SPCCL_GPU_BENCH=1         also build and run perf/kernels_bench
#   JOBS                      build parallelism (default: nproc)
#
# Needs cmake, ninja, the CUDA toolkit and GoogleTest (libgtest-dev) on the
# GPU machine. Exits non-zero if anything fails, and also if any test
# skipped: on a GPU machine a skip means the device could not be used.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-gpu}
results=${SPCCL_GPU_RESULTS:-$build/gpu-results}
jobs=${JOBS:-$(nproc)}
mkdir -p "$results"
summary=$results/summary.txt
: >"$summary"
failed=0

note() { echo "$*" | tee -a "$summary"; }

note "== spccl GPU kernel tests, $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader |
    tee -a "$summary"
else
  note "nvidia-smi not found: is there a GPU and a driver here?"
fi

archs=${SPCCL_CUDA_ARCHS:-}
if [[ -z $archs ]] && command -v nvidia-smi >/dev/null; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
  [[ -n $cap ]] && archs="${cap}-real"
fi
archs=${archs:-90-real}

export PATH=/usr/local/cuda/bin:$PATH
for tool in cmake ninja nvcc; do
  command -v "$tool" >/dev/null || { note "missing prerequisite: $tool"; exit 1; }
done
targets=(spccl_gpu_tests)
[[ ${SPCCL_GPU_BENCH:-0} == 1 ]] && targets+=(kernels_bench)
note "== configure and build (${archs}, -j${jobs}): ${targets[*]}"
start=$(date +%s)
if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPCCL_BUILD_CUDA=ON \
       "-DSPCCL_CUDA_ARCHS=$archs" -DSPCCL_BUILD_PYTHON=OFF >"$results/configure.log" 2>&1; then
  note "configure FAILED (see $results/configure.log)"
  tail -20 "$results/configure.log"
  exit 1
fi
if ! ninja -C "$build" -j "$jobs" "${targets[@]}" >"$results/build.log" 2>&1; then
  note "build FAILED (see $results/build.log)"
  tail -40 "$results/build.log"
  exit 1
fi
note "built in $(($(date +%s) - start)) s"

binaries=()
for binary in "$build"/tests/gpu/test_gpu_*; do
  [[ -f $binary && -x $binary ]] && binaries+=("$binary")
done

# run NAME COMMAND...: logs to $results/NAME.log; a failure or a skip fails the script.
run() {
  local name=$1
  shift
  local log=$results/$name.log
  local t0=$(date +%s)
  "$@" >"$log" 2>&1
  local status=$?
  local passed skipped
  # gtest's closing summary: "[  PASSED  ] N tests." / "[  SKIPPED ] N tests, listed below:"
  passed=$(grep -oP '^\[  PASSED  \] \K[0-9]+' "$log" | tail -1)
  skipped=$(grep -oP '^\[  SKIPPED \] \K[0-9]+(?= tests?,)' "$log" | tail -1)
  passed=${passed:-0} skipped=${skipped:-0}
  local verdict=PASS
  if [[ $status -ne 0 ]]; then
    verdict="FAIL (exit $status)"
  elif [[ $skipped -ne 0 ]]; then
    verdict="SKIPPED ($skipped)"
  fi
  [[ $verdict == PASS ]] || failed=1
  note "$(printf '%-40s %-28s %5s tests ok  %4s s' "$name" "$verdict" "$passed" $(($(date +%s) - t0)))"
}

note "== tests (counts up to ${SPCCL_GPU_TEST_MAX_COUNT:-16777217})"
run test_cuda_logic_on_host "$build/tests/gpu/test_cuda_logic_on_host"  # the CPU side
for binary in "${binaries[@]}"; do
  run "$(basename "$binary")" "$binary"
done

sanitizer=$(command -v compute-sanitizer || true)
for candidate in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [[ -z $sanitizer && -x $candidate ]] && sanitizer=$candidate
done
if [[ -z $sanitizer ]]; then
  note "== compute-sanitizer NOT FOUND: memcheck and racecheck did not run"
  failed=1
else
  max=${SPCCL_SANITIZER_MAX_COUNT:-70000}
  note "== compute-sanitizer ($($sanitizer --version | tail -1)), counts up to $max"
  for tool in ${SPCCL_SANITIZER_TOOLS:-memcheck racecheck}; do
    for binary in "${binaries[@]}"; do
      SPCCL_GPU_TEST_MAX_COUNT=$max run "$(basename "$binary").$tool" \
        "$sanitizer" --tool "$tool" --error-exitcode 97 "$binary"
    done
  done
fi

if [[ ${SPCCL_GPU_BENCH:-0} == 1 ]]; then
  note "== perf/kernels_bench"
  run kernels_bench "$build/perf/kernels_bench" --benchmark_counters_tabular=true \
    "--benchmark_out=$results/kernels_bench.json" --benchmark_out_format=json
  python3 "$root/perf/kernels_bench_table.py" "$results/kernels_bench.json" | tee -a "$summary"
fi

note "== $([[ $failed == 0 ]] && echo ALL PASSED || echo FAILURES) (logs: $results)"
exit $failed
