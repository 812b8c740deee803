#!/usr/bin/env bash
# Many communicator lifetimes in one job, and nothing grows: chaos_rank
# --cycles-init (creation, a verified all-reduce, destruction) or
# --cycles-shrink (a rank leaves, the others revoke, agree, shrink and run
# a verified all-reduce), then every rank's fds, threads and /dev/shm
# mappings after the warm-up must equal those at the end, and its RSS may
# grow by at most 1 MiB (a leak of 2 KiB per cycle would pass it).
#
# usage: chaos_cycles.sh SPCCLRUN CHAOS_RANK TRANSPORT N init|shrink CYCLES
set -euo pipefail
spcclrun=$1 chaos_rank=$2 transport=$3 n=$4 mode=$5 cycles=$6
name="chaos_cycles $mode $transport n=$n"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "$name: FAIL: $*"; grep -E "^chaos:|spcclrun:" "$out" | tail -20; exit 1; }
export SPCCL_TRANSPORT=$transport SPCCL_TIMEOUT_MS=${SPCCL_TIMEOUT_MS:-5000}
[[ $transport != ucx ]] || export UCX_TLS=${UCX_TLS:-tcp}
shm_before=$(find /dev/shm -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
start=$(date +%s%N)
status=0
"$spcclrun" --timeout 280 -n "$n" "$chaos_rank" "--cycles-$mode" "$cycles" --count 65536 >"$out" 2>&1 || status=$?
seconds=$(( ($(date +%s%N) - start) / 1000000 ))
((status == 0)) || fail "spcclrun exited $status"
[[ $(grep -c "^chaos: done mode=$mode cycles=$cycles" "$out") == "$n" ]] || fail "not every rank finished its $cycles cycles"
! grep -q "^chaos: WRONG" "$out" || fail "a wrong result"
# Pair each rank's line after the warm-up with its line at the end.
verdict=$(awk -v mode="$mode" '
  $1 == "chaos:" && $2 == "stat" && $3 == "mode=" mode {
    for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    key = v["rank"]
    if (v["when"] == "first") { f[key] = v["fds"] " " v["threads"] " " v["shm_maps"]; fr[key] = v["rss_kb"] }
    else { e[key] = v["fds"] " " v["threads"] " " v["shm_maps"]; er[key] = v["rss_kb"] }
  }
  END {
    bad = ""; grow = 0; n = 0
    for (k in f) {
      n++
      if (!(k in e)) { bad = bad " rank " k ": no line at the end;"; continue }
      if (f[k] != e[k]) bad = bad " rank " k ": fds threads shm_maps " f[k] " -> " e[k] ";"
      if (er[k] - fr[k] > grow) grow = er[k] - fr[k]
      summary = summary " r" k ": " f[k] " -> " e[k] ", rss " fr[k] " -> " er[k] ";"
    }
    if (grow > 1024) bad = bad " RSS grew by " grow " KiB;"
    printf "%d|%s|%s\n", n, bad, summary
  }' "$out")
IFS='|' read -r ranks bad summary <<<"$verdict"
[[ $ranks == "$n" ]] || fail "stat lines of $ranks ranks, expected $n"
[[ -z $bad ]] || fail "grew:$bad"
shm_after=$(find /dev/shm -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
echo "$name: PASS: $cycles cycles in ${seconds} ms; (fds threads shm_maps) after the warm-up -> at the end:$summary" \
  "/dev/shm entries (machine) $shm_before -> $shm_after; $(grep "^chaos: done" "$out" | head -1 | sed 's/^chaos: done //')"
