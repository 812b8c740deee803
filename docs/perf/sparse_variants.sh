#!/usr/bin/env bash
# The variants beyond Zen against Zen's own scheme, on the same inputs
# (docs/perf/sparse.md, "What the variants beyond Zen buy"): loopback
# (spcclrun, one host), sparse_all_reduce_perf with one seed for every run.
#
#   partition: BP with -P zen-hash (Zen's h0 + hierarchical hashing),
#              permutation (keyed Feistel, contiguous ranges) and two-pass
#              (h0 + exact count / prefix sum / scatter); encoding auto
#   encoding:  HC and BP with -E coo, bitmap (Zen's formats, one for every
#              message), packed and auto (per message the smallest);
#              partitioner permutation (the default)
#
# for every n, workload (uniform: half of each rank's non-zeros from a
# shared pool, -O 0.5; zipf: the same with Zipf rows, -Z 1.1 -H 64) and
# density. Each run is one JSON line: the variant, the 1-minute load at its
# start, and the binary's -J result (bytes max and mean over ranks, push /
# pull imbalance, cpu_s_per_iter, median time, wrong elements).
#
#   docs/perf/sparse_variants.sh [--raw DIR [--raw-name NAME] [--wait-load L]]
#       [--build DIR] [--size BYTES] [--ranks "8 4"] [--densities "0.001 0.01 0.05"]
#       [--workloads "uniform zipf"] [--iters N] [--testbed RATE]
#
# --testbed RATE: one rank per emulated host on tests/netns/netlab at RATE
# (needs root; "dilated" = 1 Gbit/s x cores / n, tests/netns/lib/dilation.sh;
# NETLAB_PREFIX and NETLAB_SUBNET as netlab takes them), brought up per n
# and taken down at the end. Without --raw the lines go to stdout. Exit 1 if any variant's result
# differs from the dense all-reduce (or between ranks), ran another
# algorithm than asked, or failed; the ctest sparse_variants_tiny runs it
# at a tiny size so that it cannot rot.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/netns/lib/raw_results.sh
. "$repo/tests/netns/lib/raw_results.sh"
raw_parse_options "$@"
set -- "${RAW_ARGS[@]}"

build=$repo/build size=67108864 ranks="8 4" densities="0.001 0.01 0.05" workloads="uniform zipf"
iters=5 testbed=""
while (($#)); do
  case $1 in
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --size) size=${2:?--size needs bytes}; shift 2 ;;
    --ranks) ranks=${2:?--ranks needs a list}; shift 2 ;;
    --densities) densities=${2:?--densities needs a list}; shift 2 ;;
    --workloads) workloads=${2:?--workloads needs a list}; shift 2 ;;
    --iters) iters=${2:?--iters needs a count}; shift 2 ;;
    --testbed) testbed=${2:?--testbed needs a rate}; shift 2 ;;
    *) echo "sparse_variants: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
perf=$build/perf/sparse_all_reduce_perf launcher=$build/bin/spcclrun
for binary in "$perf" "$launcher"; do
  [[ -x $binary ]] || { echo "sparse_variants: $binary is missing (build it, or pass --build DIR)" >&2; exit 2; }
done

workload_flags() {
  case $1 in
    uniform) echo "-O 0.5" ;;
    zipf) echo "-O 0.5 -Z 1.1 -H 64" ;;
    *) echo "sparse_variants: unknown workload '$1' (uniform or zipf)" >&2; return 2 ;;
  esac
}

# The variants of one (n, workload, density), as "TABLE ALGORITHM ENCODING
# PARTITIONER"; BP with auto encoding and the permutation serves both tables.
variants() {
  local p e
  for p in zen-hash permutation two-pass; do echo "partition bp auto $p"; done
  for e in coo bitmap packed; do echo "encoding bp $e permutation"; done
  for e in coo bitmap packed auto; do echo "encoding hc $e permutation"; done
}

netlab=$repo/tests/netns/netlab
# shellcheck source=tests/netns/lib/dilation.sh
. "$repo/tests/netns/lib/dilation.sh"
launch() {  # N CMD...: N ranks of CMD, on loopback or on the testbed
  local n=$1
  shift
  if [[ -n $testbed ]]; then
    "$netlab" run "$n" --timeout 600 -- "$@"
  else
    timeout 600 "$launcher" -n "$n" "$@"
  fi
}

raw_begin "variants-$size" jsonl -- "$0" "${RAW_ARGS[@]}"
scratch=$(mktemp -d /tmp/sparse-variants.XXXXXX)
trap 'rm -rf "$scratch"; [[ -z $testbed ]] || "$netlab" down >/dev/null 2>&1 || true' EXIT
failures=0
for n in $ranks; do
  if [[ -n $testbed ]]; then
    "$netlab" down >/dev/null 2>&1 || true
    "$netlab" up "$n" "$(resolve_rate "$testbed" "$n")" >&2
  fi
  for workload in $workloads; do for density in $densities; do
  flags=$(workload_flags "$workload")
  while read -r _ algorithm encoding partitioner; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    rc=0
    rm -f "$scratch/run.json"  # a failed run must not be read as the previous one's result
    # shellcheck disable=SC2086  # flags are words
    launch "$n" "$perf" -b "$size" -e "$size" -n "$iters" -w 1 -c 1 -d float \
      -D "$density" $flags -a "$algorithm" -E "$encoding" -P "$partitioner" --seed 1 \
      -J "$scratch/run.json" >"$scratch/run.out" 2>&1 || rc=$?
    line=$(/usr/bin/python3 - "$scratch/run.json" "$rc" "$n" "$workload" "$density" "$algorithm" \
      "$encoding" "$partitioner" "$load" "${testbed:-loopback}" <<'PY'
import json, sys
path, rc, n, workload, density, algorithm, encoding, partitioner, load, links = sys.argv[1:]
record = {"n": int(n), "workload": workload, "density": float(density), "algorithm": algorithm,
          "encoding": encoding, "partitioner": partitioner, "load_1min": float(load), "rc": int(rc),
          "links": links}
problems = [] if rc == "0" else [f"exit status {rc}"]
try:
    with open(path) as f:
        result = json.load(f)["results"][0]
    record["result"] = result
    if result["sparse"]["wrong"] != 0:
        problems.append(f"{result['sparse']['wrong']} wrong elements")
    if result["divergent_ranks"] != 0:
        problems.append(f"{result['divergent_ranks']} ranks differ from rank 0")
    if result["algorithm"] != algorithm:
        problems.append(f"ran {result['algorithm']}")
except (OSError, ValueError, KeyError, IndexError) as e:
    problems.append(f"no result ({e})")
record["problems"] = problems
print(json.dumps(record, sort_keys=True))
PY
    )
    [[ -n $RAW_FILE_BASE ]] || printf '%s\n' "$line"
    if [[ $line != *'"problems": []'* ]]; then
      failures=$((failures + 1))
      echo "sparse_variants: FAILED n=$n $workload d=$density -a $algorithm -E $encoding -P $partitioner:" \
        "$(/usr/bin/python3 -c 'import json,sys; print("; ".join(json.loads(sys.argv[1])["problems"]))' "$line")" >&2
      tail -n 20 "$scratch/run.out" >&2
    fi
    raw_record jsonl "$line"
  done < <(variants)
done; done; done
raw_end
if ((failures)); then
  echo "sparse_variants: $failures variant(s) failed" >&2
  exit 1
fi
echo "sparse_variants: every variant agreed with the dense all-reduce" >&2
