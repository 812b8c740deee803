// Balanced Parallelism over dense ranges (bp_context.h's useDenseRanges):
// part p is [p*M/n, (p+1)*M/n) of index space, as in the dense ring's
// reduce-scatter, and each message is the cheapest encoding of its own
// count (docs/algorithms.md 2.6 (2): at this density Bitmap or Dense), so no
// message is larger than the ring's chunk for that range. The owner adds
// the parts into a dense accumulator in rank order, ((0 + part_0) +
// part_1) + ..., an absent position adding +0: the sums, and the bits, of
// the sparse owner's accumulator. Every rank then places each owner's
// message straight into its range of the dense output: no permutation to
// invert, no pairs between message and output. Before this schedule BP
// spent 6.7x (20 %) and 10.6x (50 %) the dense ring's CPU per call at
// n = 8 (docs/perf/sparse_cpu.md), mostly in the pull's per-element
// inverse permutation and random scatter.
#include <algorithm>
#include <cstring>
#include <vector>

#include "base/check.h"
#include "coll/small_allgather.h"
#include "kernels/sparse_kernels.h"
#include "sparse/bp_context.h"
#include "sparse/dense_stage.h"
#include "sparse/even_ranges.h"
#include "sparse/sparse_stats.h"

namespace spccl::sparse::bp {
namespace {

unsigned char* grownTo(std::vector<unsigned char>* buffer, size_t bytes) {
  if (buffer->size() < bytes) buffer->resize(bytes);
  return buffer->data();
}

// The frame flags each peer's message arrived with, by rank.
using FlagsByPeer = std::vector<uint8_t>;

// Push: each range's slice of the (ascending) input goes to its owner,
// positions relative to the range; the owner sums the slices into acc,
// size(r) values, in rank order.
spcclResult_t pushAndSum(const Context& c, const EvenRanges& ranges, unsigned char* acc) {
  const int n = c.ctx.nranks(), r = c.ctx.rank();
  const size_t s = c.valueBytes, nnz = c.in.nnz;
  const uint64_t* indices = nullptr;
  const unsigned char* values = nullptr;
  SPCCL_CHECK(inputPairs(c, &indices, &values));
  std::vector<size_t> begin(static_cast<size_t>(n) + 1, nnz);
  std::vector<uint64_t>& positions = c.workspace.buckets.positions;
  positions.resize(nnz);
  size_t at = 0;
  for (int p = 0; p < n; ++p) {
    begin[p] = at;
    at = static_cast<size_t>(std::lower_bound(indices + at, indices + nnz, ranges.start(p + 1)) -
                             indices);
    for (size_t i = begin[p]; i < at; ++i) positions[i] = indices[i] - ranges.start(p);
  }
  std::vector<uint64_t> sliceSizes(n);
  std::vector<std::vector<unsigned char>>& encoded = c.workspace.peerMessages;
  encoded.resize(n);
  std::vector<Outgoing> sends;
  for (int p = 0; p < n; ++p) {
    const size_t count = begin[p + 1] - begin[p];
    sliceSizes[p] = count;
    if (p == r) continue;
    encoded[p].clear();  // (its capacity stays)
    const Encoding e = encodeSet(positions.data() + begin[p], values + begin[p] * s, count,
                                 ranges.size(p), s, c.options.allowedEncodings, &encoded[p]);
    sends.push_back({p, encoded[p].data(), encoded[p].size(), static_cast<uint8_t>(e)});
  }
  if (c.report) c.report->pushImbalance = imbalanceRatio(sliceSizes);

  const uint64_t mySize = ranges.size(r);
  std::vector<Incoming> incoming;
  for (int q : peersInTurn(r, n))
    incoming.push_back(
        {q, messageCapacity(c.rankNnz[q], mySize, s, c.options.allowedEncodings), {}, 0});
  SPCCL_CHECK(exchangeWithPeerBuffers(c, sends, incoming));
  FlagsByPeer flags(n);
  for (const Incoming& m : incoming) flags[m.peer] = m.flags;

  std::memset(acc, 0, static_cast<size_t>(mySize) * s);
  for (int q = 0; q < n; ++q) {
    if (q == r) {
      kernels::scatterReduce(c.in.type, spcclSum, acc, positions.data() + begin[r],
                             values + begin[r] * s, sliceSizes[r]);
      continue;
    }
    const MessageBuffer& data = c.workspace.peerReceives[q];
    SPCCL_CHECK(mergeMessageIntoDense(c.ctx.kernels(), c.in.type, data.data(), data.size(),
                                      flags[q], mySize, c.options.allowedEncodings, q,
                                      DenseMerge::AddHigher, acc, &c.workspace.receivedSet));
  }
  return spcclSuccess;
}

// Appends range p's pairs (positions relative to the range) to the result
// as global indices.
void appendRange(uint64_t start, const uint64_t* positions, const unsigned char* values,
                 size_t count, size_t valueBytes, SparseSet* result) {
  const size_t at = result->size();
  result->positions.resize(at + count);
  for (size_t i = 0; i < count; ++i) result->positions[at + i] = start + positions[i];
  result->values.insert(result->values.end(), values, values + count * valueBytes);
}

}  // namespace

spcclResult_t runDenseRanges(const Context& c, SparseSet* result) {
  const int n = c.ctx.nranks(), r = c.ctx.rank();
  const size_t s = c.valueBytes;
  const EvenRanges ranges(c.in.universe, n);
  const bool intoOutput = c.in.denseOutput != nullptr && !c.in.sortedResult;
  auto* output = static_cast<unsigned char*>(c.in.denseOutput);
  // The owner's sum goes straight into its range of the output when it has one.
  unsigned char* acc = intoOutput ? output + ranges.start(r) * s
                                  : grownTo(&c.workspace.ownerAccumulator, ranges.size(r) * s);
  SPCCL_CHECK(pushAndSum(c, ranges, acc));

  // Pull: the owner's range to every other rank.
  std::vector<unsigned char>& encoded = c.workspace.denseMessage;
  size_t bytes = 0, ownNnz = 0;
  const Encoding e = encodeDenseTensor(c.in.type, acc, ranges.size(r), c.options.allowedEncodings,
                                       &encoded, &bytes, &ownNnz, &c.workspace.currentSet);
  std::vector<Outgoing> sends;
  std::vector<Incoming> incoming;
  const uint64_t total = totalNnz(c);
  for (int q : peersInTurn(r, n)) {
    sends.push_back({q, encoded.data(), bytes, static_cast<uint8_t>(e)});
    incoming.push_back(
        {q, messageCapacity(total, ranges.size(q), s, c.options.allowedEncodings), {}, 0});
  }
  SPCCL_CHECK(exchangeWithPeerBuffers(c, sends, incoming));
  FlagsByPeer flags(n);
  for (const Incoming& m : incoming) flags[m.peer] = m.flags;

  std::vector<uint64_t> rangeNnz(n);
  rangeNnz[r] = ownNnz;
  result->positions.clear();
  result->values.clear();
  SparseSet& part = c.workspace.receivedSet;
  for (int p = 0; p < n; ++p) {  // ascending ranges: the result comes out sorted
    if (p == r) {
      if (intoOutput) continue;  // summed in place
      part.positions.resize(ownNnz);
      part.values.resize(ownNnz * s);
      kernels::extractNonZeros(c.in.type, acc, ranges.size(r), part.positions.data(),
                               part.values.data(), ownNnz);
      appendRange(ranges.start(p), part.positions.data(), part.values.data(), ownNnz, s, result);
      continue;
    }
    const MessageBuffer& data = c.workspace.peerReceives[p];
    rangeNnz[p] = messagePairs(data.data(), data.size());
    if (intoOutput) {
      SPCCL_CHECK(mergeMessageIntoDense(c.ctx.kernels(), c.in.type, data.data(), data.size(),
                                        flags[p], ranges.size(p), c.options.allowedEncodings, p,
                                        DenseMerge::Place, output + ranges.start(p) * s, &part));
    } else {
      SPCCL_CHECK(decodeSet(data.data(), data.size(), flags[p], ranges.size(p), s,
                            c.options.allowedEncodings, p, &part));
      appendRange(ranges.start(p), part.positions.data(), part.values.data(), part.size(), s,
                  result);
    }
  }
  if (c.report) c.report->pullImbalance = imbalanceRatio(rangeNnz);
  if (intoOutput) {
    result->inDenseOutput = true;
    // Headers count each range's non-zeros (the owner dropped its zeros).
    size_t outputNnz = 0;
    for (uint64_t k : rangeNnz) outputNnz += static_cast<size_t>(k);
    result->denseOutputNnz = outputNnz;
  }
  result->ascending = true;
  return spcclSuccess;
}

}  // namespace spccl::sparse::bp
