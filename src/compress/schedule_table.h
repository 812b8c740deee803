// Every spcclCompressSchedule_t, registered once: its name (logs, the
// configuration agreement's messages, the perf binaries' -S flag,
// spcclCompressScheduleName) and the schedule that runs it
// (compressed_schedules.h).
#pragma once

#include <span>

#include "compress/compressed_allreduce.h"
#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl::compress {

struct CompressScheduleInfo {
  spcclCompressSchedule_t id;
  const char* name;
  const char* description;
  spcclResult_t (*run)(CollContext& ctx, const CompressedCall& call);
};

std::span<const CompressScheduleInfo> compressSchedules();
// "two-shot", "ring"; "unknown" for a value without a row.
const char* compressScheduleName(spcclCompressSchedule_t schedule);
// call.schedule's schedule on ctx (the API layer checked the value).
spcclResult_t runCompressSchedule(CollContext& ctx, const CompressedCall& call);

}  // namespace spccl::compress
