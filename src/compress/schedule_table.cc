#include "compress/schedule_table.h"

#include <iterator>

#include "base/check.h"
#include "compress/compressed_schedules.h"

namespace spccl::compress {

namespace {

const CompressScheduleInfo kSchedules[] = {
    {spcclCompressTwoShot, "two-shot",
     "direct reduce-scatter of quantized chunks, full-precision sum, all-gather of its codes",
     twoShotCompressedAllReduce},
    {spcclCompressRing, "ring", "ring, the partial sum re-quantized at every hop",
     ringCompressedAllReduce},
};
static_assert(std::size(kSchedules) == spcclNumCompressSchedules);

const CompressScheduleInfo* find(spcclCompressSchedule_t schedule) {
  for (const CompressScheduleInfo& s : kSchedules)
    if (s.id == schedule) return &s;
  return nullptr;
}

}  // namespace

std::span<const CompressScheduleInfo> compressSchedules() { return kSchedules; }

const char* compressScheduleName(spcclCompressSchedule_t schedule) {
  const CompressScheduleInfo* info = find(schedule);
  return info != nullptr ? info->name : "unknown";
}

spcclResult_t runCompressSchedule(CollContext& ctx, const CompressedCall& call) {
  const CompressScheduleInfo* info = find(call.schedule);
  if (info == nullptr)
    return SPCCL_FAIL(spcclInternalError, "%s: no compressed schedule %d", call.name,
                      call.schedule);
  return info->run(ctx, call);
}

}  // namespace spccl::compress
