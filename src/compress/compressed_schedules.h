// The two compressed all-reduce schedules (docs/algorithms.md 3, "Allreducing
// quantized data"). Both cut the tensor as chunk_layout.h says and leave
// every rank with the decoding of the same codes, so results are bitwise
// identical on all ranks.
#pragma once

#include "compress/compressed_allreduce.h"
#include "runtime/coll_context.h"

namespace spccl::compress {

// Direct reduce-scatter of quantized chunks (each input quantized once),
// full-precision sum by the chunk's owner, the sum quantized once,
// all-gather of its codes by direct exchange. Per rank on the wire:
// 2 (n-1) encoded chunks, i.e. about 2 (n-1)/n of the encoded tensor.
spcclResult_t twoShotCompressedAllReduce(CollContext& ctx, const CompressedCall& call);

// Ring reduce-scatter that re-quantizes the partial sum at every hop, then
// a ring all-gather of the owners' codes (forwarded unchanged). Same
// traffic as two-shot in 2 (n-1) steps of one chunk, but n quantizations
// per element instead of 2, so the error grows with n.
spcclResult_t ringCompressedAllReduce(CollContext& ctx, const CompressedCall& call);

}  // namespace spccl::compress
