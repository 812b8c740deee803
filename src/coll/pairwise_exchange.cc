// Pairwise exchange all-to-all (Thakur, Rabenseifner & Gropp 2005, §4.3):
// in step s = 1..n-1 rank r sends to r+s and receives from r-s, so every
// step is a permutation and no rank receives from two peers at once.
// AllToAllv exchanges a message with every peer even when its count is
// zero, so a rank whose counts disagree with its peer's gets an error
// instead of a message meant for the next call.
#include <algorithm>
#include <cstring>

#include "base/check.h"
#include "coll/partition.h"
#include "coll/schedule_support.h"
#include "coll/schedules.h"

namespace spccl {

namespace {

// Where the block to or from one peer sits, in elements.
class ExchangeLayout {
 public:
  explicit ExchangeLayout(const CollArgs& args) : args_(args) {}
  ElementRange sendBlock(int peer) const {
    return variable() ? ElementRange{args_.sdispls[peer], args_.sendcounts[peer]} : uniform(peer);
  }
  ElementRange recvBlock(int peer) const {
    return variable() ? ElementRange{args_.rdispls[peer], args_.recvcounts[peer]} : uniform(peer);
  }
  // Elements from the start of sendbuff past the last one sent.
  size_t sendExtent(int nranks) const {
    size_t extent = 0;
    for (int peer = 0; peer < nranks; ++peer) extent = std::max(extent, sendBlock(peer).end());
    return extent;
  }
  size_t recvExtent(int nranks) const {
    size_t extent = 0;
    for (int peer = 0; peer < nranks; ++peer) extent = std::max(extent, recvBlock(peer).end());
    return extent;
  }

 private:
  bool variable() const { return args_.type == CollType::AllToAllv; }
  ElementRange uniform(int peer) const {
    return {static_cast<size_t>(peer) * args_.count, args_.count};
  }
  const CollArgs& args_;
};

bool overlaps(const char* a, size_t aBytes, const char* b, size_t bBytes) {
  return a < b + bBytes && b < a + aBytes;
}

}  // namespace

spcclResult_t pairwiseAllToAll(CollContext& ctx, const CollArgs& args) {
  const int rank = ctx.rank(), n = ctx.nranks();
  const size_t es = elementSize(args);
  const ExchangeLayout layout(args);
  const char* send = bytePointer(args.sendbuff);
  char* recv = bytePointer(args.recvbuff);

  // In place (or overlapping): later steps would read blocks earlier steps
  // overwrote, so exchange from a copy.
  const size_t sendBytes = layout.sendExtent(n) * es;
  if (overlaps(send, sendBytes, recv, layout.recvExtent(n) * es)) {
    char* copy = nullptr;
    SPCCL_CHECK(acquireScratch(ctx, sendBytes, kScratchSendCopy, &copy));
    std::memcpy(copy, send, sendBytes);
    send = copy;
  }

  for (int step = 1; step < n; ++step) {
    const int to = (rank + step) % n;
    const int from = positiveMod(rank - step, n);
    const ElementRange out = layout.sendBlock(to);
    const ElementRange in = layout.recvBlock(from);
    size_t received = 0;
    SPCCL_CHECK(ctx.sendRecv(to, send + out.offset * es, out.count * es, from,
                             recv + in.offset * es, in.count * es, &received));
    SPCCL_CHECK(checkReceivedBytes(ctx, from, received, in.count * es, "pairwise"));
  }

  const ElementRange ownOut = layout.sendBlock(rank);
  const ElementRange ownIn = layout.recvBlock(rank);
  if (ownOut.count != ownIn.count)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "rank %d: AllToAllv sendcounts[%d] = %zu but recvcounts[%d] = %zu", rank,
                      rank, ownOut.count, rank, ownIn.count);
  // An empty own block may come with null buffers (a rank with no blocks).
  if (ownIn.count > 0)
    std::memmove(recv + ownIn.offset * es, send + ownOut.offset * es, ownIn.count * es);
  return spcclSuccess;
}

}  // namespace spccl
