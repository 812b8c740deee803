// Small pieces every dense schedule uses: element size and reduce kernel
// of a call, the scratch slots they own, and the check that a message had
// the size the schedule expects.
#pragma once

#include <cstddef>

#include "coll/collective.h"
#include "kernels/kernels.h"
#include "runtime/coll_context.h"

namespace spccl {

// CollContext::scratch slots used by the dense schedules. A schedule may
// use all of them; they are never live across calls.
enum DenseScratchSlot : int {
  kScratchLanding = 0,   // where incoming messages land before they are reduced
  kScratchStaging = 1,   // reduced data that is not the caller's output
  kScratchSendCopy = 2,  // a copy of the input when it overlaps the output
  // Around a schedule, never inside one (coll/dense_pieces.h): one piece
  // of an all-gather's output or a reduce-scatter's input, gathered.
  kScratchPieceBlocks = 3,
};

inline size_t elementSize(const CollArgs& args) { return spcclTypeSize(args.datatype); }

// Avg reduces as Sum; runDenseCollective divides afterwards.
inline kernels::ReduceFn reducerFor(const CollContext& ctx, const CollArgs& args) {
  spcclRedOp_t op = args.op == spcclAvg ? spcclSum : args.op;
  return ctx.kernels().reduce[args.datatype][op];
}

inline char* bytePointer(void* pointer) { return static_cast<char*>(pointer); }
inline const char* bytePointer(const void* pointer) { return static_cast<const char*>(pointer); }

// ctx.scratch with the failure turned into an error naming the rank.
spcclResult_t acquireScratch(CollContext& ctx, size_t bytes, int slot, char** out);

// A message of another size than the schedule expects means the ranks run
// different schedules (e.g. different SPCCL_ALGO or SPCCL_CHUNK_BYTES).
spcclResult_t checkReceivedBytes(const CollContext& ctx, int peer, size_t received, size_t expected,
                                 const char* schedule);

}  // namespace spccl
