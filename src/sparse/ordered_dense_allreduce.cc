// The sparse schedules' dense fallback (ordered_dense_allreduce.h).
#include "sparse/ordered_dense_allreduce.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "base/check.h"
#include "coll/partition.h"
#include "kernels/kernels.h"
#include "kernels/sparse_kernels.h"
#include "sparse/dense_stage.h"
#include "sparse/even_ranges.h"
#include "sparse/sparse_messages.h"

namespace spccl::sparse {
namespace {

// Elements per block of the owner's sum: the operands' blocks stay in L1
// while they are added (HC's order keeps a block per leaf).
constexpr size_t kBlock = 1024;

// out[0, length) = the sum of operands[0..n) in `order`, each sum starting
// from +0. scratch: room for `leaves` blocks of kBlock values.
// Starting from +0 is relied on: -0.0 on every rank then sums to +0.0, so
// the dense fallback's result loses nothing when it becomes pairs
// (ZeroTest drops -0.0), and the device sparse call's pairs form gives the
// staged call's bits (sparse_allreduce.cc, chooseResultForm). Starting
// from operand 0 instead would break that on all -0.0 inputs
// (DeviceSparse.NegativeZeroAndNanEveryAlgorithmN2 catches it).
void sumBlock(const kernels::KernelTable& table, spcclDataType_t type, size_t valueBytes,
              const std::vector<const unsigned char*>& operands, size_t length, SumOrder order,
              unsigned char* scratch, unsigned char* out) {
  const int n = static_cast<int>(operands.size());
  auto add = [&](unsigned char* acc, const unsigned char* operand) {
    kernels::reduce(table, type, spcclSum, acc, acc, operand, length);
  };
  if (order == SumOrder::RankOrder) {
    std::memset(scratch, 0, length * valueBytes);
    for (const unsigned char* operand : operands) add(scratch, operand);
    std::memcpy(out, scratch, length * valueBytes);
    return;
  }
  const int p = largestPowerOfTwoAtMost(n);
  auto leaf = [&](int i) { return scratch + static_cast<size_t>(i) * kBlock * valueBytes; };
  for (int i = 0; i < p; ++i) {
    std::memset(leaf(i), 0, length * valueBytes);
    add(leaf(i), operands[static_cast<size_t>(i)]);
    if (i + p < n) add(leaf(i), operands[static_cast<size_t>(i) + static_cast<size_t>(p)]);
  }
  for (int stride = 1; stride < p; stride *= 2)
    for (int i = 0; i < p; i += 2 * stride) add(leaf(i), leaf(i + stride));
  std::memcpy(out, leaf(0), length * valueBytes);
}

}  // namespace

uint64_t denseFallbackBytes(uint64_t universe, size_t valueBytes, int nranks) {
  const unsigned __int128 tensor = static_cast<unsigned __int128>(universe) * valueBytes;
  return static_cast<uint64_t>(2 * tensor * static_cast<unsigned>(nranks - 1) /
                               static_cast<unsigned>(nranks));
}

spcclResult_t orderedDenseAllReduce(CollContext& ctx, spcclDataType_t type, const void* input,
                                    void* output, size_t count, SumOrder order,
                                    SparseWorkspace* workspace, SparseRunReport* report) {
  const int n = ctx.nranks(), r = ctx.rank();
  const size_t s = spcclTypeSize(type);
  const EvenRanges ranges(count, n);
  const auto* in = static_cast<const unsigned char*>(input);
  auto* out = static_cast<unsigned char*>(output);
  const size_t mine = static_cast<size_t>(ranges.size(r));
  auto offset = [&](int q) { return static_cast<size_t>(ranges.start(q)) * s; };

  // 1. Reduce-scatter: every rank's slice of range r, straight from its input.
  std::vector<Outgoing> sends;
  std::vector<Incoming> incoming;
  std::vector<MessageBuffer>& buffers = workspace->sliceReceives;
  buffers.resize(static_cast<size_t>(n));
  for (int q : peersInTurn(r, n)) {
    sends.push_back({q, in + offset(q), static_cast<size_t>(ranges.size(q)) * s, 0});
    incoming.push_back({q, mine * s, std::move(buffers[static_cast<size_t>(q)]), 0});
  }
  const spcclResult_t exchanged = exchangeMessages(ctx, sends, incoming, report);
  for (Incoming& m : incoming) buffers[static_cast<size_t>(m.peer)] = std::move(m.data);
  SPCCL_CHECK(exchanged);
  for (const Incoming& m : incoming)
    if (buffers[static_cast<size_t>(m.peer)].size() != mine * s)
      return SPCCL_FAIL(spcclRemoteError,
                        "dense fallback: rank %d sent %zu bytes of range %d, expected %zu", m.peer,
                        buffers[static_cast<size_t>(m.peer)].size(), r, mine * s);

  // 2. The owner's sum, block by block (each block's operands are read
  // before it is written, so input may be output).
  const int leaves = order == SumOrder::Tree ? largestPowerOfTwoAtMost(n) : 1;
  std::vector<unsigned char>& scratch = workspace->sliceScratch;
  if (scratch.size() < static_cast<size_t>(leaves) * kBlock * s)
    scratch.resize(static_cast<size_t>(leaves) * kBlock * s);
  std::vector<const unsigned char*> operands(static_cast<size_t>(n));
  for (size_t base = 0; base < mine; base += kBlock) {
    const size_t length = std::min(kBlock, mine - base);
    for (int q = 0; q < n; ++q)
      operands[static_cast<size_t>(q)] =
          q == r ? in + offset(r) + base * s : buffers[static_cast<size_t>(q)].data() + base * s;
    sumBlock(ctx.kernels(), type, s, operands, length, order, scratch.data(),
             out + offset(r) + base * s);
  }

  // 3. All-gather: each owner's range, received in place.
  std::vector<PeerRequest> receives(static_cast<size_t>(n));
  for (int q : peersInTurn(r, n))
    SPCCL_CHECK(ctx.irecv(q, out + offset(q), static_cast<size_t>(ranges.size(q)) * s,
                          &receives[static_cast<size_t>(q)]));
  std::vector<PeerRequest> sent;
  for (int q : peersInTurn(r, n)) {
    sent.emplace_back();
    SPCCL_CHECK(ctx.isend(q, out + offset(r), mine * s, &sent.back()));
    if (report) report->bytesSent += mine * s;
  }
  for (int q : peersInTurn(r, n)) {
    size_t received = 0;
    SPCCL_CHECK(ctx.wait(&receives[static_cast<size_t>(q)], &received));
    if (received != static_cast<size_t>(ranges.size(q)) * s)
      return SPCCL_FAIL(spcclRemoteError,
                        "dense fallback: rank %d sent %zu bytes of its range, expected %zu", q,
                        received, static_cast<size_t>(ranges.size(q)) * s);
    if (report) report->bytesReceived += received;
  }
  return ctx.waitAll(sent);
}

spcclResult_t denseFallback(CollContext& ctx, const SparseInput& in, SumOrder order,
                            SparseSet* result, SparseRunReport* report) {
  SparseWorkspace local;
  SparseWorkspace* w = in.workspace ? in.workspace : &local;
  const size_t s = spcclTypeSize(in.type), count = static_cast<size_t>(in.universe);
  void* out = in.denseOutput;
  if (out == nullptr) {
    if (w->denseTensor.size() < count * s) w->denseTensor.resize(count * s);
    out = w->denseTensor.data();
  }
  const void* source = in.denseInput;
  if (source == nullptr) {
    kernels::densify(s, in.indices, in.values, in.nnz, out, count);
    source = out;
  }
  SPCCL_CHECK(orderedDenseAllReduce(ctx, in.type, source, out, count, order, w, report));
  if (in.denseOutput != nullptr) {
    result->inDenseOutput = true;
    return spcclSuccess;
  }
  denseToPairs(in.type, out, count, result);
  return spcclSuccess;
}

}  // namespace spccl::sparse
