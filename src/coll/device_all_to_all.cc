#include "coll/device_all_to_all.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/check.h"
#include "coll/small_allgather.h"

namespace spccl {

namespace {

using device::CuDevicePtr;
using device::CuStream;

// Block `from -> me`: `count` elements at element `source` of rank from's
// sendbuff, to element `target` of this rank's recvbuff.
struct Block {
  size_t source = 0, target = 0, count = 0;
};

// Queues the blocks' copies (indexed by sending rank), from rank me+1 on
// so that the ranks do not all read rank 0 first; the first failure.
spcclResult_t queueBlocks(CollContext& ctx, const DeviceCall& call, const DeviceBuffers& buffers,
                          const std::vector<Block>& blocks, CuStream stream) {
  const int n = ctx.nranks(), me = ctx.rank();
  const size_t size = spcclTypeSize(call.datatype);
  CuDevicePtr target = 0;
  SPCCL_CHECK(buffers.recv(me, &target));
  for (int k = 1; k <= n; ++k) {
    const int from = (me + k) % n;
    const Block& block = blocks[static_cast<size_t>(from)];
    // A rank that sends this rank nothing may have exported nothing.
    if (block.count == 0) continue;
    CuDevicePtr source = 0;
    SPCCL_CHECK(buffers.send(from, &source));
    const std::string what = "copying rank " + std::to_string(from) + "'s block for rank " +
                             std::to_string(me) + " from its sendbuff";
    SPCCL_CHECK(copyOnStream(target + block.target * size, source + block.source * size,
                             block.count * size, stream, call.name, what.c_str()));
  }
  return spcclSuccess;
}

// The blocks copied, then waited for even after a failed copy
// (finishQueuedCopies).
spcclResult_t runBlocks(CollContext& ctx, const DeviceCall& call, const DeviceBuffers& buffers,
                        const std::vector<Block>& blocks) {
  // A rank that receives nothing (it may pass no device memory at all:
  // device_exchange.cc, kIdleDevice) has no stream to take.
  if (std::all_of(blocks.begin(), blocks.end(), [](const Block& b) { return b.count == 0; }))
    return spcclSuccess;
  CuStream stream = nullptr;
  SPCCL_CHECK(buffers.stream(&stream));
  return finishQueuedCopies(queueBlocks(ctx, call, buffers, blocks, stream), stream, call.name,
                            "copying the peers' blocks");
}

spcclResult_t allToAll(CollContext& ctx, const DeviceCall& call, const DeviceBuffers& buffers) {
  const size_t n = static_cast<size_t>(ctx.nranks()), me = static_cast<size_t>(ctx.rank());
  std::vector<Block> blocks(n);
  for (size_t from = 0; from < n; ++from)
    blocks[from] = Block{me * call.count, from * call.count, call.count};
  return deviceBarrier(ctx, call, "the exchange", runBlocks(ctx, call, buffers, blocks));
}

// What rank r sends to rank p: its sendcounts[p] and sdispls[p].
struct SendBlock {
  uint64_t count = 0, displacement = 0;
};

// Every rank's send blocks (n x n), so that each rank knows where its
// block sits in every peer's sendbuff and can check the peer's count
// against its own recvcounts.
spcclResult_t gatherSendBlocks(CollContext& ctx, const DeviceCall& call,
                               std::vector<SendBlock>* all) {
  const size_t n = static_cast<size_t>(ctx.nranks());
  std::vector<SendBlock> mine(n);
  for (size_t p = 0; p < n; ++p) mine[p] = SendBlock{call.sendcounts[p], call.sdispls[p]};
  all->assign(n * n, SendBlock{});
  return allGatherSmall(ctx, mine.data(), n * sizeof(SendBlock), all->data());
}

// This rank's blocks, or spcclInvalidUsage naming both ranks where a
// peer's send count differs from this rank's receive count (the CPU
// all-to-allv's error, coll/schedule_support.cc).
spcclResult_t blocksFor(CollContext& ctx, const DeviceCall& call, const std::vector<SendBlock>& all,
                        std::vector<Block>* blocks) {
  const size_t n = static_cast<size_t>(ctx.nranks()), me = static_cast<size_t>(ctx.rank());
  blocks->assign(n, Block{});
  for (size_t from = 0; from < n; ++from) {
    const SendBlock& sent = all[from * n + me];
    if (sent.count != call.recvcounts[from])
      return SPCCL_FAIL(spcclInvalidUsage,
                        "%s: rank %zu: recvcounts[%zu] = %zu but rank %zu's sendcounts[%zu] = "
                        "%llu: rank %zu's send count for this rank differs from this rank's "
                        "receive count for it",
                        call.name, me, from, call.recvcounts[from], from, me,
                        static_cast<unsigned long long>(sent.count), from);
    (*blocks)[from] = Block{sent.displacement, call.rdispls[from], sent.count};
  }
  return spcclSuccess;
}

spcclResult_t allToAllv(CollContext& ctx, const DeviceCall& call, const DeviceBuffers& buffers) {
  std::vector<SendBlock> all;
  SPCCL_CHECK(gatherSendBlocks(ctx, call, &all));
  std::vector<Block> blocks;
  spcclResult_t result = blocksFor(ctx, call, all, &blocks);
  if (result == spcclSuccess) result = runBlocks(ctx, call, buffers, blocks);
  return deviceBarrier(ctx, call, "the exchange", result);
}

}  // namespace

const DeviceSchedule& deviceAllToAllSchedule() {
  static const DeviceSchedule kAllToAll{false, allToAll};
  return kAllToAll;
}

const DeviceSchedule& deviceAllToAllvSchedule() {
  static const DeviceSchedule kAllToAllv{false, allToAllv};
  return kAllToAllv;
}

}  // namespace spccl
