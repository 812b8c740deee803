#!/usr/bin/env bash
# ctest slurm_cluster: spccl under a real Slurm (Debian's slurm-wlm 22.05 and
# munge) on the netns testbed. Brings up 4 emulated hosts, slurmctld on
# host 1 and one slurmd per host (cluster.sh), then
#   1. srun -N 4 -n 8 sparse_all_reduce_perf -c 1: every rank exits 0, rank 0
#      reports no wrong values, each rank found its rank, size and the
#      rendezvous from Slurm's variables alone (spcclCommInitFromEnv);
#   2. srun -N 4 -n 8 examples/ddp_embedding.py --hooks gloo,sparse (torch
#      variables from torch_env.sh; run_example.py works around a hang of
#      torch 1.13 at exit): spccl's sparse hook must train exactly as Gloo's
#      all-reduce does;
#   3. sbatch job.sh (the same perf run, random job secret): polled to
#      COMPLETED with exit code 0 and the output checked;
#   4. scancel of a long sbatch job once all 8 ranks are in their loop:
#      every rank, then every slurmstepd, must be gone within 30 s;
#   5. with MpiParams=ports set (scontrol reconfigure), srun -N 4 -n 8
#      py_from_env.py: spccl.Comm.from_env() on Slurm's variables alone,
#      rendezvous on the step's first reserved port; checked dense and
#      sparse all-reduces;
# and a step with a failing rank must fail srun. Tears everything down on
# any exit. Exit 77 (ctest SKIP) without root, ip netns, tc, slurm-wlm or
# munge.
#   slurm_cluster.sh BUILD_DIR      (BUILD_DIR/perf, BUILD_DIR/python)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
export NETLAB_PREFIX=${NETLAB_PREFIX:-splslurm} NETLAB_SUBNET=${NETLAB_SUBNET:-10.77.9}
BUILD=$(cd "${1:?usage: slurm_cluster.sh BUILD_DIR}" && pwd)
PERF="$BUILD/perf/sparse_all_reduce_perf"
HOSTS=4
RANKS=8
CANCEL_DEADLINE=30

# shellcheck source=../lib/require_testbed.sh
source "$HERE/../lib/require_testbed.sh"
require_testbed slurm_cluster
missing=()
for tool in slurmctld slurmd srun sbatch scancel scontrol sinfo munged munge unmunge unshare; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]})); then
  echo "slurm_cluster: SKIP: ${missing[*]} not found (apt-get install slurm-wlm munge; scripts/install-deps.sh does)"
  exit 77
fi
[[ -x $PERF ]] || fail "$PERF not built"
[[ -f $BUILD/python/spccl/__init__.py ]] || fail "no spccl Python package in $BUILD/python"
/usr/bin/python3 -c 'import numpy, torch' 2>/dev/null || fail "Debian's python3-torch and python3-numpy are needed"

# The job must see Slurm's variables, not the caller's: ctest may itself run
# under a launcher.
for var in $(compgen -e); do
  case $var in
    SPCCL_* | SLURM_* | OMPI_* | PMI_* | PMIX_* | RANK | WORLD_SIZE | LOCAL_RANK | MASTER_ADDR | \
      MASTER_PORT | TORCHELASTIC_*) unset "$var" ;;
  esac
done
export PYTHONPATH="$BUILD/python" OMP_NUM_THREADS=1

