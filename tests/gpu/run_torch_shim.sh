#!/usr/bin/env bash
# PyTorch DDP (examples/ddp_embedding.py) under libspccl_nccl.so on a GPU:
#
#   tests/gpu/run_torch_shim.sh BUILD_DIR RESULTS_DIR
#
# runs, each under `timeout 90` (RUN_TIMEOUT), one process per rank:
#   plain_nccl_n1      torch's own NCCL, 1 rank
#   shim_forward_n1    the shim preloaded, SPCCL_NCCL_MODE=forward, 1 rank
#   shim_replace_n2    the shim, SPCCL_NCCL_MODE=replace, 2 ranks on GPU 0
#   shim_replace_n4    the same, 4 ranks on GPU 0 (NCCL itself refuses that)
#   gloo_cuda_n2, _n4  the reference of the two above: the same model on the
#                      same GPU with the gloo backend (CUDA tensors; gloo
#                      reduces them on the host), the shim not loaded
# and compares the losses step by step: shim_forward_n1 with plain_nccl_n1,
# shim_replace_nK with gloo_cuda_nK. Prints a table (also RESULTS_DIR/summary.md)
# and exits non-zero when a run fails, the shim did not serve a shim run, or
# a comparison fails.
#
# Tolerance: |loss - reference| <= LOSS_RTOL * |reference| + LOSS_ATOL
# (1e-4, 1e-6). Every path here is lossless: DDP divides each gradient by
# the world size, then sums the ranks' buckets; only the order of that sum
# differs between gloo's ring and spccl's algorithms (sparse or dense).
# With 2 ranks a + b == b + a exactly, so the losses are expected bit for
# bit equal; with 4, a different association changes a gradient element by
# a few ulps (float32: ~1e-7 relative), and the training steps that follow
# amplify it, but over tens of steps it stays orders of magnitude below
# 1e-4 relative, while a real fault (a rank's contribution missing or
# twice, a wrong scale, a buffer read before the stream wrote it) moves the
# loss in its second or third digit from the first update on (step 1). The
# table shows the largest relative difference seen and the steps that are
# bit for bit equal. The 1-rank pair runs the same computation: equal.
#
# Knobs: PYTHON (else /opt/torch/.venv/bin/python3, else python3), STEPS
# (40), WARMUP (5), EXAMPLE_ARGS (more arguments for the example),
# LOSS_RTOL, LOSS_ATOL, RUN_TIMEOUT (90), LAUNCHER (torchrun: python3 -m
# torch.distributed.run --standalone; bash: this script starts the ranks
# itself with torchrun's variables, for a torch whose torchrun is broken),
# DEVICE (cuda; cpu: a dry run of this script's plumbing where there is no
# GPU: the nccl runs use gloo, and the shim runs fail as the shim serves
# nothing).
#
# spccl needs a job secret (docs/security.md): a fresh 256-bit one is
# written to a 0600 file in a private directory and passed as
# SPCCL_JOB_SECRET_FILE; removed at exit.
set -uo pipefail

if [[ ${1:-} == --launch ]]; then
  # Internal: --launch N -- CMD...: N ranks of CMD with torchrun's
  # variables, killed together when one is signalled.
  n=$2
  shift 3
  port=$(( (RANDOM % 20000) + 20000 ))
  pids=()
  trap 'kill "${pids[@]}" 2>/dev/null; exit 143' TERM INT
  for ((r = 0; r < n; r++)); do
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=$n LOCAL_WORLD_SIZE=$n GROUP_RANK=0 \
      MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@" &
    pids+=($!)
  done
  status=0
  for p in "${pids[@]}"; do wait "$p" || status=$?; done
  exit "$status"
fi

