// Balanced Parallelism (Zen Def. 6, section 3): point-to-point, incremental
// aggregation, parallelism, balanced. Push: every rank splits its non-zeros
// by owner (h0 or the keyed permutation, so partitions are balanced whatever
// the index distribution, Theorem 2) and sends part p to rank p. Each owner
// sums its parts in rank order. Pull: each owner sends its aggregate to
// every other rank. Per-rank traffic Eq. (1): (n-1)/n (gamma+1) 2 M d / b
// with COO; here every message takes the cheapest encoding of its own count
// over |I_p| positions, so with a ZenHash partition and a dense-enough
// aggregate the pull is Zen's hash bitmap (Algorithm 2).
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "base/check.h"
#include "kernels/sparse_kernels.h"
#include "sparse/set_merge.h"
#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_messages.h"
#include "sparse/sparse_stats.h"

namespace spccl::sparse {

namespace {

struct Context {
  CollContext& ctx;
  SparseWorkspace& workspace;  // the caller's, or one for this call
  const SparseInput& in;
  const SparseRunOptions& options;
  const IndexPartition& partition;
  const uint64_t* rankNnz;
  size_t valueBytes;
  SparseRunReport* report;
};

uint64_t totalNnz(const Context& c) {
  uint64_t total = 0;
  for (int r = 0; r < c.ctx.nranks(); ++r) total += c.rankNnz[r];
  return total;
}

// exchangeMessages with each receive in the workspace's buffer for its
// peer, lent for the exchange: the buffers keep their pages between calls.
spcclResult_t exchangeWithPeerBuffers(const Context& c, std::span<const Outgoing> sends,
                                      std::span<Incoming> incoming) {
  std::vector<MessageBuffer>& buffers = c.workspace.peerReceives;
  buffers.resize(static_cast<size_t>(c.ctx.nranks()));
  for (Incoming& m : incoming) m.data = std::move(buffers[m.peer]);
  const spcclResult_t result = exchangeMessages(c.ctx, sends, incoming, c.report);
  for (Incoming& m : incoming) buffers[m.peer] = std::move(m.data);
  return result;
}

// Push: returns this rank's own part (decoded form) and fills *received
// with the parts the others sent here, by sender rank.
spcclResult_t push(const Context& c, SparseSet* own, std::vector<SparseSet>* received) {
  const int n = c.ctx.nranks(), r = c.ctx.rank();
  Buckets& buckets = c.workspace.buckets;
  bucketByOwner(c.options.bucketing, c.partition, c.in.type, c.in.indices, c.in.values, c.in.nnz,
                &buckets);
  std::vector<uint64_t> bucketSizes(n);
  std::vector<std::vector<unsigned char>>& encoded = c.workspace.peerMessages;
  encoded.resize(n);
  std::vector<Outgoing> sends;
  for (int p = 0; p < n; ++p) {
    const size_t begin = buckets.offsets[p], count = buckets.offsets[p + 1] - begin;
    bucketSizes[p] = count;
    uint64_t* positions = buckets.positions.data() + begin;
    unsigned char* values = buckets.values.data() + begin * c.valueBytes;
    sortByPosition(positions, values, count, c.valueBytes);
    if (p == r) {
      own->positions.assign(positions, positions + count);
      own->values.assign(values, values + count * c.valueBytes);
      continue;
    }
    encoded[p].clear();  // (its capacity stays)
    Encoding e = encodeSet(positions, values, count, c.partition.partSize(p), c.valueBytes,
                           c.options.allowedEncodings, &encoded[p]);
    sends.push_back({p, encoded[p].data(), encoded[p].size(), static_cast<uint8_t>(e)});
  }
  if (c.report) c.report->pushImbalance = imbalanceRatio(bucketSizes);

  const uint64_t mySize = c.partition.partSize(r);
  std::vector<Incoming> incoming;
  for (int q : peersInTurn(r, n))
    incoming.push_back(
        {q,
         messageCapacity(c.rankNnz[q], mySize, c.valueBytes, c.options.allowedEncodings),
         {},
         0});
  SPCCL_CHECK(exchangeWithPeerBuffers(c, sends, incoming));
  received->resize(n);
  (*received)[r].positions.clear();
  (*received)[r].values.clear();
  for (Incoming& m : incoming) {
    const MessageBuffer& data = c.workspace.peerReceives[m.peer];
    SPCCL_CHECK(decodeSet(data.data(), data.size(), m.flags, mySize, c.valueBytes,
                          c.options.allowedEncodings, m.peer, &(*received)[m.peer]));
  }
  return spcclSuccess;
}

// Sums the parts in rank order, ((part_0 + part_1) + part_2) + ..., so the
// bits depend on neither the messages' encodings nor the method: when the
// parts are sparse next to |I_r|, by merging them one after another (work
// ~ n/2 x the pairs that arrived); otherwise over a dense accumulator of
// |I_r| elements (zeroed, scattered into, scanned: ~ 3 |I_r|). Zero
// results (x + -x) are dropped either way.
void aggregate(const Context& c, const SparseSet& own, std::vector<SparseSet>& parts,
               SparseSet* out) {
  const int n = c.ctx.nranks(), r = c.ctx.rank();
  const uint64_t mySize = c.partition.partSize(r);
  auto partOf = [&](int q) -> const SparseSet& { return q == r ? own : parts[q]; };
  uint64_t arrived = 0;
  for (int q = 0; q < n; ++q) arrived += partOf(q).size();
  if (arrived * static_cast<uint64_t>(n) < 2 * mySize) {
    SparseSet sum = partOf(0), next;
    for (int q = 1; q < n; ++q) {
      mergeSets(c.in.type, c.valueBytes, sum, partOf(q), &next);
      std::swap(sum, next);
    }
    dropZeros(c.in.type, c.valueBytes, &sum);
    *out = std::move(sum);
    return;
  }
  // The workspace's: a fresh |I_r|-sized vector
  // page-faulted all of it in on every call.
  std::vector<unsigned char>& accumulator = c.workspace.ownerAccumulator;
  const size_t accumulatorBytes = static_cast<size_t>(mySize) * c.valueBytes;
  if (accumulator.size() < accumulatorBytes) accumulator.resize(accumulatorBytes);
  std::memset(accumulator.data(), 0, accumulatorBytes);
  for (int q = 0; q < n; ++q) {
    const SparseSet& part = partOf(q);
    kernels::scatterReduce(c.in.type, spcclSum, accumulator.data(), part.positions.data(),
                           part.values.data(), part.size());
  }
  const size_t bound = static_cast<size_t>(std::min<uint64_t>(arrived, mySize));
  out->positions.resize(bound);
  out->values.resize(bound * c.valueBytes);
  size_t nnz = kernels::extractNonZeros(c.in.type, accumulator.data(), mySize,
                                        out->positions.data(), out->values.data(), bound);
  out->positions.resize(nnz);
  out->values.resize(nnz * c.valueBytes);
}

// Appends partition p's aggregate to the result, positions mapped back to
// global indices (the partitions are disjoint, so no index repeats).
void appendPart(const Context& c, int p, const SparseSet& part, SparseSet* result) {
  const size_t at = result->size();
  result->positions.resize(at + part.size());
  c.partition.indices(p, part.positions.data(), part.size(), result->positions.data() + at);
  result->values.insert(result->values.end(), part.values.begin(), part.values.end());
}

// Writes partitions' aggregates into the caller's dense output (cleared
// when constructed with intoOutput), global indices from the partition.
class PartScatter {
 public:
  PartScatter(const Context& c, bool intoOutput) : c_(c) {
    if (intoOutput)
      std::memset(c.in.denseOutput, 0, static_cast<size_t>(c.in.universe) * c.valueBytes);
  }
  void add(int p, const SparseSet& part) {
    indices_.resize(part.size());
    c_.partition.indices(p, part.positions.data(), part.size(), indices_.data());
    kernels::scatterCopy(c_.valueBytes, indices_.data(), part.values.data(), part.size(),
                         c_.in.denseOutput);
    nonZeros_ += kernels::countNonZeros(c_.in.type, part.values.data(), part.size());
  }
  size_t nonZeros() const { return nonZeros_; }

