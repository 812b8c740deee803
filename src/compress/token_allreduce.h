// One token top-k or token mask all-reduce (AccTFM section 4.3.1) after
// the API layer validated it: agree on the call (token_agreement.h),
// choose the rows (scores summed over ranks, token_selection.h) or take
// the caller's mask, all-reduce only the kept rows packed together
// (token_rows.h) with a compressed schedule or the dense all-reduce, and
// apply the prune policy to the others. All inside one collective call.
#pragma once

#include <cstddef>
#include <span>

#include "compress/compressed_allreduce.h"
#include "spccl.h"

namespace spccl::compress {

// Where buff is memory the CPU cannot reach (a device tensor,
// core/device_token_call.h): what moves the kept rows, called inside the
// collective once every rank knows them. The selection, the agreement and
// the packed rows' all-reduce are the same code as for host memory.
class TokenRowsMover {
 public:
  virtual ~TokenRowsMover() = default;
  // *packed = host memory holding buff's rows `rows` packed (rows.size()
  // x hidden elements), all-reduced in place by the caller; with a
  // residual, *packedResidual = host memory holding the residual's rows
  // `rows` packed (rows.size() x hidden floats), which the codec's error
  // feedback updates in place; nullptr without one.
  virtual spcclResult_t pack(std::span<const size_t> rows, void** packed,
                             float** packedResidual) = 0;
  // buff's rows `rows` = the packed rows (as left by the all-reduce), the
  // residual's = the packed residual; buff's others (mask byte 0) by the
  // call's prune policy. The residual's others are left as they are.
  virtual spcclResult_t unpack(std::span<const size_t> rows, const unsigned char* mask) = 0;
};

struct TokenCall {
  const char* name = "spcclTokenTopkAllReduce";
  void* buff = nullptr;  // [tokens x hidden], reduced in place
  size_t tokens = 0;
  size_t hidden = 0;
  spcclDataType_t type = spcclFloat32;
  spcclRedOp_t op = spcclSum;
  spcclPrunePolicy_t prunePolicy = spcclPruneZero;
  // Compressed (cfg given): spec, schedule and residual (tensor layout,
  // tokens*hidden floats, or nullptr). Otherwise the rows go dense.
  bool compressed = false;
  CompressedCall compression;
  // Top-k: scores and keep (maskOut may be nullptr). Mask call: mask.
  const float* scores = nullptr;
  size_t keep = 0;
  unsigned char* maskOut = nullptr;
  const unsigned char* mask = nullptr;
  // Not nullptr: buff is not reached by the CPU, the mover moves its rows
  // and the residual's.
  TokenRowsMover* mover = nullptr;

  bool isTopk() const { return mask == nullptr; }
  size_t count() const { return tokens * hidden; }
};

// The frames' signature: a compressed all-reduce of tokens*hidden elements.
CollSignature signatureOf(const TokenCall& call);

// Runs on a context begun with signatureOf(call) (core/comm.h,
// runCollectiveBlocking or runCollectiveAsync).
spcclResult_t runTokenAllReduce(CollContext& ctx, const TokenCall& call);

}  // namespace spccl::compress