if (($# != 2)); then
  echo "usage: $0 BUILD_DIR RESULTS_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && results=$(cd "$2" && pwd) || exit 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
example=$repo/examples/ddp_embedding.py

python=${PYTHON:-}
if [[ -z $python ]]; then
  if [[ -x /opt/torch/.venv/bin/python3 ]]; then python=/opt/torch/.venv/bin/python3; else python=python3; fi
fi
steps=${STEPS:-40}
warmup=${WARMUP:-5}
rtol=${LOSS_RTOL:-1e-4}
atol=${LOSS_ATOL:-1e-6}
run_timeout=${RUN_TIMEOUT:-90}
launcher=${LAUNCHER:-torchrun}

library=$(find "$build" -name libspccl_nccl.so -type f 2>/dev/null | head -n 1)
if [[ -z $library ]]; then
  echo "run_torch_shim: no libspccl_nccl.so under $build" >&2
  exit 1
fi

secret_dir=$(mktemp -d "${TMPDIR:-/tmp}/spccl-torch-shim.XXXXXX")
trap 'rm -rf "$secret_dir"' EXIT
chmod 700 "$secret_dir"
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$secret_dir/job-secret")
chmod 600 "$secret_dir/job-secret"
export SPCCL_JOB_SECRET_FILE=$secret_dir/job-secret

echo "== run_torch_shim: $library; $($python -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "", "gpus", torch.cuda.device_count())' 2>&1)"

# The real NCCL torch loads (forward mode forwards to it), and whether
# torch links it dynamically at all (a static NCCL cannot be interposed).
torch_lib=$($python -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null)
real_nccl=""
for so in "$torch_lib"/libtorch_cuda.so "$torch_lib"/libtorch_cuda*.so; do
  [[ -f $so ]] || continue
  real_nccl=$(ldd "$so" 2>/dev/null | awk '/libnccl\.so/ {print $3; exit}')
  [[ -n $real_nccl ]] && break
done
if [[ -z $real_nccl ]]; then
  real_nccl=$($python - <<'EOF' 2>/dev/null
import glob, os, site
for d in site.getsitepackages():
    for f in glob.glob(os.path.join(d, "nvidia", "nccl*", "lib", "libnccl.so.2")):
        print(f)
        raise SystemExit
EOF
)
fi
echo "== real NCCL: ${real_nccl:-not found (forward mode searches libnccl.so.2 itself)}"
if [[ -n $torch_lib ]] && command -v nm >/dev/null; then
  # NCCL functions torch calls that the shim does not export would reach
  # the real NCCL with the shim's communicator handles.
  missing=$(comm -23 \
    <(nm -D --undefined-only "$torch_lib"/libtorch_cuda*.so 2>/dev/null |
      awk '{print $NF}' | grep -E '^nccl[A-Z]' | sed 's/@.*//' | sort -u) \
    <(nm -D --defined-only "$library" | awk '{print $NF}' | sed 's/@.*//' | sort -u))
  echo "== NCCL functions torch imports that the shim lacks: ${missing:-none}"
fi

device=${DEVICE:-cuda}
common=(--hooks ddp --device "$device" --steps "$steps" --warmup "$warmup" --print-losses)
# shellcheck disable=SC2206 # EXAMPLE_ARGS is split on purpose
extra=(${EXAMPLE_ARGS:-})

names=() statuses=() rates=() sent=() notes=()
failed=0

# run NAME NRANKS BACKEND [VAR=VALUE...]: the example on NRANKS ranks.
run() {
  local name=$1 n=$2 backend=$3
  shift 3
  [[ $device == cpu ]] && backend=gloo
  local log=$results/$name.log losses=$results/$name.losses.json
  rm -f "$losses"
  local launch
  if [[ $launcher == torchrun ]]; then
    launch=("$python" -m torch.distributed.run --standalone --nnodes 1 --nproc_per_node "$n")
  else
    launch=("$0" --launch "$n" --)
    launch+=("$python")
  fi
  echo "== $name: $n rank(s), backend $backend${*:+, $*}"
  local start=$SECONDS status=0
  env "$@" OMP_NUM_THREADS=1 timeout --kill-after=10 "$run_timeout" "${launch[@]}" "$example" \
    "${common[@]}" --backend "$backend" --loss-file "$losses" "${extra[@]}" >"$log" 2>&1 ||
    status=$?
  local note=""
  ((status == 124 || status == 137)) && note="timed out after ${run_timeout}s"
  if ((status == 0)) && [[ ! -s $losses ]]; then
    status=1
    note="no loss file"
  fi
  if ((status == 0)) && [[ " $* " == *SPCCL_NCCL_MODE=* ]] &&
    ! grep -q "NCCL interposer" "$log"; then
    status=1
    note="the shim served nothing (is NCCL linked statically?)"
  fi
  local reports
  reports=$(grep -c "spccl NCCL interposer report" "$log")
  [[ " $* " == *SPCCL_NCCL_MODE=* ]] && note="${note:+$note; }$reports report header(s)"
  grep -E "steps/s|interposer report|\| ncclAllReduce|\| ncclBroadcast|\| ncclAllGather" "$log" |
    head -n 40
  if ((status != 0)); then
    echo "-- $name failed ($status): the log's last lines"
    # The first errors (spccl's WARN lines, CUDA errors, torch's watchdog),
    # then the end: torchrun's summary alone does not say why a rank died.
    grep -E 'WARN|[Ee]rror|what\(\)|terminate|Exception|Traceback' "$log" | head -n 40
    tail -n 30 "$log"
    failed=1
  fi
  echo "-- $name: exit $status in $((SECONDS - start)) s"
  names+=("$name")
  statuses+=("$status")
  rates+=("$($python -c 'import json, sys; print("%.2f" % json.load(open(sys.argv[1]))["steps_per_s"]["ddp"])' "$losses" 2>/dev/null || echo -)")
  # Rank 0's bytes on spccl's transports (every communicator's report
  # line), per step of the example (warm-up steps and DDP's set-up
  # broadcast included): what the shim sends; "-" where spccl sent nothing.
  sent+=("$(grep -aoP "rank 0/[0-9]+\] traffic on spccl's transports \(this rank\): sent \K[0-9]+" "$log" |
    awk -v steps=$((steps + warmup)) '{sum += $1} END {if (sum > 0) printf "%.0f", sum / steps; else print "-"}')")
  notes+=("${note:--}")
}

shim=(LD_PRELOAD="$library" SPCCL_INTERPOSE_REPORT=1 SPCCL_DEBUG=INFO SPCCL_DEBUG_SUBSYS=INIT)
forward=(SPCCL_NCCL_MODE=forward)
[[ -n $real_nccl ]] && forward+=(SPCCL_NCCL_LIB="$real_nccl")

run plain_nccl_n1 1 nccl
run shim_forward_n1 1 nccl "${shim[@]}" "${forward[@]}"
run shim_replace_n2 2 nccl "${shim[@]}" SPCCL_NCCL_MODE=replace
run shim_replace_n4 4 nccl "${shim[@]}" SPCCL_NCCL_MODE=replace
run gloo_cuda_n2 2 gloo
run gloo_cuda_n4 4 gloo

# compare RUN REFERENCE: rank 0's losses, step by step.
comparisons=()
compare() {
  local line status=0
  line=$("$python" - "$results/$1.losses.json" "$results/$2.losses.json" "$rtol" "$atol" <<'EOF'
import json, math, sys
try:
    got = json.load(open(sys.argv[1]))["losses"]["ddp"]
    want = json.load(open(sys.argv[2]))["losses"]["ddp"]
except (OSError, ValueError, KeyError) as error:
    print(f"no losses to compare ({error})")
    sys.exit(1)
rtol, atol = float(sys.argv[3]), float(sys.argv[4])
if len(got) != len(want):
    print(f"{len(got)} steps against {len(want)}")
    sys.exit(1)
worst, worst_step, equal, bad = 0.0, -1, 0, []
for step, (g, w) in enumerate(zip(got, want)):
    equal += g == w
    diff = abs(g - w)
    rel = diff / abs(w) if w else diff
    if not (rel <= worst):
        worst, worst_step = rel, step
    if not (math.isfinite(g) and diff <= rtol * abs(w) + atol):
        bad.append(step)
text = (f"{equal}/{len(got)} steps bit-equal, max rel diff {worst:.3g} (step {worst_step}), "
        f"tol {rtol:g}*|ref|+{atol:g}")
if bad:
    s = bad[0]
    print(f"FAIL at {len(bad)} steps, first {s}: {got[s]!r} vs {want[s]!r}; {text}")
    sys.exit(1)
print(f"ok: {text}")
EOF
) || status=1
  ((status)) && failed=1
  echo "== compare $1 with $2: $line"
  comparisons+=("| $1 | $2 | $line |")
}
compare shim_forward_n1 plain_nccl_n1
compare shim_replace_n2 gloo_cuda_n2
compare shim_replace_n4 gloo_cuda_n4

{
  echo "| run | exit | steps/s | spccl bytes sent per step (rank 0) | notes |"
  echo "|---|---|---|---|---|"
  for i in "${!names[@]}"; do
    echo "| ${names[$i]} | ${statuses[$i]} | ${rates[$i]} | ${sent[$i]} | ${notes[$i]} |"
  done
  echo
  echo "| run | reference | losses (rank 0, $steps steps) |"
  echo "|---|---|---|"
  printf '%s\n' "${comparisons[@]}"
} | tee "$results/summary.md"
((failed)) && echo "run_torch_shim: FAILED (logs in $results)" || echo "run_torch_shim: all passed"
exit "$failed"
