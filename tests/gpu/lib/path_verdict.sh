# shellcheck shell=bash disable=SC2034  # failed: the caller's
# Sourced by the device-path stage scripts (run_device_all_reduce.sh,
# run_device_sparse.sh, run_device_tokens.sh, run_device_codecs.sh). The
# caller sets `failed=0` first.
#   path_verdict NAME LOG STATUS PASSED REPORT NO_STAGING
#     prints "== NAME: PASS" or "== NAME: FAIL (why)" with the log's last
#     lines, and sets failed=1 unless PASS. STATUS: the run's exit status
#     (124: timed out). PASSED: a fixed string the log holds when the
#     results were right. REPORT: an extended pattern of the staging
#     report's count of calls on the device path, which the log must hold
#     ("": not required). NO_STAGING=1: where REPORT is required, no call
#     may have been staged whole either.
path_verdict() {
  local name=$1 log=$2 status=$3 passed=$4 report=$5 no_staging=$6 verdict=PASS
  if [[ $status -eq 124 ]]; then
    verdict="FAIL (timed out)"
  elif [[ $status -ne 0 ]]; then
    verdict="FAIL (exit $status)"
  elif ! grep -qF "$passed" "$log"; then
    verdict="FAIL (no passing result in the log: $passed)"
  elif [[ -n $report ]] && ! grep -qE "$report" "$log"; then
    verdict="FAIL (the device path was not taken)"
  elif [[ -n $report && $no_staging == 1 ]] && grep -q "staged whole" "$log"; then
    verdict="FAIL (some calls were staged whole)"
  fi
  [[ $verdict == PASS ]] || failed=1
  echo "== $name: $verdict"
  [[ $verdict == PASS ]] || tail -n 8 "$log" | sed 's/^/    /'
}
