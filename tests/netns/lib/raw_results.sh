# Sourced by the bench_*.sh scripts: the options that keep their raw results
# for docs/perf (docs/perf/README.md, "Figures").
#
#   --raw DIR        write this run's raw results under DIR (created): the
#                    script's data file (JSON lines, CSV or the binary's own
#                    output) and NAME.meta.json (command, date, machine,
#                    commit, load; tests/netns/lib/raw_meta.py)
#   --raw-name NAME  the files' base name (default: chosen by the script
#                    from its arguments)
#   --wait-load L    first wait until the 1-minute load average is below L
#                    (polled every 30 s, at most BENCH_WAIT_MAX seconds,
#                    default 2400; then it runs anyway and the notes say so)
#
# raw_parse_options "$@" consumes these from the front of the arguments and
# leaves the rest in RAW_ARGS; raw_begin DEFAULT_NAME SUFFIX -- COMMAND...
# waits if asked, writes the notes and empties DIR/NAME.SUFFIX, the data
# file (RAW_FILE_BASE is then DIR/NAME, empty without --raw); raw_record
# SUFFIX LINE appends to it; raw_end adds the finish time and load.
RAW_DIR="" RAW_NAME="" RAW_WAIT_LOAD="" RAW_FILE_BASE="" RAW_META=""
RAW_ARGS=()
RAW_META_PY="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/raw_meta.py"

raw_parse_options() {
  while (($#)); do
    case $1 in
      --raw) RAW_DIR=${2:?--raw needs a directory}; shift 2 ;;
      --raw-name) RAW_NAME=${2:?--raw-name needs a name}; shift 2 ;;
      --wait-load) RAW_WAIT_LOAD=${2:?--wait-load needs a load}; shift 2 ;;
      *) break ;;
    esac
  done
  RAW_ARGS=("$@")
}

# raw_begin DEFAULT_NAME SUFFIX -- COMMAND...: COMMAND is the invocation
# recorded in the notes (the script and its arguments).
raw_begin() {
  local name=$1 suffix=$2
  shift 3
  local -a wait=()
  [[ -z $RAW_WAIT_LOAD ]] || wait=(--wait-load "$RAW_WAIT_LOAD" --wait-max "${BENCH_WAIT_MAX:-2400}")
  if [[ -n $RAW_DIR ]]; then
    mkdir -p "$RAW_DIR"
    RAW_FILE_BASE="$RAW_DIR/${RAW_NAME:-$name}"
    RAW_META="$RAW_FILE_BASE.meta.json"
    local env_notes=()
    local var
    for var in SPCCL_SPARSE_FLAGS SPCCL_SPARSE_PIECE_BYTES SPCCL_ALGO SPCCL_TRANSPORT ROUNDS PEERS BENCH_SPCCL_CMD; do
      [[ -z ${!var:-} ]] || env_notes+=(--note "environment: $var=${!var}")
    done
    /usr/bin/python3 "$RAW_META_PY" begin "$RAW_META" "${wait[@]}" "${env_notes[@]}" -- "$@"
    : >"$RAW_FILE_BASE.$suffix"
  elif ((${#wait[@]})); then
    local scratch
    scratch=$(mktemp /tmp/raw-meta.XXXXXX)
    /usr/bin/python3 "$RAW_META_PY" begin "$scratch" "${wait[@]}" -- "$@"
    rm -f "$scratch"
  fi
}

raw_end() {
  [[ -z $RAW_META ]] || /usr/bin/python3 "$RAW_META_PY" end "$RAW_META"
}

# raw_record FILE_SUFFIX LINE: appends LINE to RAW_FILE_BASE.FILE_SUFFIX
# (nothing without --raw).
raw_record() {
  [[ -z $RAW_FILE_BASE ]] || printf '%s\n' "$2" >>"$RAW_FILE_BASE.$1"
}
