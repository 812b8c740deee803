// The first message round of every compressed all-reduce: each rank sends
// every other the codec, bits, block size and schedule it was called with,
// so that ranks asking for different encodings (whose messages would
// decode to garbage) fail together with one message, instead of hanging or
// corrupting. Count, datatype and op are already guarded by the frames'
// CompressedAllReduce signature. Same approach as the sparse call's
// agreement (src/sparse/call_agreement.h), through coll/small_allgather.h.
// The token calls (token_agreement.h) send this header inside theirs.
#pragma once

#include <cstdint>
#include <string>

#include "compress/compressed_allreduce.h"
#include "runtime/coll_context.h"

namespace spccl::compress {

// What must be equal on all ranks for their codes to decode; fixed size,
// sent as bytes (same-architecture peers, as the frame header).
struct ConfigurationHeader {
  int32_t codec = 0;
  int32_t bits = 0;
  uint64_t blockSize = 0;
  int32_t schedule = 0;
  int32_t reserved = 0;
  bool operator==(const ConfigurationHeader&) const = default;

  static ConfigurationHeader of(const CompressedCall& call);
  // "codec piecewise, bits 4, blockSize 256, schedule two-shot"
  std::string describe() const;
};

// spcclInvalidUsage on every rank when any two ranks' configurations differ.
spcclResult_t agreeOnConfiguration(CollContext& ctx, const CompressedCall& call);

}  // namespace spccl::compress
