#include "compress/call_agreement.h"

#include <vector>

#include "core/check.h"
#include "sparse/sparse_messages.h"

namespace spccl::compress {
namespace {

struct ConfigurationHeader {
  int32_t codec = 0;
  int32_t bits = 0;
  uint64_t blockSize = 0;
  int32_t schedule = 0;
  int32_t reserved = 0;
  bool operator==(const ConfigurationHeader&) const = default;
};

const char* codecName(int32_t codec) {
  return codec == static_cast<int32_t>(kernels::Codec::Linear) ? "linear" : "piecewise";
}
const char* scheduleName(int32_t schedule) {
  return schedule == spcclCompressRing ? "ring" : "two-shot";
}

}  // namespace

spcclResult_t agreeOnConfiguration(CollContext& ctx, const CompressedCall& call) {
  ConfigurationHeader mine;
  mine.codec = static_cast<int32_t>(call.spec.codec);
  mine.bits = call.spec.bits;
  mine.blockSize = call.spec.blockSize;
  mine.schedule = call.schedule;
  std::vector<ConfigurationHeader> all(static_cast<size_t>(ctx.nranks()));
  SPCCL_CHECK(sparse::allGatherSmall(ctx, &mine, sizeof(mine), all.data()));
  for (int r = 1; r < ctx.nranks(); ++r) {
    const ConfigurationHeader& a = all[0];
    const ConfigurationHeader& b = all[r];
    if (a == b) continue;
    return SPCCL_FAIL(spcclInvalidUsage,
                      "%s: ranks disagree on cfg: rank %d has (codec %s, bits %d, blockSize %llu, "
                      "schedule %s) but rank 0 has (codec %s, bits %d, blockSize %llu, schedule "
                      "%s); the call fails on every rank",
                      call.name, r, codecName(b.codec), b.bits,
                      static_cast<unsigned long long>(b.blockSize), scheduleName(b.schedule),
                      codecName(a.codec), a.bits, static_cast<unsigned long long>(a.blockSize),
                      scheduleName(a.schedule));
  }
  return spcclSuccess;
}

}  // namespace spccl::compress
