#include "coll/small_allgather.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace spccl {

spcclResult_t allGatherSmall(CollContext& ctx, const void* mine, size_t bytes, void* all) {
  const int n = ctx.nranks(), r = ctx.rank();
  unsigned char* out = static_cast<unsigned char*>(all);
  unsigned char* own = out + static_cast<size_t>(r) * bytes;
  if (own != mine) std::memcpy(own, mine, bytes);
  const std::vector<int> peers = peersInTurn(r, n);
  std::vector<PeerRequest> receives(peers.size()), sends(peers.size());
  for (size_t i = 0; i < peers.size(); ++i)
    SPCCL_CHECK(
        ctx.irecv(peers[i], out + static_cast<size_t>(peers[i]) * bytes, bytes, &receives[i]));
  for (size_t i = 0; i < peers.size(); ++i) SPCCL_CHECK(ctx.isend(peers[i], own, bytes, &sends[i]));
  // Every rank sends exactly `bytes`; a shorter message would leave the
  // rest of its slot as it was, and the callers read fixed-size records.
  for (size_t i = 0; i < peers.size(); ++i) {
    size_t received = 0;
    SPCCL_CHECK(ctx.wait(&receives[i], &received));
    if (received != bytes)
      return SPCCL_FAIL(spcclRemoteError,
                        "rank %d: %s (call #%llu): %zu bytes from rank %d, every rank sends %zu", r,
                        ctx.signature().describe().c_str(),
                        static_cast<unsigned long long>(ctx.seq()), received, peers[i], bytes);
  }
  return ctx.waitAll(sends);
}

spcclResult_t internalAllGather(Engine& engine, const void* mine, size_t bytes, void* all) {
  const CollSignature signature{CollType::Internal, spcclUint8, spcclSum, -1, bytes};
  return runCollective(engine, signature,
                       [&](CollContext& ctx) { return allGatherSmall(ctx, mine, bytes, all); });
}

std::vector<int> peersInTurn(int rank, int nranks) {
  std::vector<int> peers;
  peers.reserve(static_cast<size_t>(std::max(nranks - 1, 0)));
  for (int step = 1; step < nranks; ++step) peers.push_back((rank + step) % nranks);
  return peers;
}

}  // namespace spccl
