#include "coll/schedule_support.h"

#include "base/check.h"

namespace spccl {

spcclResult_t acquireScratch(CollContext& ctx, size_t bytes, int slot, char** out) {
  *out = bytePointer(ctx.scratch(bytes, slot));
  if (*out == nullptr && bytes > 0)
    return SPCCL_FAIL(spcclSystemError, "rank %d: cannot allocate %zu bytes of scratch (slot %d)",
                      ctx.rank(), bytes, slot);
  return spcclSuccess;
}

spcclResult_t checkReceivedBytes(const CollContext& ctx, int peer, size_t received, size_t expected,
                                 const char* schedule) {
  if (received == expected) return spcclSuccess;
  return SPCCL_FAIL(spcclInvalidUsage,
                    "rank %d: %s (seq %llu) received %zu bytes from rank %d where its %s schedule "
                    "expects %zu; do all ranks use the same SPCCL_ALGO and SPCCL_CHUNK_BYTES?",
                    ctx.rank(), ctx.signature().describe().c_str(),
                    static_cast<unsigned long long>(ctx.seq()), received, peer, schedule, expected);
}

}  // namespace spccl
