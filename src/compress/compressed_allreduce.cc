#include "compress/compressed_allreduce.h"

#include <chrono>
#include <cinttypes>

#include "compress/call_agreement.h"
#include "compress/compressed_schedules.h"
#include "core/check.h"
#include "core/log.h"

namespace spccl::compress {

spcclResult_t runCompressedAllReduce(spcclComm_t comm, const CompressedCall& call) {
  const auto start = std::chrono::steady_clock::now();
  Engine& engine = *comm->engine;
  const CollSignature signature{CollType::CompressedAllReduce, static_cast<uint8_t>(call.type),
                                static_cast<uint8_t>(call.op), -1, call.count};
  uint64_t seq = 0;
  SPCCL_CHECK(engine.beginCollective(signature, &seq));
  CollContext ctx(engine, signature, seq);
  SPCCL_CHECK(agreeOnConfiguration(ctx, call));
  if (call.count == 0) return spcclSuccess;
  const spcclCounters_t before = engine.counters();
  SPCCL_CHECK(call.schedule == spcclCompressRing ? ringCompressedAllReduce(ctx, call)
                                                 : twoShotCompressedAllReduce(ctx, call));
  SPCCL_INFO(kLogCompress,
             "compressed all-reduce #%" PRIu64 " count %zu %s %s on %d ranks: %s %d-bit, block %zu, "
             "%s%s; sent %" PRIu64 " bytes in %.1f us",
             seq, call.count, spcclTypeName(call.type), spcclOpName(call.op), comm->nranks,
             call.spec.codec == kernels::Codec::Linear ? "linear" : "piecewise", call.spec.bits,
             call.spec.blockSize, call.schedule == spcclCompressRing ? "ring" : "two-shot",
             call.residual ? ", error feedback" : "",
             engine.counters().bytesSent - before.bytesSent,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * 1e6);
  return spcclSuccess;
}

}  // namespace spccl::compress
