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
  // AllToAllv's per-peer counts are the caller's arguments, in no
  // signature: ranks that passed send and receive counts that do not match
  // misused the call.
  if (ctx.signature().type == CollType::AllToAllv)
    return SPCCL_FAIL(
        spcclInvalidUsage,
        "rank %d: %s (seq %llu) received %zu bytes from rank %d where its %s schedule "
        "expects %zu: rank %d's send count for this rank differs from this rank's "
        "receive count for it",
        ctx.rank(), ctx.signature().describe().c_str(), static_cast<unsigned long long>(ctx.seq()),
        received, peer, schedule, expected, peer);
  // SPCCL_ALGO and SPCCL_CHUNK_BYTES are job settings, agreed at creation
  // (core/job_settings.h), so the peer broke the protocol: spcclRemoteError,
  // which breaks the communicator and tells the other ranks (runCollective).
  return SPCCL_FAIL(spcclRemoteError,
                    "rank %d: %s (seq %llu) received %zu bytes from rank %d where its %s schedule "
                    "expects %zu (the ranks agreed on SPCCL_ALGO and SPCCL_CHUNK_BYTES)",
                    ctx.rank(), ctx.signature().describe().c_str(),
                    static_cast<unsigned long long>(ctx.seq()), received, peer, schedule, expected);
}

}  // namespace spccl
