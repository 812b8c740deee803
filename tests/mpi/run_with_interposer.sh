#!/usr/bin/env bash
# Runs an unmodified MPI program under mpirun with LD_PRELOAD of the spccl
# MPI interposer, optionally also without it, and checks the outcome.
#
#   run_with_interposer.sh [--plain] [--compare] [--env VAR=VALUE]...
#                          [--expect REGEX]... [--reject REGEX]... -- PROG [ARGS...]
#
#   --plain    first run PROG without the interposer; it must succeed
#   --compare  PROG is mpi_allreduce_check: both runs dump their results,
#              which must agree (PROG --compare, tolerance in its header)
#   --env      passed to the interposed ranks only (mpirun -x)
#   --expect / --reject  extended regexes the interposed run's output
#              (stdout and stderr, the report included) must / must not match
#
# Environment (set by ctest, tests/mpi/CMakeLists.txt): MPIEXEC, NP,
# INTERPOSER (the .so), SANITIZER_PRELOAD (colon list of sanitizer runtimes
# that must come first in LD_PRELOAD, for an ASan-built interposer), and
# SKIP_REASON (exit 77 = skipped, with the reason printed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${MPIEXEC:?}" "${INTERPOSER:?}"
np=${NP:-4}
if [[ -n ${SKIP_REASON:-} ]]; then
  echo "SKIPPED: $SKIP_REASON"
  exit 77
fi

plain=0 compare=0
envs=() expects=() rejects=()
while (($#)); do
  case $1 in
    --plain) plain=1; shift ;;
    --compare) compare=1 plain=1; shift ;;
    --env) envs+=(-x "${2:?}"); shift 2 ;;
    --expect) expects+=("${2:?}"); shift 2 ;;
    --reject) rejects+=("${2:?}"); shift 2 ;;
    --) shift; break ;;
    *) echo "run_with_interposer.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
(($#)) || { echo "run_with_interposer.sh: no program given" >&2; exit 2; }
prog=("$@")

work=$(mktemp -d /tmp/spccl-mpi-test.XXXXXX)
trap 'rm -rf "$work"' EXIT

# --oversubscribe: 4 ranks on 2 cores; --allow-run-as-root: CI runs as root.
mpirun_cmd=(timeout 240 "$MPIEXEC" --allow-run-as-root --oversubscribe --bind-to none -np "$np"
            -x SPCCL_TIMEOUT_MS=${SPCCL_TIMEOUT_MS:-60000})

if ((plain)); then
  args=("${prog[@]}")
  ((compare)) && args+=(--dump "$work/plain")
  echo "== without the interposer: ${args[*]}"
  "${mpirun_cmd[@]}" "${args[@]}" || { echo "FAIL: the program fails without the interposer"; exit 1; }
fi

preload=$INTERPOSER
sanitizer_env=()
if [[ -n ${SANITIZER_PRELOAD:-} ]]; then
  # The sanitizer runtimes must be the first objects loaded; Open MPI's own
  # allocations at exit are not ours to report (lsan_openmpi.supp).
  preload="$SANITIZER_PRELOAD:$INTERPOSER"
  # Open MPI is built without frame pointers and dlcloses its components at
  # MPI_Finalize: full (slow) unwinding and no dlclose give its allocations
  # stacks that reach libmpi, which the suppressions match.
  sanitizer_env=(-x OMPI_MCA_mca_base_component_disable_dlclose=1
                 -x "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=23:fast_unwind_on_malloc=0"
                 -x "LSAN_OPTIONS=suppressions=$here/lsan_openmpi.supp:print_suppressions=0"
                 -x "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
fi
args=("${prog[@]}")
((compare)) && args+=(--dump "$work/spccl")
echo "== with LD_PRELOAD=$preload: ${args[*]}"
status=0
"${mpirun_cmd[@]}" -x "LD_PRELOAD=$preload" -x SPCCL_INTERPOSE_REPORT=1 "${sanitizer_env[@]}" \
  "${envs[@]}" "${args[@]}" >"$work/out" 2>&1 || status=$?
cat "$work/out"
((status == 0)) || { echo "FAIL: the program exits $status with the interposer"; exit 1; }

if ((compare)); then
  for dump in "$work"/plain.rank*; do
    other=$work/spccl.${dump##*.}
    "${prog[0]}" --compare "$dump" "$other" || { echo "FAIL: results differ ($dump vs $other)"; exit 1; }
  done
fi
for regex in "${expects[@]}"; do
  grep -Eq -- "$regex" "$work/out" || { echo "FAIL: the output does not match '$regex'"; exit 1; }
done
for regex in "${rejects[@]}"; do
  if grep -Eq -- "$regex" "$work/out"; then echo "FAIL: the output matches '$regex'"; exit 1; fi
done
echo "PASS"
