#!/usr/bin/env bash
# The ONE script for a machine with a GPU (tests/gpu/README.md): builds
# spccl, libspccl_nccl.so, spcclrun and the GPU tests, then runs, each under
# its own time limit:
#   host        test_cuda_logic_on_host (the kernels' logic on the CPU; no GPU needed)
# then the correctness stages, at the same time (SPCCL_GPU_OVERLAP=1, the default):
#   kernels     every test_gpu_* binary, counts up to 2^24 + 1
#   collectives tests/gpu/run_collectives.sh BUILD RESULTS   (where that script exists)
#   sanitizer   the kernels at small counts under compute-sanitizer memcheck, then racecheck
# then the timed stages, one after the other:
#   torch       tests/gpu/run_torch_shim.sh BUILD RESULTS    (where that script exists)
#   cudaipc     tests/gpu/run_cuda_ipc.sh BUILD RESULTS       (CUDA IPC and the cuda_ipc transport)
#   devicepath  tests/gpu/run_device_all_reduce.sh BUILD RESULTS (the device-resident all-reduce:
#               every type/op on 1, 2, 4 ranks, the other dense collectives on 2 and 4,
#               memcheck, figures with the path on and off, grouped calls and in-place
#               and grouped all-to-all(v), migration calls, scatter/gather on 2 and 4)
#   devicesparse tests/gpu/run_device_sparse.sh BUILD RESULTS (the sparse all-reduce's non-zeros
#               extracted on the device: 3 types, sum/avg, 3 densities on 1, 2, 4 ranks, memcheck,
#               figures and bytes copied with the path on and off)
#   devicetokens tests/gpu/run_device_tokens.sh BUILD RESULTS (token top-k and mask all-reduces
#               with the kept rows moved on the device: the real-GPU token tests, with and
#               without a device residual, on 1, 2, 4 ranks with the path on, 2 with it
#               off, memcheck)
#   devicecodecs tests/gpu/run_device_codecs.sh BUILD RESULTS (the compressed all-reduce's
#               codecs on the device: the real-GPU compressed tests, with and without a
#               device residual, on 1, 2, 4 ranks with the path on, 2 with it off,
#               memcheck)
#   devicebench tests/gpu/run_device_bench.sh BUILD RESULTS  (device-buffer figures, and the
#               embedded device kernels alone: perf/device_kernels_bench)
#   pieces      tests/gpu/run_staging_pieces.sh BUILD RESULTS (pipelined staging vs not)
#   netns       tests/gpu/run_netns_bench.sh BUILD RESULTS    (the testbed on 16 cores, if it works)
#   bench       perf/kernels_bench (SPCCL_GPU_BENCH=1 only)
# Stages that would pass the overall deadline are skipped and the summary
# says so. Usage, from the repository root or anywhere:
#
#   tests/gpu/run_on_gpu.sh [--build-only | --dry-run] [build-dir]   (default: build-gpu)
#
#   --build-only (or SPCCL_GPU_BUILD_ONLY=1): configure, build and run the host stage only
#   --dry-run: print the environment, the configure command and the plan; build nothing
#
# A bare image (the lent GPU machines: no GoogleTest, no OpenSSL headers)
# needs the kit of scripts/prepare-device-kit.sh, carried as .devkit: it is
# used whenever .devkit/ exists. nccl.h (for libspccl_nccl.so) comes from
# the CUDA toolkit, else from PyTorch's NCCL wheel, else from .devkit.
#
# Environment:
#   SPCCL_CUDA_ARCHS          architectures (default: the GPU's own from nvidia-smi, else 90-real)
#   SPCCL_GPU_DEADLINE_S      overall budget in seconds, build included (default 420); no stage
#                             starts, and no run lasts, past it less 20 s for packing the logs
#   SPCCL_GPU_TEST_MAX_COUNT  largest element count of the kernel runs (default 16777217)
#   SPCCL_SANITIZER_MAX_COUNT largest count under compute-sanitizer (default 4097)
#   SPCCL_SANITIZER_TOOLS     compute-sanitizer tools (default "memcheck racecheck")
#   SPCCL_GPU_LIMITS          per-stage limits in seconds, "stage=s ..." overriding the defaults
#                             build=300 collectives=120 torch=90 pieces=90 cudaipc=90 devicepath=240
#                             devicesparse=150 devicetokens=180 devicecodecs=180
#                             devicebench=210 netns=150
#                             kernel=120 (each binary)
#                             kernels=150 sanitize_one=20 sanitizer=90 bench=90
#   SPCCL_GPU_STAGES          the stages to run, e.g. "kernels collectives torch" (default:
#                             all; host always runs): a device session split over two calls
#   SPCCL_GPU_OVERLAP         1 (default): kernels, collectives and sanitizer at once; 0: in turn
#   SPCCL_GPU_PARALLEL        kernel and sanitizer runs at a time on the one GPU (default 8,
#                             every binary at once; 1 runs them one after the other)
#   SPCCL_GPU_EXTRA_TARGETS   more ninja targets to build
#   SPCCL_GPU_CMAKE_ARGS      more configure arguments (word-split), e.g. the bare-image
#                             simulation of tests/gpu/README.md
#   SPCCL_GPU_RESULTS         where the logs go (default: <build-dir>/gpu-results)
#   SPCCL_GPU_BENCH=1         also build and run perf/kernels_bench
#   JOBS                      build parallelism (default: nproc)
#   OUT                       if set (the device tool's output folder): summary.txt and
#                             gpu-logs.tar.gz (every log) are copied there
#
# Exits 0 only when every stage ran and passed: a failure, a timeout, a
# skipped stage, a skipped test (on a GPU machine a skip means the device
# could not be used) or no GPU at all gives a non-zero exit.
set -uo pipefail
t_start=$(date +%s)

