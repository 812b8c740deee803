# shellcheck shell=bash
# goodput_check NAME [netlab check ARGS...]: `netlab check --seconds 1`,
# up to three tries. A 1-second probe on a loaded 2-core machine now and
# then falls below the check's 85 % (seen in full ctest runs next to other
# tests: 80.7 %, 83.9 %); a link that is really unshaped or broken fails
# all three. Needs $NETLAB.
goodput_check() {
  local name=$1 try
  shift
  for try in 1 2 3; do
    "$NETLAB" check --seconds 1 "$@" && return 0
    echo "$name: check $* failed (try $try of 3)"
  done
  return 1
}
