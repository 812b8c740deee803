// Merging a received sparse message into this rank's sorted set without
// first decoding it: a Packed message's varints are read by the merge
// itself (kernels::mergeSumGapCoded), and its values where they lie in the
// receive buffer, so the decoded positions and the copied values are never
// written (decodeSet's output was ~10 % of Hierarchical Centralization's
// CPU at d = 1 %). Other encodings are decoded first, as before.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/sparse_kernels.h"
#include "sparse/sparse_set.h"
#include "spccl.h"

namespace spccl::sparse {

// A message as exchangeMessages received it, and what decodeSet checks it
// against.
struct ReceivedMessage {
  const unsigned char* data = nullptr;
  size_t bytes = 0;
  uint8_t flags = 0;  // the frame's: the encoding
  uint64_t universe = 0;
  unsigned allowed = 0;  // the call's encodings
  int peer = -1;         // its sender, for errors
};

// *out = lower U higher (mergeSets, so the same bits), one operand being
// `mine` and the other the message (theirsLower: the message is the lower
// ranks' data). A malformed message fails with decodeSet's error.
// scratch: the decoded message where one is needed; *out must alias
// neither it nor mine.
spcclResult_t mergeReceivedSet(spcclDataType_t type, const kernels::SortedPairs& mine,
                               const ReceivedMessage& theirs, bool theirsLower, SparseSet* scratch,
                               SparseSet* out);

// The same union written into all `universe` elements of dense
// (kernels::mergeSumIntoDense); *nonZeros: how many of them are non-zero.
spcclResult_t mergeReceivedSetIntoDense(spcclDataType_t type, const kernels::SortedPairs& mine,
                                        const ReceivedMessage& theirs, bool theirsLower,
                                        SparseSet* scratch, void* dense, size_t* nonZeros);

}  // namespace spccl::sparse
