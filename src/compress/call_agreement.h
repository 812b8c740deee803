// The first message round of every compressed all-reduce: each rank sends
// every other the codec, bits, block size and schedule it was called with,
// so that ranks asking for different encodings (whose messages would
// decode to garbage) fail together with one message, instead of hanging or
// corrupting. Count, datatype and op are already guarded by the frames'
// CompressedAllReduce signature. Same approach as the sparse call's
// agreement (src/sparse/call_agreement.h), through its allGatherSmall.
#pragma once

#include "compress/compressed_allreduce.h"
#include "runtime/coll_context.h"

namespace spccl::compress {

// spcclInvalidUsage on every rank when any two ranks' configurations differ.
spcclResult_t agreeOnConfiguration(CollContext& ctx, const CompressedCall& call);

}  // namespace spccl::compress
