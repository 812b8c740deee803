#include "compress/configuration_agreement.h"

#include <vector>

#include "base/check.h"
#include "coll/small_allgather.h"
#include "compress/codec_table.h"
#include "compress/schedule_table.h"

namespace spccl::compress {

ConfigurationHeader ConfigurationHeader::of(const CompressedCall& call) {
  ConfigurationHeader h;
  h.codec = static_cast<int32_t>(call.spec.codec);
  h.bits = call.spec.bits;
  h.blockSize = call.spec.blockSize;
  h.schedule = call.schedule;
  return h;
}

std::string ConfigurationHeader::describe() const {
  // A peer's header holds any int: one outside spcclCompressSchedule_t's
  // values (a negative one) must not be loaded through the enum type.
  const bool knownSchedule = schedule >= 0 && schedule < spcclNumCompressSchedules;
  return std::string("codec ") + codecName(static_cast<kernels::Codec>(codec)) + ", bits " +
         std::to_string(bits) + ", blockSize " + std::to_string(blockSize) + ", schedule " +
         (knownSchedule ? compressScheduleName(static_cast<spcclCompressSchedule_t>(schedule))
                        : "unknown (" + std::to_string(schedule) + ")");
}

spcclResult_t agreeOnConfiguration(CollContext& ctx, const CompressedCall& call) {
  const ConfigurationHeader mine = ConfigurationHeader::of(call);
  std::vector<ConfigurationHeader> all(static_cast<size_t>(ctx.nranks()));
  SPCCL_CHECK(allGatherSmall(ctx, &mine, sizeof(mine), all.data()));
  for (int r = 1; r < ctx.nranks(); ++r) {
    if (all[r] == all[0]) continue;
    return SPCCL_FAIL(spcclInvalidUsage,
                      "%s: ranks disagree on cfg: rank %d has (%s) but rank 0 has (%s); the call "
                      "fails on every rank",
                      call.name, r, all[r].describe().c_str(), all[0].describe().c_str());
  }
  return spcclSuccess;
}

}  // namespace spccl::compress
