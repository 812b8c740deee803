// The sparse planner's CPU term (planner.h, SparseCostInput::pairSeconds):
// wall seconds per pair of merge work on the slowest rank. The schedules'
// CPU work is passes over (position, value) pairs (merges, encodes,
// decodes, sorts, scatters), priced in units of one pair into a merge of
// two sorted sets too big for the caches.
//
// The figure is deterministic, so that the planner's choice, hence the
// float rounding, is the same from run to run (a figure timed at the first
// call varied up to 2x between runs on a shared VM, and flipped choices):
//   pairSeconds = SPCCL_SPARSE_CPU_NS_PER_PAIR x core sharing,
// the first the speed of one idle core (default: timeMergePairs' median on
// the development VM; spccl_info times the machine it runs on), the second
// the ranks on the most crowded machine over the CPUs they may run on, at
// least 1. Ranks sharing cores slow the schedules alike: 8 ranks on 2
// cores timed 13.1 ns per pair each against 2.9 ns alone (4.5x; the ratio
// says 4).
#pragma once

#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl::sparse {

// Wall seconds per merged input pair on the calling thread (about 5 ms of
// merging on an idle core; allocates about 40 MB).
double timeMergePairs();

// The value every rank plans with, from one all-gather inside ctx's call:
// the largest knob any rank set, times the ranks on the most crowded
// machine (one boot id: network namespaces and containers share its
// cores) over the CPUs their affinity masks allow, at least 1; 0 when the
// knob is 0 (no CPU term, the paper's alpha-beta model alone). A knob that
// is not a number >= 0 fails every rank, naming the rank.
spcclResult_t agreePairSeconds(CollContext& ctx, double* pairSeconds);

}  // namespace spccl::sparse
