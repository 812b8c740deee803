# Sourced by the testbed's ctest scripts: `require_testbed NAME` exits 77
# (ctest SKIP) with NAME's reason when no netlab can exist here (not root,
# no `ip netns`, no `tc`), and defines `fail MESSAGE` (NAME: FAIL, exit 1).
require_testbed() {
  local name=$1
  if [[ $(id -u) -ne 0 ]]; then echo "$name: SKIP: needs root"; exit 77; fi
  if ! command -v ip >/dev/null || ! ip netns list >/dev/null 2>&1; then
    echo "$name: SKIP: 'ip netns' unavailable"; exit 77
  fi
  if ! command -v tc >/dev/null; then echo "$name: SKIP: 'tc' unavailable"; exit 77; fi
  eval "fail() { echo \"$name: FAIL: \$*\"; exit 1; }"
}
