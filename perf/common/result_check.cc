#include "common/result_check.h"

#include <cmath>

namespace spccl::perf {

namespace {

// Average is the one op whose result a correct implementation may round:
// it may divide before summing (NCCL premultiplies by 1/n), which rounds
// 1/n, each product and each partial sum: about 2n roundings of positive
// terms at most. Everything else is exact by construction.
double allowedError(const ElementCodec& codec, const CheckContext& context, double want) {
  if (context.data.op() != spcclAvg) return 0.0;
  return 2.0 * context.data.nranks() * codec.epsilon * std::fabs(want);
}

}  // namespace

void prepareCheckBuffers(const ElementCodec& codec, const CheckContext& context, void* sendBuffer,
                         void* recvBuffer) {
  for (size_t i = 0; i < context.layout.recvCount; ++i) codec.store(recvBuffer, i, 0.0);
  for (size_t i = 0; i < context.layout.sendCount; ++i) {
    codec.store(sendBuffer, i, context.data.input(context.rank, i));
  }
}

int64_t countWrongElements(const CollectiveSpec& spec, const ElementCodec& codec,
                           const CheckContext& context, const void* recvBuffer) {
  if (spec.definesResultOn != nullptr && !spec.definesResultOn(context.rank, context.root)) {
    return 0;
  }
  int64_t wrong = 0;
  for (size_t i = 0; i < context.layout.recvCount; ++i) {
    const double want = representable(codec, spec.expected(context, i));
    const double got = codec.load(recvBuffer, i);
    // Negated so that a NaN counts as wrong.
    if (!(std::fabs(got - want) <= allowedError(codec, context, want))) ++wrong;
  }
  return wrong;
}

}  // namespace spccl::perf
