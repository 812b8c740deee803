// Scatter-gather migration, the baseline of SEMI-migration section IV-A: the
// root talks to every other rank itself, so it sends (receives) each
// helper's share over its own link, and no helper relays.
#include <cstring>
#include <vector>

#include "base/check.h"
#include "coll/schedule_support.h"
#include "migrate/migration_schedules.h"

namespace spccl::migrate {

namespace {

struct Blocks {
  size_t bytes;
  const char* at(const void* base, int index) const {
    return static_cast<const char*>(base) + static_cast<size_t>(index) * bytes;
  }
  char* at(void* base, int index) const {
    return static_cast<char*>(base) + static_cast<size_t>(index) * bytes;
  }
};

}  // namespace

spcclResult_t linearScatter(CollContext& ctx, const void* sendbuff, void* recvbuff,
                            size_t blockCount, spcclDataType_t datatype, int root) {
  const Blocks blocks{blockCount * spcclTypeSize(datatype)};
  const int n = ctx.nranks(), me = ctx.rank();
  ctx.noteChoice("linear", "the root sends every rank its block");
  if (blocks.bytes == 0) return spcclSuccess;
  if (me != root) {
    size_t received = 0;
    SPCCL_CHECK(ctx.recv(root, recvbuff, blocks.bytes, &received));
    return checkReceivedBytes(ctx, root, received, blocks.bytes, "scatter");
  }
  std::vector<PeerRequest> sends(static_cast<size_t>(n));
  for (int peer = 0; peer < n; ++peer)
    if (peer != root)
      SPCCL_CHECK(ctx.isend(peer, blocks.at(sendbuff, peer), blocks.bytes, &sends[peer]));
  if (blocks.at(sendbuff, root) != recvbuff)
    std::memmove(recvbuff, blocks.at(sendbuff, root), blocks.bytes);
  for (int peer = 0; peer < n; ++peer)
    if (peer != root) SPCCL_CHECK(ctx.wait(&sends[peer]));
  return spcclSuccess;
}

spcclResult_t linearGather(CollContext& ctx, const void* sendbuff, void* recvbuff,
                           size_t blockCount, spcclDataType_t datatype, int root) {
  const Blocks blocks{blockCount * spcclTypeSize(datatype)};
  const int n = ctx.nranks(), me = ctx.rank();
  ctx.noteChoice("linear", "every rank sends the root its block");
  if (blocks.bytes == 0) return spcclSuccess;
  if (me != root) return ctx.send(root, sendbuff, blocks.bytes);
  std::vector<PeerRequest> receives(static_cast<size_t>(n));
  for (int peer = 0; peer < n; ++peer)
    if (peer != root)
      SPCCL_CHECK(ctx.irecv(peer, blocks.at(recvbuff, peer), blocks.bytes, &receives[peer]));
  if (blocks.at(recvbuff, root) != sendbuff)
    std::memmove(blocks.at(recvbuff, root), sendbuff, blocks.bytes);
  for (int peer = 0; peer < n; ++peer) {
    if (peer == root) continue;
    size_t received = 0;
    SPCCL_CHECK(ctx.wait(&receives[peer], &received));
    SPCCL_CHECK(checkReceivedBytes(ctx, peer, received, blocks.bytes, "gather"));
  }
  return spcclSuccess;
}

}  // namespace spccl::migrate
