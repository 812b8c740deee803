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
  std::vector<PeerRequest> requests;
  requests.reserve(2 * static_cast<size_t>(n));
  for (int peer : peersInTurn(r, n)) {
    requests.emplace_back();
    SPCCL_CHECK(ctx.irecv(peer, out + static_cast<size_t>(peer) * bytes, bytes, &requests.back()));
  }
  for (int peer : peersInTurn(r, n)) {
    requests.emplace_back();
    SPCCL_CHECK(ctx.isend(peer, own, bytes, &requests.back()));
  }
  return ctx.waitAll(requests);
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
