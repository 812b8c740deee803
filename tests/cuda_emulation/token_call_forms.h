// One token all-reduce as the emulated-driver tests (test_device_token*.cc)
// make it, in any of its four forms: top-k or mask, blocking on a stream or
// non-blocking then spcclWait; a sum over kTokens x kHidden.
#pragma once

#include <cstddef>

#include "device_token_inputs.h"
#include "spccl.h"

namespace spccl::testing {

// A call's small arrays (scores, mask, maskOut of kTokens) in memory of
// `kind` (-1: the host): rank or call `seed`'s scores, the mask keeping
// `maskFraction` of the rows.
struct TokenSmallArrays {
  TokenSmallArrays(int kind, int seed, double maskFraction)
      : scores(kTokens * sizeof(float), kind), mask(kTokens, kind), maskOut(kTokens, kind) {
    scores.set(scoresOf(seed).data());
    mask.set(maskOf(maskFraction).data());
  }
  Buffer scores, mask, maskOut;
};

struct TokenCallSettings {
  bool topk = true;          // spccl[I]tokenTopkAllReduce, else spccl[I]tokenMaskAllReduce
  bool nonBlocking = false;  // spcclItoken...AllReduce, then spcclWait (no stream)
  void* stream = nullptr;    // the blocking forms' stream
  size_t keep = 0;           // top-k only
  spcclDataType_t type = spcclFloat32;
  const spcclCompression* cfg = nullptr;
  spcclPrunePolicy_t policy = spcclPruneZero;
};

// The call on buff; a non-blocking call's result is spcclWait's once it posted.
inline spcclResult_t callTokenAllReduce(spcclComm_t comm, const TokenCallSettings& s, void* buff,
                                        const TokenSmallArrays& small) {
  const auto* scores = static_cast<const float*>(small.scores.data());
  const auto* mask = static_cast<const unsigned char*>(small.mask.data());
  auto* maskOut = static_cast<unsigned char*>(small.maskOut.data());
  if (s.nonBlocking) {
    spcclRequest_t request = nullptr;
    const spcclResult_t posted =
        s.topk ? spcclItokenTopkAllReduce(buff, scores, kTokens, kHidden, s.type, spcclSum, s.keep,
                                          s.cfg, s.policy, maskOut, comm, &request)
               : spcclItokenMaskAllReduce(buff, mask, kTokens, kHidden, s.type, spcclSum, s.cfg,
                                          s.policy, comm, &request);
    return posted == spcclSuccess ? spcclWait(request) : posted;
  }
  return s.topk ? spcclTokenTopkAllReduce(buff, scores, kTokens, kHidden, s.type, spcclSum, s.keep,
                                          s.cfg, s.policy, maskOut, comm, s.stream)
                : spcclTokenMaskAllReduce(buff, mask, kTokens, kHidden, s.type, spcclSum, s.cfg,
                                          s.policy, comm, s.stream);
}

}  // namespace spccl::testing
