#include "compress/compressed_allreduce.h"

#include <chrono>
#include <cinttypes>

#include "base/check.h"
#include "base/log.h"
#include "compress/compressed_schedules.h"
#include "compress/configuration_agreement.h"

namespace spccl::compress {

CollSignature signatureOf(const CompressedCall& call) {
  return CollSignature{CollType::CompressedAllReduce, static_cast<uint8_t>(call.type),
                       static_cast<uint8_t>(call.op), -1, call.count};
}

spcclResult_t runCompressedAllReduce(CollContext& ctx, const CompressedCall& call) {
  const auto start = std::chrono::steady_clock::now();
  SPCCL_CHECK(agreeOnConfiguration(ctx, call));
  if (call.count == 0) return spcclSuccess;
  const uint64_t sentBefore = ctx.counters().bytesSent;
  SPCCL_CHECK(call.schedule == spcclCompressRing ? ringCompressedAllReduce(ctx, call)
                                                 : twoShotCompressedAllReduce(ctx, call));
  SPCCL_INFO(kLogCompress,
             "compressed all-reduce #%" PRIu64
             " count %zu %s %s on %d ranks: %s %d-bit, block %zu, "
             "%s%s; sent %" PRIu64 " bytes in %.1f us",
             ctx.seq(), call.count, spcclTypeName(call.type), spcclOpName(call.op), ctx.nranks(),
             call.spec.codec == kernels::Codec::Linear ? "linear" : "piecewise", call.spec.bits,
             call.spec.blockSize, call.schedule == spcclCompressRing ? "ring" : "two-shot",
             call.residual ? ", error feedback" : "", ctx.counters().bytesSent - sentBefore,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * 1e6);
  return spcclSuccess;
}

}  // namespace spccl::compress
