#!/usr/bin/env bash
# Fails when clang-tidy (the checks of .clang-tidy) finds something in the
# project's own C++: src/, transports/, interpose/, kernels/cpu/, tools/,
# perf/ (not tests/, bindings/, examples/, nor CUDA .cu files).
#
#   check-tidy.sh [FILE...]   every translation unit, or only those given
#
# How the time stays bounded: a cache of clean results. A translation unit
# that passed is recorded under $SPCCL_TIDY_CACHE (default
# ~/.cache/spccl-tidy) by the sha256 of: clang-tidy's version, .clang-tidy,
# the options below, its compile command, and its preprocessed text with
# comments kept (c++ -E -C: the file and every header it includes, NOLINTs
# included). A unit whose key is there is skipped, so a run after a small
# change re-checks only the units that change reaches, at about 0.3 s of
# preprocessing for each of the others; a change of .clang-tidy or of the
# compiler re-checks everything. Units with findings are never recorded.
#
# Without a cache every unit is checked: 270 units in 484 s with -j2 on
# this project's idle 2-core VM (clang-tidy 14; 637 s before
# bugprone-reserved-identifier was turned off). .ci/run passes an empty
# SPCCL_TIDY_CACHE, as a fresh machine has no cache to use. With
# every unit cached a run takes about 40 CPU seconds. So no "changed files
# only" mode: every run checks everything that changed, headers included.
#
# The compile commands come from build-tidy/ (configured here; nothing is
# built: the project has no generated headers). Environment:
#   SPCCL_TIDY_CACHE  the cache folder (an empty value: no cache)
#   SPCCL_TIDY_JOBS   parallel clang-tidy processes (default 2)
#   SPCCL_TIDY_BUILD  the build folder (default build-tidy)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
command -v clang-tidy >/dev/null || { echo "check-tidy: clang-tidy is not installed" >&2; exit 1; }
build=${SPCCL_TIDY_BUILD:-build-tidy}
jobs=${SPCCL_TIDY_JOBS:-2}
cache=${SPCCL_TIDY_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/spccl-tidy}
start=$SECONDS

if ! configure=$(cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
                  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON 2>&1); then
  echo "$configure" >&2
  exit 1
fi

# Project headers only (clang-tidy never reports system headers). The
# compile commands are GCC's -Wall -Wextra -Werror: clang's own warnings,
# GCC-only options among them, are not errors here (GCC's build checks
# the warnings; this checks .clang-tidy's checks).
tidy_args() {
  printf '%s\n' -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option --extra-arg=-Wno-error \
    "--header-filter=^$root/(src|include|transports|interpose|kernels/cpu|tools|perf)/"
}
stamp=$( { clang-tidy --version; cat .clang-tidy; tidy_args; } | sha256sum | cut -c1-64)

# One record per unit: file, directory, the preprocessing command (the
# compile command with -E -C instead of -c and no -o).
units=$(mktemp /tmp/check-tidy.XXXXXX)
results=$(mktemp -d /tmp/check-tidy.XXXXXX)
trap 'rm -rf "$units" "$results"' EXIT
python3 - "$build/compile_commands.json" "$root" "$@" >"$units" <<'EOF'
import json, os, shlex, sys
database, root, only = sys.argv[1], sys.argv[2], {os.path.abspath(f) for f in sys.argv[3:]}
folders = ("src/", "transports/", "interpose/", "kernels/cpu/", "tools/", "perf/")
seen = set()
for entry in json.load(open(database)):
    path = entry["file"]
    relative = os.path.relpath(path, root)
    if path in seen or not relative.startswith(folders) or path.endswith(".cu"):
        continue
    if only and path not in only:
        continue
    seen.add(path)
    args = shlex.split(entry["command"]) if "command" in entry else entry["arguments"]
    preprocess = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "-o":
            skip = True
        elif arg == "-c":
            preprocess += ["-E", "-C"]
        else:
            preprocess.append(arg)
    sys.stdout.write("\0".join([path, entry["directory"], shlex.join(preprocess)]) + "\0")
EOF
total=$(tr -cd '\0' <"$units" | wc -c)
total=$((total / 3))
[[ -n $cache ]] && mkdir -p "$cache"

check_unit() {
  local file=$1 directory=$2 preprocess=$3 key="" name
  name=$(printf '%s' "${file#"$root"/}" | tr '/' '_')
  if [[ -n $cache ]]; then
    key=$( { echo "$stamp"; echo "$preprocess"; (cd "$directory" && eval "$preprocess" 2>&1); } |
           sha256sum | cut -c1-64)
    if [[ -e $cache/$key ]]; then
      touch "$cache/$key" "$results/$name.cached"
      return 0
    fi
  fi
  local args
  mapfile -t args < <(tidy_args)
  if clang-tidy "${args[@]}" "$file" >"$results/$name.log" 2>&1; then
    [[ -n $key ]] && touch "$cache/$key"
    mv "$results/$name.log" "$results/$name.ok"
    return 0
  fi
  grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' "$results/$name.log" >&2 || true
  return 1
}
export -f check_unit tidy_args
export root build stamp cache results
status=0
xargs -0 -n3 -P"$jobs" bash -c 'check_unit "$@"' _ <"$units" || status=$?
cached=$(find "$results" -name '*.cached' | wc -l)
checked=$(find "$results" -name '*.ok' | wc -l)
failed=$((total - cached - checked))
# Records older than 60 days belong to code long gone.
[[ -n $cache ]] && find "$cache" -type f -mtime +60 -delete 2>/dev/null
echo "check-tidy: $total units: $checked checked clean, $cached unchanged since a clean run" \
  "(cache ${cache:-off}), $failed with findings; $((SECONDS - start)) s ($(clang-tidy --version | grep -o 'version [0-9.]*'))"
if ((status != 0 || failed != 0)); then
  echo "check-tidy: fix the findings above, or silence a false one with // NOLINT(check): reason" >&2
  exit 1
fi