dir=$(mktemp -d /tmp/slurm_cluster.XXXXXX)
# The srun steps' job secret (docs/security.md): a 0600 file that every
# emulated host sees; srun passes SPCCL_JOB_SECRET_FILE on. job.sh draws its own.
(umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$dir/job-secret")
export SPCCL_JOB_SECRET_FILE="$dir/job-secret"
# shellcheck source=cluster.sh
source "$HERE/cluster.sh"
passed=0
cleanup() {
  ((passed)) || slurm_cluster_logs
  slurm_cluster_down
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
host_of_rank() { echo "${NETLAB_PREFIX}-h$(($1 / (RANKS / HOSTS) + 1))"; }   # srun's block distribution
summary=()

# expect_slurm_ranks LOG SECRET: every rank printed the perf preamble from
# its own host and logged (ENV) a Slurm launch with its job secret from
# SECRET (the variable), all with one root on host 1; sets root to it.
expect_slurm_ranks() {
  local log=$1 secret=$2 r roots
  for ((r = 0; r < RANKS; r++)); do
    grep -Eq "^#  Rank +$r Pid +[0-9]+ on +$(host_of_rank "$r")\$" "$log" \
      || fail "rank $r is not listed on $(host_of_rank "$r") in $log"
    grep -Eq "slurm launch: rank $r of $RANKS \(local rank $((r % 2))\), root ${NETLAB_PREFIX}-h1:[0-9]+, job secret from $secret" "$log" \
      || fail "rank $r did not log a Slurm launch with its secret from $secret: $(grep "rank $r of" "$log" || true)"
  done
  roots=$(grep -Eo "root ${NETLAB_PREFIX}-h1:[0-9]+" "$log" | sort -u)
  [[ $(wc -l <<<"$roots") -eq 1 ]] || fail "the ranks disagree on the root: $roots"
  root=$roots
}

slurm_cluster_up "$HOSTS" "$dir"

# ---- a failing rank fails the step (so that rc 0 below means something)
if slurm_client timeout -k 5 30 srun -N "$HOSTS" -n "$RANKS" -t 1 sh -c 'exit $((SLURM_PROCID == 5))' \
  >"$dir/out/fail.log" 2>&1; then
  fail "srun returned 0 although task 5 exited 1"
fi

# ---- 1. srun of the perf binary
log="$dir/out/srun_perf.log"
start=$(now); rc=0
slurm_client env SPCCL_DEBUG=INFO SPCCL_DEBUG_SUBSYS=ENV timeout -k 5 60 \
  srun -N "$HOSTS" -n "$RANKS" -t 2 "$PERF" -b 64K -e 4M -f 8 -n 3 -w 1 -c 1 >"$log" 2>&1 || rc=$?
took=$(since "$start")
((rc == 0)) || fail "srun of sparse_all_reduce_perf exited $rc: $(tail -n 20 "$log")"
grep -q "^# Out of bounds values : 0 OK" "$log" || fail "wrong results: $(grep -v '^#' "$log" | tail -n 5)"
expect_slurm_ranks "$log" SPCCL_JOB_SECRET_FILE
port=${root##*:}
((port >= 20000 && port < 30000)) || fail "root port $port is not one derived from the job (20000..29999)"
grep -v "spccl INFO" "$log" | grep -E "^ +[0-9]+ " || true
summary+=("srun -N $HOSTS -n $RANKS sparse_all_reduce_perf -c 1: OK, $took s ($root, derived from job and step)")
echo "slurm_cluster: ${summary[-1]}"

# ---- 2. srun of the DDP example: spccl's sparse hook against Gloo's all-reduce
log="$dir/out/srun_ddp.log"
start=$(now); rc=0
slurm_client timeout -k 5 120 srun -N "$HOSTS" -n "$RANKS" -t 3 --label "$HERE/torch_env.sh" \
  /usr/bin/python3 "$HERE/run_example.py" "$REPO/examples/ddp_embedding.py" --hooks gloo,sparse --steps 12 --warmup 2 \
  --buckets 65536 --batch 16 --print-every 4 --json >"$log" 2>&1 || rc=$?
took=$(since "$start")
((rc == 0)) || fail "srun of examples/ddp_embedding.py exited $rc: $(tail -n 20 "$log")"
verdict=$(/usr/bin/python3 - "$log" "$RANKS" <<'EOF'
import json, sys
runs = {}
for line in open(sys.argv[1]):
    label, _, text = line.partition(": ")
    if label.strip() == "0" and text.startswith("{"):
        run = json.loads(text)
        runs[run["hook"]] = run
gloo, sparse = runs.get("gloo"), runs.get("sparse")
if not gloo or not sparse:
    sys.exit(f"rank 0 printed no JSON line for {'gloo' if not gloo else 'sparse'}")
if gloo["n"] != int(sys.argv[2]) or sparse["n"] != gloo["n"]:
    sys.exit(f"ranks: gloo {gloo['n']}, sparse {sparse['n']}, want {sys.argv[2]}")
# Both hooks sum the same gradients; only the order of the additions differs.
worst = max(abs(a - b) for a, b in zip(gloo["losses_rank0"], sparse["losses_rank0"]))
if len(gloo["losses_rank0"]) != len(sparse["losses_rank0"]) or worst > 1e-4:
    sys.exit(f"losses differ by up to {worst:.2e}: gloo {gloo['losses_rank0']} sparse {sparse['losses_rank0']}")
if abs(gloo["final_loss"] - sparse["final_loss"]) > 1e-4 or not sparse["bytes_sent_per_step"]:
    sys.exit(f"final losses gloo {gloo['final_loss']} sparse {sparse['final_loss']}, "
             f"spccl bytes per step {sparse['bytes_sent_per_step']}")
print(f"12 steps, losses within {worst:.1e} of Gloo's, final {sparse['final_loss']:.4f}, "
      f"spccl {sparse['bytes_sent_per_step'] / 1e6:.2f} MB/step/rank, "
      f"{sparse['buckets'][0]['algorithm'] if sparse['buckets'] else '?'}")
EOF
) || fail "examples/ddp_embedding.py: $verdict"
grep -E "^0: (\[|\|)" "$log" || true
summary+=("srun -N $HOSTS -n $RANKS examples/ddp_embedding.py --hooks gloo,sparse: OK, $took s ($verdict)")
echo "slurm_cluster: ${summary[-1]}"

# ---- 3. sbatch of the perf run
job_field() { slurm_client timeout 15 scontrol show job -o "$1" 2>/dev/null | grep -o "$2=[^ ]*" | cut -d= -f2; }
# wait_job ID SECONDS: until the job leaves PENDING/RUNNING/COMPLETING;
# prints its final state.
wait_job() {
  local id=$1 deadline=$((SECONDS + $2)) state
  while :; do
    state=$(job_field "$id" JobState)
    case $state in
      PENDING | RUNNING | COMPLETING | CONFIGURING | "") ;;
      *) echo "$state"; return 0 ;;
    esac
    ((SECONDS < deadline)) || { echo "TIMEOUT_WAITING($state)"; return 0; }
    sleep 0.5
  done
}
start=$(now)
job=$(slurm_client timeout 30 sbatch --parsable -N "$HOSTS" -n "$RANKS" -t 2 -o "$dir/out/job-%j.out" \
  "$HERE/job.sh" env SPCCL_DEBUG=INFO SPCCL_DEBUG_SUBSYS=ENV \
  "$PERF" -b 64K -e 4M -f 8 -n 3 -w 1 -c 1) || fail "sbatch refused the job"
state=$(wait_job "$job" 90)
took=$(since "$start")
log="$dir/out/job-$job.out"
[[ $state == COMPLETED ]] || fail "sbatch job $job ended $state: $(tail -n 20 "$log" 2>/dev/null)"
[[ $(job_field "$job" ExitCode) == 0:0 ]] || fail "sbatch job $job: ExitCode $(job_field "$job" ExitCode)"
grep -q "^# Out of bounds values : 0 OK" "$log" || fail "sbatch job $job: wrong results: $(tail -n 5 "$log")"
expect_slurm_ranks "$log" SPCCL_JOB_SECRET
[[ ${root##*:} == $((20000 + (job * 16) % 10000)) ]] \
  || fail "job $job step 0: root port ${root##*:}, want 20000 + ($job * 16 + 0) % 10000"
summary+=("sbatch job $job (same perf run, SPCCL_JOB_SECRET from job.sh): COMPLETED, exit 0:0, $took s from submit to done ($root)")
echo "slurm_cluster: ${summary[-1]}"

# ---- 4. scancel of a long job
mkdir -p "$dir/pids"
job=$(slurm_client timeout 30 sbatch --parsable -N "$HOSTS" -n "$RANKS" -t 3 -o "$dir/out/job-%j.out" \
  "$HERE/job.sh" sh -c 'echo $$ >"$0/$SLURM_PROCID" && exec "$@"' "$dir/pids" \
  "$PERF" -b 1M -e 1M -n 1000000 -w 1 -c 0) || fail "sbatch refused the long job"
log="$dir/out/job-$job.out"
# Running: every rank has written its pid and rank 0 has printed the last
# rank's line of the preamble, which needs every rank's communicator.
all_running() {
  local r
  for ((r = 0; r < RANKS; r++)); do
    [[ -s $dir/pids/$r ]] && kill -0 "$(cat "$dir/pids/$r")" 2>/dev/null || return 1
  done
  grep -Eq "^#  Rank +$((RANKS - 1)) " "$log"
}
slurm_wait_for 60 "all $RANKS ranks of job $job to run" all_running \
  || fail "job $job did not start its $RANKS ranks: $(job_field "$job" JobState); $(tail -n 5 "$log" 2>/dev/null)"
sleep 1   # into the timed loop
pids=()
for ((r = 0; r < RANKS; r++)); do pids+=("$(cat "$dir/pids/$r")"); done
ranks_alive() { local p; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
# slurmstepd of this job, found by their command line, in our namespaces only
stepds_alive() {
  local i
  for ((i = 1; i <= HOSTS; i++)); do
    ip netns pids "$(slurm_host_ns "$i")" | xargs -r ps -o args= -p 2>/dev/null | grep -q "slurmstepd: \[$job\." && return 0
  done
  return 1
}
stepds_alive || fail "no slurmstepd of job $job found while it runs"
start=$(now)
slurm_client timeout 30 scancel "$job" || fail "scancel $job failed"
deadline=$((SECONDS + CANCEL_DEADLINE))
while ranks_alive && ((SECONDS < deadline)); do sleep 0.1; done
ranks_gone=$(since "$start")
ranks_alive && fail "ranks of job $job still alive ${CANCEL_DEADLINE}s after scancel: $(for p in "${pids[@]}"; do ps -o pid=,args= -p "$p"; done)"
while stepds_alive && ((SECONDS < deadline)); do sleep 0.2; done
stepds_gone=$(since "$start")
stepds_alive && fail "slurmstepd of job $job still running ${CANCEL_DEADLINE}s after scancel"
state=$(wait_job "$job" $((deadline - SECONDS > 0 ? deadline - SECONDS : 1)))
[[ $state == CANCELLED* ]] || fail "job $job ended $state after scancel"
summary+=("scancel of job $job (sparse_all_reduce_perf -n 1000000, all $RANKS ranks running): every rank gone ${ranks_gone} s after scancel, every slurmstepd ${stepds_gone} s, state $state (deadline ${CANCEL_DEADLINE} s)")
echo "slurm_cluster: ${summary[-1]}"

# ---- 5. srun of the Python check, on ports Slurm reserves for the step
slurm_cluster_reserve_ports 24000-24999 >/dev/null || fail "scontrol reconfigure failed"
log="$dir/out/srun_python.log"
start=$(now); rc=0
slurm_client env SPCCL_DEBUG=INFO SPCCL_DEBUG_SUBSYS=ENV timeout -k 5 60 \
  srun -N "$HOSTS" -n "$RANKS" -t 2 /usr/bin/python3 "$HERE/py_from_env.py" >"$log" 2>&1 || rc=$?
took=$(since "$start")
((rc == 0)) || fail "srun of py_from_env.py exited $rc: $(tail -n 20 "$log")"
for ((r = 0; r < RANKS; r++)); do
  grep -qx "py_from_env: rank $r of $RANKS on $(host_of_rank "$r"): OK" "$log" \
    || fail "rank $r of py_from_env.py did not pass: $(grep "rank $r " "$log" || true)"
done
port=$(grep -Eo "root ${NETLAB_PREFIX}-h1:[0-9]+" "$log" | sort -u | cut -d: -f2)
[[ $port =~ ^24[0-9]{3}$ ]] || fail "the root port '$port' is not the step's reserved port (MpiParams=ports=24000-24999)"
summary+=("srun -N $HOSTS -n $RANKS py_from_env.py (MpiParams=ports=24000-24999): OK, $took s (root port $port, the step's first reserved port)")
echo "slurm_cluster: ${summary[-1]}"

slurm_cluster_down
printf 'slurm_cluster: %s\n' "${summary[@]}"
passed=1
echo "slurm_cluster: PASS"