mode=run
[[ ${SPCCL_GPU_BUILD_ONLY:-0} == 1 ]] && mode="build-only"
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-only) mode="build-only" ;;
    --dry-run) mode="dry-run" ;;
    -h | --help)
      sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    -*)
      echo "run_on_gpu.sh: unknown option $1" >&2
      exit 2
      ;;
    *) break ;;
  esac
  shift
done

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-gpu}
[[ $build == /* ]] || build=$PWD/$build
results=${SPCCL_GPU_RESULTS:-$build/gpu-results}
jobs=${JOBS:-$(nproc)}
deadline=$((t_start + ${SPCCL_GPU_DEADLINE_S:-420} - 20))
mkdir -p "$results"
summary=$results/summary.txt
: >"$summary"
failed=0
skipped_stages=()

declare -A limit=([build]=300 [collectives]=120 [torch]=90 [pieces]=90 [cudaipc]=90 [devicepath]=240 [devicesparse]=150 [devicetokens]=180 [devicecodecs]=180 [devicebench]=210 [netns]=150 [kernel]=120 [kernels]=150
  [sanitize_one]=20 [sanitizer]=90 [bench]=90)
for kv in ${SPCCL_GPU_LIMITS:-}; do limit[${kv%%=*}]=${kv#*=}; done

note() { echo "$*" | tee -a "$summary"; }
elapsed() { echo $(($(date +%s) - t_start)); }
left() { echo $((deadline - $(date +%s))); }
# clip SECONDS: SECONDS, or less where the deadline is nearer (at least 1:
# timeout 0 would mean no limit).
clip() {
  local l
  l=$(left)
  ((l < 1)) && l=1
  ((l < $1)) && echo "$l" || echo "$1"
}

# Packs what there is into $OUT (at most a few files come back, each under
# 16 MiB): summary.txt and gpu-logs.tar.gz.
pack_out() {
  [[ -n ${OUT:-} && -d ${OUT:-} ]] || return 0
  cp "$summary" "$OUT/summary.txt"
  tar -C "$(dirname "$results")" -czf "$OUT/gpu-logs.tar.gz" "$(basename "$results")" 2>/dev/null
  if [[ $(stat -c %s "$OUT/gpu-logs.tar.gz") -gt $((15 * 1024 * 1024)) ]]; then
    # Too big: every log cut to its last MiB.
    local cut
    cut=$(mktemp -d)
    (cd "$results" && find . -type f -print0 | while IFS= read -r -d '' f; do
      mkdir -p "$cut/gpu-results/$(dirname "$f")"
      tail -c 1048576 "$f" >"$cut/gpu-results/$f"
    done)
    tar -C "$cut" -czf "$OUT/gpu-logs.tar.gz" gpu-results
    rm -rf "$cut"
    echo "(logs cut to their last MiB each in gpu-logs.tar.gz)" >>"$OUT/summary.txt"
  fi
}

finish() {
  note "== $([[ $failed == 0 ]] && echo ALL PASSED || echo FAILURES) after $(elapsed) s (logs: $results)"
  if ((${#skipped_stages[@]})); then
    note "   not run: $(printf '%s; ' "${skipped_stages[@]}")"
  fi
  pack_out
  exit "$failed"
}

# stage NAME: a header with the time so far; stage_end NAME T0: its elapsed time.
stage() { note "== [$(printf '%4s' "$(elapsed)") s] $*"; }
stage_end() { note "   stage $1: $(($(date +%s) - $2)) s"; }

# run NAME LIMIT COMMAND...: logs to $results/NAME.log, killed after LIMIT
# seconds; a failure, a timeout or a gtest skip fails the script.
run() {
  local name=$1 lim=$2
  shift 2
  local log=$results/$name.log t0 status passed skipped verdict
  t0=$(date +%s)
  timeout -k 5 "$lim" "$@" >"$log" 2>&1
  status=$?
  # gtest's closing summary: "[  PASSED  ] N tests." / "[  SKIPPED ] N tests, listed below:"
  passed=$(grep -aoP '^\[  PASSED  \] \K[0-9]+' "$log" | tail -1)
  skipped=$(grep -aoP '^\[  SKIPPED \] \K[0-9]+(?= tests?,)' "$log" | tail -1)
  passed=${passed:-0} skipped=${skipped:-0}
  verdict=PASS
  if [[ $status -eq 124 || $status -eq 137 ]]; then
    verdict="TIMEOUT (${lim} s)"
  elif [[ $status -ne 0 ]]; then
    verdict="FAIL (exit $status)"
  elif [[ $skipped -ne 0 ]]; then
    verdict="SKIPPED ($skipped)"
  fi
  [[ $verdict == PASS ]] || failed=1
  note "$(printf '   %-38s %-22s %5s tests ok  %4s s' "$name" "$verdict" "$passed" $(($(date +%s) - t0)))"
  [[ $verdict == PASS ]]
}

# skip_stage NAME WHY: a stage left out counts as a failure and is named.
skip_stage() {
  note "   SKIPPED $1: $2"
  skipped_stages+=("$1")
  failed=1
}

# ---- environment ----
export PATH=/usr/local/cuda/bin:$PATH
{
  echo "== spccl GPU run, $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), mode $mode, $(nproc) cores"
  echo "-- git: $(git -C "$root" log -1 --format='%h %s' 2>/dev/null | cut -c1-100 || echo '(no git)')"
  echo "-- nvidia-smi"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1
  else
    echo "nvidia-smi not found"
  fi
  echo "-- nvcc: $(nvcc --version 2>&1 | tail -2 | head -1)"
  echo "-- cmake: $(cmake --version 2>&1 | head -1); ninja $(ninja --version 2>&1)"
  echo "-- python3: $(command -v python3)"
  timeout 60 python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' 2>&1 | tail -1
  echo "-- /usr/include/openssl: $([[ -d /usr/include/openssl ]] && echo present || echo absent)"
  echo "-- .devkit: $([[ -f $root/.devkit/README ]] && tr '\n' ' ' <"$root/.devkit/README" || echo absent)"
  echo "-- ldconfig -p | grep -E 'libcrypto|libnccl|libcuda'"
  ldconfig -p 2>/dev/null | grep -E 'libcrypto|libnccl|libcuda' | sed 's/^/  /'
} 2>&1 | tee "$results/environment.log" | tee -a "$summary"

gpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  gpu=1
fi

archs=${SPCCL_CUDA_ARCHS:-}
if [[ -z $archs && $gpu == 1 ]]; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
  [[ -n $cap ]] && archs="${cap}-real"
fi
archs=${archs:-90-real}

for tool in cmake ninja nvcc timeout; do
  command -v "$tool" >/dev/null || {
    note "missing prerequisite: $tool"
    failed=1
    finish
  }
done

# ---- configure ----
cmake_args=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPCCL_BUILD_CUDA=ON
  "-DSPCCL_CUDA_ARCHS=$archs" -DSPCCL_BUILD_PYTHON=OFF)
if command -v ccache >/dev/null; then
  cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
kit=$root/.devkit
if [[ -d $kit/openssl/lib ]]; then
  cmake_args+=("-DOPENSSL_ROOT_DIR=$kit/openssl" -DOPENSSL_USE_STATIC_LIBS=ON)
fi
if [[ -d $kit/googletest ]]; then
  cmake_args+=("-DSPCCL_GTEST_SOURCE_DIR=$kit/googletest")
fi
# nccl.h: the kit's (the NCCL 2.28 header libspccl_nccl.so is written and
# tested against; a lent machine's /usr/include/nccl.h was an older 2.28
# without ncclCommRevoke), else the toolkit's (found by CMake), else
# PyTorch's NCCL wheel (its libnccl.so.2 too: the real NCCL of the forward
# mode).
if [[ -f $kit/nccl/include/nccl.h ]]; then
  cmake_args+=("-DSPCCL_NCCL_INCLUDE=$kit/nccl/include")
elif [[ ! -f /usr/local/cuda/include/nccl.h && ! -f /usr/include/nccl.h ]]; then
  nccl_found=$(timeout 60 python3 - <<'EOF' 2>/dev/null
import glob, os, site, sys
dirs = [p for p in sys.path if p.endswith("-packages")]
try:
    dirs += site.getsitepackages()
except Exception:
    pass
h = l = ""
for d in dict.fromkeys(dirs):
    h = h or next(iter(sorted(glob.glob(os.path.join(d, "nvidia", "**", "nccl.h"), recursive=True))), "")
    l = l or next(iter(sorted(glob.glob(os.path.join(d, "nvidia", "**", "libnccl.so*"), recursive=True))), "")
print(os.path.dirname(h) if h else "-", l or "-")
EOF
  )
  read -r nccl_inc nccl_lib <<<"${nccl_found:-- -}"
  if [[ $nccl_inc != - ]]; then
    cmake_args+=("-DSPCCL_NCCL_INCLUDE=$nccl_inc")
  elif [[ -f $kit/nccl/include/nccl.h ]]; then
    cmake_args+=("-DSPCCL_NCCL_INCLUDE=$kit/nccl/include")
  fi
  [[ ${nccl_lib:--} != - ]] && cmake_args+=("-DSPCCL_NCCL_LIBRARY=$nccl_lib")
fi

read -ra extra_cmake <<<"${SPCCL_GPU_CMAKE_ARGS:-}"
cmake_args+=("${extra_cmake[@]}")

targets=(spccl spccl_nccl spcclrun spccl_gpu_tests spccl_gpu_collective_tests all_reduce_perf
  sparse_all_reduce_perf all_gather_perf reduce_scatter_perf broadcast_perf reduce_perf alltoall_perf
  spccl_cuda_ipc_tests device_kernels_bench migrate_perf)
[[ ${SPCCL_GPU_BENCH:-0} == 1 ]] && targets+=(kernels_bench)
read -ra extra <<<"${SPCCL_GPU_EXTRA_TARGETS:-}"
targets+=("${extra[@]}")

if [[ $mode == dry-run ]]; then
  note "== dry run: cmake ${cmake_args[*]}"
  note "   ninja -C $build -j $jobs: ${targets[*]} (those that exist)"
  note "   stages: host collectives($([[ -x $root/tests/gpu/run_collectives.sh ]] && echo present || echo absent))" \
    "torch($([[ -x $root/tests/gpu/run_torch_shim.sh ]] && echo present || echo absent))" \
    "pieces cudaipc devicepath devicesparse devicetokens devicecodecs devicebench kernels sanitizer$([[ ${SPCCL_GPU_BENCH:-0} == 1 ]] && echo ' bench'); GPU: $gpu; deadline ${SPCCL_GPU_DEADLINE_S:-420} s"
  exit 0
fi

stage "configure and build ($archs, -j$jobs)"
t0=$(date +%s)
if ! timeout 120 cmake "${cmake_args[@]}" >"$results/configure.log" 2>&1; then
  note "configure FAILED (see configure.log); on a bare image run scripts/prepare-device-kit.sh first and carry .devkit"
  tail -20 "$results/configure.log"
  failed=1
  finish
fi
grep -A12 'configuration summary' "$results/configure.log" | sed 's/^-- /   /' | tee -a "$summary"
all_targets=$(ninja -C "$build" -t targets all 2>/dev/null | cut -d: -f1)
present=()
for target in "${targets[@]}"; do
  if grep -qx "$target" <<<"$all_targets"; then
    present+=("$target")
  else
    note "   target $target does not exist in this tree: not built"
    case $target in spccl | spccl_nccl | spcclrun | spccl_gpu_tests) failed=1 ;; esac
  fi
done
note "   building: ${present[*]}"
# -k 0: one target's failure does not stop the others; the stages whose
# programs were built still run (the device time is too scarce to stop at
# the first error).
timeout -k 10 "$(clip "${limit[build]}")" ninja -k 0 -C "$build" -j "$jobs" "${present[@]}" \
  >"$results/build.log" 2>&1
status=$?
if [[ $status -ne 0 ]]; then
  note "build FAILED (exit $status$([[ $status == 124 ]] && echo ': timed out'); see build.log)"
  grep -E 'error|FAILED' "$results/build.log" | head -20
  failed=1
  [[ $status == 124 ]] && finish
fi
stage_end configure+build "$t0"

# ---- host: the kernels' logic on the CPU ----
stage "host"
t0=$(date +%s)
run test_cuda_logic_on_host "$(clip 120)" "$build/tests/gpu/test_cuda_logic_on_host"
stage_end host "$t0"

if [[ $mode == build-only ]]; then
  note "== build only: GPU stages not run"
  finish
fi
if [[ $gpu == 0 ]]; then
  note "== NO GPU (nvidia-smi missing or sees no device): collectives, torch, kernels, sanitizer NOT RUN"
  skipped_stages+=(collectives torch kernels sanitizer)
  failed=1
  finish
fi

# selected NAME: whether SPCCL_GPU_STAGES (empty: every stage) names NAME.
selected() { [[ -z ${SPCCL_GPU_STAGES:-} || " $SPCCL_GPU_STAGES " == *" $1 "* ]]; }

# external STAGE SCRIPT: another engineer's runner, called as SCRIPT BUILD RESULTS.
external() {
  local name=$1 script=$root/tests/gpu/$2 t0
  selected "$name" || return 0
  stage "$name ($2)"
  t0=$(date +%s)
  if [[ ! -f $script ]]; then
    note "   $2 not in this tree: stage $name not run"
  elif (($(left) < 10)); then
    skip_stage "$name" "deadline reached"
  else
    mkdir -p "$results/$name"
    run "$name" "$(clip "${limit[$name]}")" bash "$script" "$build" "$results/$name"
  fi
  stage_end "$name" "$t0"
}

binaries=()
for binary in "$build"/tests/gpu/test_gpu_*; do
  [[ -f $binary && -x $binary ]] && binaries+=("$binary")
done

# run_capped STAGE STAGE_LIMIT ONE_LIMIT SUFFIX PREFIX...: every binary, each
# at most ONE_LIMIT s, the whole at most STAGE_LIMIT s, SPCCL_GPU_PARALLEL at
# a time (processes share the GPU; the CPU references use the cores); what
# is left when the time is up is named.
run_capped() {
  local name=$1 stage_lim=$2 one_lim=$3 suffix=$4
  shift 4
  local stage_end_t=$(($(date +%s) + stage_lim)) binary rest lim left_out=() running=0
  local parallel=${SPCCL_GPU_PARALLEL:-8}
  for binary in "${binaries[@]}"; do
    while ((running >= parallel)); do
      wait -n || failed=1
      running=$((running - 1))
    done
    rest=$((stage_end_t - $(date +%s)))
    lim=$(clip "$one_lim")
    ((rest < lim)) && lim=$rest
    if ((lim < 3)); then
      left_out+=("$(basename "$binary")$suffix")
      continue
    fi
    run "$(basename "$binary")$suffix" "$lim" "$@" "$binary" &
    running=$((running + 1))
  done
  while ((running > 0)); do
    wait -n || failed=1
    running=$((running - 1))
  done
  if ((${#left_out[@]})); then
    skip_stage "$name (partly)" "over its ${stage_lim} s cap or the deadline: ${left_out[*]}"
  fi
}

kernels_stage() {
  selected kernels || return 0
  stage "kernels (counts up to ${SPCCL_GPU_TEST_MAX_COUNT:-16777217})"
  local t0
  t0=$(date +%s)
  run_capped kernels "${limit[kernels]}" "${limit[kernel]}" ""
  stage_end kernels "$t0"
}

sanitizer_stage() {
  selected sanitizer || return 0
  stage "sanitizer"
  local t0 sanitizer candidate plain_max sanitize_end rest tool
  t0=$(date +%s)
  sanitizer=$(command -v compute-sanitizer || true)
  for candidate in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    [[ -z $sanitizer && -x $candidate ]] && sanitizer=$candidate
  done
  if [[ -z $sanitizer ]]; then
    skip_stage sanitizer "compute-sanitizer NOT FOUND"
  else
    plain_max=${SPCCL_GPU_TEST_MAX_COUNT-unset}
    export SPCCL_GPU_TEST_MAX_COUNT=${SPCCL_SANITIZER_MAX_COUNT:-4097}
    note "   $($sanitizer --version | tail -1), counts up to $SPCCL_GPU_TEST_MAX_COUNT," \
      "each run <= ${limit[sanitize_one]} s, all <= ${limit[sanitizer]} s"
    sanitize_end=$(($(date +%s) + limit[sanitizer]))
    for tool in ${SPCCL_SANITIZER_TOOLS:-memcheck racecheck}; do
      rest=$((sanitize_end - $(date +%s)))
      if ((rest < 3)); then
        skip_stage "sanitizer $tool" "over the sanitizer cap of ${limit[sanitizer]} s"
        continue
      fi
      run_capped "sanitizer $tool" "$rest" "${limit[sanitize_one]}" ".$tool" \
        "$sanitizer" --tool "$tool" --error-exitcode 97
    done
    if [[ $plain_max == unset ]]; then unset SPCCL_GPU_TEST_MAX_COUNT; else SPCCL_GPU_TEST_MAX_COUNT=$plain_max; fi
  fi
  stage_end sanitizer "$t0"
}

# The correctness stages (kernels, collectives, sanitizer) time nothing, so
# with SPCCL_GPU_OVERLAP=1 (the default) they run at the same time, sharing
# the GPU and the cores, each in a subshell whose failures and skipped
# stages come back through files; the timed stages (torch, the benches)
# then run one at a time on an otherwise idle machine.
overlapped() {
  local fn=$1 marks=$results/.overlap.$1
  (
    failed=0 skipped_stages=()
    "$fn"
    printf '%s\n' "${skipped_stages[@]}" >"$marks.skipped"
    exit "$failed"
  ) &
}
if [[ ${SPCCL_GPU_OVERLAP:-1} == 1 ]]; then
  overlapped kernels_stage
  overlapped sanitizer_stage
  external collectives run_collectives.sh
  while ((1)); do
    wait -n
    status=$?
    ((status == 127)) && break # no child left
    ((status != 0)) && failed=1
  done
  for marks in "$results"/.overlap.*.skipped; do
    [[ -f $marks ]] || continue
    while IFS= read -r line; do [[ -n $line ]] && skipped_stages+=("$line"); done <"$marks"
    rm -f "$marks"
  done
else
  kernels_stage
  external collectives run_collectives.sh
  sanitizer_stage
fi
external torch run_torch_shim.sh
external cudaipc run_cuda_ipc.sh
external devicepath run_device_all_reduce.sh
external devicesparse run_device_sparse.sh
external devicetokens run_device_tokens.sh
external devicecodecs run_device_codecs.sh
external devicebench run_device_bench.sh
external pieces run_staging_pieces.sh
external netns run_netns_bench.sh

if [[ ${SPCCL_GPU_BENCH:-0} == 1 ]]; then
  stage "perf/kernels_bench"
  t0=$(date +%s)
  if [[ ! -x $build/perf/kernels_bench ]]; then
    skip_stage bench "perf/kernels_bench not built (Google Benchmark missing?)"
  elif (($(left) < 10)); then
    skip_stage bench "deadline reached"
  else
    run kernels_bench "$(clip "${limit[bench]}")" "$build/perf/kernels_bench" \
      --benchmark_counters_tabular=true "--benchmark_out=$results/kernels_bench.json" \
      --benchmark_out_format=json
    python3 "$root/perf/kernels_bench_table.py" "$results/kernels_bench.json" | tee -a "$summary"
  fi
  stage_end bench "$t0"
fi

finish