 private:
  const Context& c_;
  std::vector<uint64_t> indices_;
  size_t nonZeros_ = 0;
};

// Pull: the owner's aggregate goes to every other rank (an all-gather of
// the partitions); every rank joins the partitions into one set, sorted by
// global index when the caller needs it sorted (the keyed permutation
// scatters a partition's indices over [0, M), so this sort, not the
// caller, pays for the randomness; a dense output needs no order, and at
// high density this sort was a quarter of BP's CPU time).
spcclResult_t pull(const Context& c, const SparseSet& mine, SparseSet* result) {
  const int n = c.ctx.nranks(), r = c.ctx.rank();
  std::vector<unsigned char>& encoded = c.workspace.encodedSet;
  encoded.clear();
  Encoding e =
      encodeSet(mine.positions.data(), mine.values.data(), mine.size(), c.partition.partSize(r),
                c.valueBytes, c.options.allowedEncodings, &encoded);
  std::vector<Outgoing> sends;
  std::vector<Incoming> incoming;
  const uint64_t total = totalNnz(c);
  for (int q : peersInTurn(r, n)) {
    sends.push_back({q, encoded.data(), encoded.size(), static_cast<uint8_t>(e)});
    incoming.push_back(
        {q,
         messageCapacity(total, c.partition.partSize(q), c.valueBytes, c.options.allowedEncodings),
         {},
         0});
  }
  SPCCL_CHECK(exchangeWithPeerBuffers(c, sends, incoming));
  std::vector<uint64_t> aggregateSizes(n);
  aggregateSizes[r] = mine.size();
  // A dense output in no particular order takes each partition straight
  // from its message (cleared once, then scattered into): no joined set.
  const bool intoOutput = !c.in.sortedResult && c.in.denseOutput != nullptr;
  PartScatter scatter(c, intoOutput);
  result->positions.clear();
  result->values.clear();
  if (intoOutput)
    scatter.add(r, mine);
  else
    appendPart(c, r, mine, result);
  SparseSet& part = c.workspace.receivedSet;
  for (Incoming& m : incoming) {
    const MessageBuffer& data = c.workspace.peerReceives[m.peer];
    SPCCL_CHECK(decodeSet(data.data(), data.size(), m.flags, c.partition.partSize(m.peer),
                          c.valueBytes, c.options.allowedEncodings, m.peer, &part));
    aggregateSizes[m.peer] = part.size();
    if (intoOutput)
      scatter.add(m.peer, part);
    else
      appendPart(c, m.peer, part, result);
  }
  if (c.report) c.report->pullImbalance = imbalanceRatio(aggregateSizes);
  if (intoOutput) {
    result->inDenseOutput = true;
    result->denseOutputNnz = scatter.nonZeros();
    return spcclSuccess;
  }
  if (c.in.sortedResult)
    sortByPosition(result->positions.data(), result->values.data(), result->size(), c.valueBytes);
  result->ascending = c.in.sortedResult;
  return spcclSuccess;
}

}  // namespace

spcclResult_t balancedParallelism(CollContext& ctx, const SparseInput& in,
                                  const SparseRunOptions& options, SparseSet* result,
                                  SparseRunReport* report) {
  std::vector<uint64_t> nnzStorage;
  const uint64_t* rankNnz = nullptr;
  SPCCL_CHECK(rankNonZeros(ctx, in, &nnzStorage, &rankNnz));
  std::shared_ptr<const IndexPartition> partition =
      makePartition(options.partition, in.universe, ctx.nranks(), options.seed);
  SparseWorkspace local;
  SparseWorkspace& workspace = in.workspace != nullptr ? *in.workspace : local;
  Context c{ctx, workspace, in, options, *partition, rankNnz, spcclTypeSize(in.type), report};
  SparseSet& own = workspace.currentSet;
  SparseSet& aggregated = workspace.mergedSet;
  SPCCL_CHECK(push(c, &own, &workspace.peerSets));
  aggregate(c, own, workspace.peerSets, &aggregated);
  return pull(c, aggregated, result);
}

}  // namespace spccl::sparse
