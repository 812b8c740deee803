# Sourced by the bench scripts: the time-dilated link rate
# (../shared/design/BENCHMARKS.md, "Time dilation"; Gupta et al., NSDI 2006).
# With n emulated hosts on this machine's cores, each host has cores/n of a
# core; slowing every link to 1 Gbit/s x cores / n gives each host the CPU
# per bit of one core on a 1 Gbit/s link.
#   resolve_rate RATE N   prints RATE unchanged, or for RATE "dilated" the
#                         dilated rate in mbit (n = 8 on 2 cores: 250mbit).
#   SPCCL_DILATION_CORES  the core count to dilate for (default: nproc).
resolve_rate() {
  local rate=$1 n=$2
  if [[ $rate != dilated ]]; then
    printf '%s\n' "$rate"
    return
  fi
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "resolve_rate: rank count '$n' is not a positive integer" >&2; return 2; }
  local cores=${SPCCL_DILATION_CORES:-$(nproc)}
  [[ $cores =~ ^[1-9][0-9]*$ ]] || { echo "resolve_rate: SPCCL_DILATION_CORES '$cores' is not a positive integer" >&2; return 2; }
  # Never faster than 1 Gbit/s: with more cores than ranks there is nothing to dilate.
  local mbit=$((1000 * cores / n))
  ((mbit > 1000)) && mbit=1000
  echo "resolve_rate: dilated: 1 Gbit/s x $cores cores / $n ranks = ${mbit}mbit" >&2
  printf '%smbit\n' "$mbit"
}
