// Binomial trees over relative ranks (partition.h): ceil(log2 n) rounds of
// whole-buffer messages, the latency-optimal choice for small payloads.
// Reduce walks the broadcast tree backwards; a node folds its children in
// from the nearest (smallest subtree) outwards, always as
// reduce(acc, lower relative ranks' data, higher relative ranks' data), so
// the bracketing is fixed for a given root and n.
#include <array>
#include <cstring>

#include "base/check.h"
#include "coll/partition.h"
#include "coll/schedule_support.h"
#include "coll/schedules.h"

namespace spccl {

namespace {

// A binomial node has at most one child per bit of a 32-bit rank.
constexpr int kMaxChildren = 32;

struct TreeNode {
  int relative;
  int parent;  // absolute rank, -1 at the root
  int children;
};

TreeNode treeNode(const CollContext& ctx, int root) {
  const int n = ctx.nranks();
  const int relative = relativeRank(ctx.rank(), root, n);
  const int parent = binomialParent(relative);
  return {relative, parent < 0 ? -1 : absoluteRank(parent, root, n),
          binomialChildCount(relative, n)};
}

int childRank(const TreeNode& node, int index, int root, int nranks) {
  return absoluteRank(binomialChild(node.relative, index), root, nranks);
}

}  // namespace

spcclResult_t binomialBroadcast(CollContext& ctx, const CollArgs& args) {
  const int n = ctx.nranks();
  const TreeNode node = treeNode(ctx, args.root);
  const size_t bytes = args.count * elementSize(args);
  if (node.parent >= 0) {
    size_t received = 0;
    SPCCL_CHECK(ctx.recv(node.parent, args.recvbuff, bytes, &received));
    SPCCL_CHECK(checkReceivedBytes(ctx, node.parent, received, bytes, "binomial"));
  } else if (args.sendbuff != args.recvbuff) {
    std::memmove(args.recvbuff, args.sendbuff, bytes);
  }
  // Farthest child first: its subtree is the largest and has the most
  // rounds left.
  std::array<PeerRequest, kMaxChildren> sends;
  for (int i = node.children - 1, posted = 0; i >= 0; --i, ++posted)
    SPCCL_CHECK(ctx.isend(childRank(node, i, args.root, n), args.recvbuff, bytes, &sends[posted]));
  return ctx.waitAll(std::span<PeerRequest>(sends.data(), static_cast<size_t>(node.children)));
}

spcclResult_t binomialReduce(CollContext& ctx, const CollArgs& args) {
  const int n = ctx.nranks();
  const TreeNode node = treeNode(ctx, args.root);
  const size_t bytes = args.count * elementSize(args);
  if (node.children == 0) return ctx.send(node.parent, args.sendbuff, bytes);

  char* accumulator = bytePointer(args.recvbuff);
  if (node.parent >= 0) SPCCL_CHECK(acquireScratch(ctx, bytes, kScratchStaging, &accumulator));
  char* landing = nullptr;
  SPCCL_CHECK(acquireScratch(ctx, 2 * bytes, kScratchLanding, &landing));
  const kernels::ReduceFn reduce = reducerFor(ctx, args);

  // Nearest child first (it finishes first); the next child's message may
  // land in the other half while this one is reduced.
  std::array<PeerRequest, 2> receives;
  SPCCL_CHECK(ctx.irecv(childRank(node, 0, args.root, n), landing, bytes, &receives[0]));
  for (int i = 0; i < node.children; ++i) {
    if (i + 1 < node.children)
      SPCCL_CHECK(ctx.irecv(childRank(node, i + 1, args.root, n), landing + ((i + 1) % 2) * bytes,
                            bytes, &receives[(i + 1) % 2]));
    size_t received = 0;
    const int child = childRank(node, i, args.root, n);
    SPCCL_CHECK(ctx.wait(&receives[i % 2], &received));
    SPCCL_CHECK(checkReceivedBytes(ctx, child, received, bytes, "binomial"));
    const void* lower = i == 0 ? args.sendbuff : accumulator;
    reduce(accumulator, lower, landing + (i % 2) * bytes, args.count);
  }
  if (node.parent >= 0) return ctx.send(node.parent, accumulator, bytes);
  return spcclSuccess;
}

}  // namespace spccl
