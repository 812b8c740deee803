// The first message round of a token top-k or mask all-reduce: every rank
// sends the others the shape, keep (or, for the mask call, the number of
// kept tokens and a hash of the mask) and the compression configuration it
// was called with. Ranks that disagree would pack different rows (or
// decode garbage); they all fail with spcclInvalidUsage after this one
// round, naming what differs. The frame signature already guards
// tokens*hidden, datatype and op.
#pragma once

#include "compress/token_allreduce.h"
#include "runtime/coll_context.h"

namespace spccl::compress {

// mask: the normalised mask of a mask call (0/1 bytes), ignored for top-k.
spcclResult_t agreeOnTokenCall(CollContext& ctx, const TokenCall& call, const unsigned char* mask);

}  // namespace spccl::compress
