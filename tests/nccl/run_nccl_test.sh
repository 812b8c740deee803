#!/usr/bin/env bash
# Runs an NCCL program on N ranks under spcclrun with libspccl_nccl.so in
# place of NCCL, and checks the outcome.
#
#   run_nccl_test.sh [--np N] [--install preload|libdir] [--env VAR=VALUE]...
#                    [--report] [--killed K] [--expect REGEX]... [--reject REGEX]...
#                    -- PROG [ARGS...]
#
#   --install preload  LD_PRELOAD=libspccl_nccl.so (the default)
#             libdir   a directory whose libnccl.so.2 is libspccl_nccl.so,
#                      first in LD_LIBRARY_PATH (PROG links libnccl.so.2)
#   --env      set for the ranks
#   --report   SPCCL_INTERPOSE_REPORT=1, and every communicator's report
#              lines must be equal on all its ranks (check_report.py)
#   --killed   K ranks kill themselves: spcclrun --keep-going, and the
#              other N - K must print PASS
#   --expect / --reject  extended regexes the output (stdout and stderr of
#              every rank) must / must not match
#   @IDDIR@ in ARGS becomes a fresh directory for the unique id's file.
#
# Environment (set by ctest, tests/nccl/CMakeLists.txt): SPCCLRUN, LIBRARY
# (libspccl_nccl.so), REAL_NCCL_DIR (where the real libnccl.so.2 is),
# CHECK_REPORT, SANITIZER_PRELOAD (colon list of sanitizer runtimes that
# must come first in LD_PRELOAD, for an ASan build), SKIP_REASON (exit 77
# = skipped, with the reason printed).
set -euo pipefail
: "${SPCCLRUN:?}" "${LIBRARY:?}" "${CHECK_REPORT:?}"
if [[ -n ${SKIP_REASON:-} ]]; then
  echo "SKIPPED: $SKIP_REASON"
  exit 77
fi

np=1 install=preload report=0 killed=0
envs=() expects=() rejects=()
while (($#)); do
  case $1 in
    --np) np=${2:?}; shift 2 ;;
    --install) install=${2:?}; shift 2 ;;
    --env) envs+=("${2:?}"); shift 2 ;;
    --report) report=1; shift ;;
    --killed) killed=${2:?}; shift 2 ;;
    --expect) expects+=("${2:?}"); shift 2 ;;
    --reject) rejects+=("${2:?}"); shift 2 ;;
    --) shift; break ;;
    *) echo "run_nccl_test.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
(($#)) || { echo "run_nccl_test.sh: no program given" >&2; exit 2; }

work=$(mktemp -d /tmp/spccl-nccl-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/ids"
prog=()
for arg in "$@"; do prog+=("${arg//@IDDIR@/$work/ids}"); done

libpath=${REAL_NCCL_DIR:-}
preload=""
case $install in
  preload) preload=$LIBRARY ;;
  libdir)
    mkdir "$work/lib"
    ln -s "$LIBRARY" "$work/lib/libnccl.so.2"
    libpath="$work/lib${libpath:+:$libpath}" ;;
  *) echo "run_nccl_test.sh: --install preload or libdir" >&2; exit 2 ;;
esac
sanitizer_env=()
if [[ -n ${SANITIZER_PRELOAD:-} ]]; then
  # The sanitizer runtimes must be the first objects loaded. (No leak
  # suppressions: the real NCCL, loaded by the forward tests, leaks
  # nothing LeakSanitizer sees on a host where its init fails.)
  preload="$SANITIZER_PRELOAD${preload:+:$preload}"
  sanitizer_env=("ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=23"
                 "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
fi
rank_env=("LD_LIBRARY_PATH=$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
[[ -n $preload ]] && rank_env+=("LD_PRELOAD=$preload")
((report)) && rank_env+=(SPCCL_INTERPOSE_REPORT=1)

echo "== spcclrun -n $np, libspccl_nccl.so by $install: ${envs[*]} ${prog[*]}"
status=0
keep_going=()
((killed > 0)) && keep_going=(--keep-going)
timeout 280 "$SPCCLRUN" "${keep_going[@]}" -n "$np" -- env "${rank_env[@]}" "${sanitizer_env[@]}" "${envs[@]}" \
  "${prog[@]}" >"$work/out" 2>&1 || status=$?
cat "$work/out"
((status == 77)) && { echo "SKIPPED: the program says why, above"; exit 77; }
((status == 0)) || { echo "FAIL: the job exits $status"; exit 1; }
passes=$(grep -c ': PASS' "$work/out" || true)
((passes == np - killed)) || { echo "FAIL: $passes of $((np - killed)) ranks printed PASS"; exit 1; }
if ((report)); then
  python3 "$CHECK_REPORT" "$work/out" || { echo "FAIL: the reports differ between ranks"; exit 1; }
fi
for regex in "${expects[@]}"; do
  grep -Eq -- "$regex" "$work/out" || { echo "FAIL: the output does not match '$regex'"; exit 1; }
done
for regex in "${rejects[@]}"; do
  if grep -Eq -- "$regex" "$work/out"; then echo "FAIL: the output matches '$regex'"; exit 1; fi
done
echo "PASS"
