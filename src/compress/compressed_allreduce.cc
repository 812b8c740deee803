#include "compress/compressed_allreduce.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>

#include "base/check.h"
#include "base/log.h"
#include "compress/codec_table.h"
#include "compress/configuration_agreement.h"
#include "compress/schedule_table.h"

namespace spccl::compress {

CollSignature signatureOf(const CompressedCall& call) {
  return CollSignature{CollType::CompressedAllReduce, static_cast<uint8_t>(call.type),
                       static_cast<uint8_t>(call.op), -1, call.count};
}

spcclResult_t runCompressedAllReduce(CollContext& ctx, const CompressedCall& call) {
  const auto start = std::chrono::steady_clock::now();
  SPCCL_CHECK(agreeOnConfiguration(ctx, call));
  if (call.count == 0) {
    ctx.noteChoice("none", "count 0: nothing to move");
    return spcclSuccess;
  }
  // The two-shot schedule uses an encoder and a decoder, the ring its
  // steps; the caller chose them for the schedule before the agreement
  // (core/device_compressed_call.h).
  if ((call.decoder != nullptr || call.encoder != nullptr) && call.schedule != spcclCompressTwoShot)
    return SPCCL_FAIL(spcclInternalError, "%s: device codecs need the two-shot schedule",
                      call.name);
  if (call.ring != nullptr && call.schedule != spcclCompressRing)
    return SPCCL_FAIL(spcclInternalError, "%s: ring steps need the ring schedule", call.name);
  const uint64_t sentBefore = ctx.counters().bytesSent;
  if (ctx.explainsChoice()) {
    char reason[128];
    std::snprintf(reason, sizeof(reason), "%s %d-bit, block %zu%s; agreed by every rank",
                  codecName(call.spec.codec), call.spec.bits, call.spec.blockSize,
                  call.residual ? ", error feedback" : "");
    ctx.noteChoice(compressScheduleName(call.schedule), reason);
  }
  SPCCL_CHECK(runCompressSchedule(ctx, call));
  SPCCL_INFO(kLogCompress,
             "compressed all-reduce #%" PRIu64
             " count %zu %s %s on %d ranks: %s %d-bit, block %zu, "
             "%s%s; sent %" PRIu64 " bytes in %.1f us",
             ctx.seq(), call.count, spcclTypeName(call.type), spcclOpName(call.op), ctx.nranks(),
             codecName(call.spec.codec), call.spec.bits, call.spec.blockSize,
             compressScheduleName(call.schedule), call.residual ? ", error feedback" : "",
             ctx.counters().bytesSent - sentBefore,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * 1e6);
  return spcclSuccess;
}

}  // namespace spccl::compress
