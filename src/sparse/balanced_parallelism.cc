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
#include "sparse/bp_context.h"
#include "sparse/bp_sorted_parts.h"
#include "sparse/pair_source.h"
#include "sparse/set_merge.h"
#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_messages.h"
#include "sparse/sparse_stats.h"

namespace spccl::sparse {
namespace bp {

spcclResult_t exchangeWithPeerBuffers(const Context& c, std::span<const Outgoing> sends,
                                      std::span<Incoming> incoming) {
  std::vector<MessageBuffer>& buffers = c.workspace.peerReceives;
  buffers.resize(static_cast<size_t>(c.ctx.nranks()));
  for (Incoming& m : incoming) m.data = std::move(buffers[m.peer]);
  const spcclResult_t result = exchangeMessages(c.ctx, sends, incoming, c.report);
  for (Incoming& m : incoming) buffers[m.peer] = std::move(m.data);
  return result;
}

spcclResult_t inputPairs(const Context& c, const uint64_t** indices, const unsigned char** values) {
  *indices = c.in.indices;
  *values = static_cast<const unsigned char*>(c.in.values);
  if (*indices != nullptr || c.in.pairSource == nullptr) return spcclSuccess;
  return fetchInsideCall(c.ctx, *c.in.pairSource, indices, values);
}

spcclResult_t bucketOwnPairs(const Context& c, Buckets* out, bool* sorted) {
  if (c.in.bucketer != nullptr && c.in.bucketer->bucket(c.partition, out, sorted)) {
    if (out->offsets.size() != static_cast<size_t>(c.partition.parts()) + 1 ||
        out->offsets.back() != c.in.nnz)
      return SPCCL_FAIL(spcclInternalError,
                        "Balanced Parallelism: the given buckets hold %zu pairs, not the "
                        "input's %zu",
                        out->offsets.empty() ? size_t{0} : out->offsets.back(), c.in.nnz);
    return spcclSuccess;
  }
  const uint64_t* indices = nullptr;
  const unsigned char* values = nullptr;
  SPCCL_CHECK(inputPairs(c, &indices, &values));
  bucketByOwner(c.options.bucketing, c.partition, c.in.type, indices, values, c.in.nnz, out);
  *sorted = false;
  return spcclSuccess;
}

namespace {

// Push: returns this rank's own part (decoded form) and fills *received
// with the parts the others sent here, by sender rank.
spcclResult_t push(const Context& c, SparseSet* own, std::vector<SparseSet>* received) {
  const int n = c.ctx.nranks(), r = c.ctx.rank();
  Buckets& buckets = c.workspace.buckets;
  bool sorted = false;
  SPCCL_CHECK(bucketOwnPairs(c, &buckets, &sorted));
  std::vector<uint64_t> bucketSizes(n);
  std::vector<std::vector<unsigned char>>& encoded = c.workspace.peerMessages;
  encoded.resize(n);
  std::vector<Outgoing> sends;
  for (int p = 0; p < n; ++p) {
    const size_t begin = buckets.offsets[p], count = buckets.offsets[p + 1] - begin;
    bucketSizes[p] = count;
    uint64_t* positions = buckets.positions.data() + begin;
    unsigned char* values = buckets.values.data() + begin * c.valueBytes;
    if (!sorted) sortByPosition(positions, values, count, c.valueBytes);
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

}  // namespace

// Sums the parts in rank order, ((part_0 + part_1) + part_2) + ..., so the
// bits depend on neither the messages' encodings nor the method: when the
// parts are sparse next to |I_r|, by merging them one after another (work
// ~ n/2 x the pairs that arrived, ~40 instructions each); otherwise over a
// dense accumulator of |I_r| elements (zeroed, scattered into, scanned: a
// few instructions per element). At 1 % and n = 8 (arrived * n = |I_r| / 2)
// the merges were 29 M instructions per call, the accumulator ~8 M. Zero
// results (x + -x) are dropped either way.

void aggregate(const Context& c, const SparseSet& own, const std::vector<SparseSet>& parts,
               uint64_t mySize, SparseSet* out) {
  const int n = c.ctx.nranks(), r = c.ctx.rank();
  auto partOf = [&](int q) -> const SparseSet& { return q == r ? own : parts[q]; };
  uint64_t arrived = 0;
  for (int q = 0; q < n; ++q) arrived += partOf(q).size();
  if (arrived * static_cast<uint64_t>(n) * 8 < mySize) {
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

// The owner's pull message into *out; returns its frame flags. *global gets
// the aggregate over global indices, ascending. The message carries global
// indices when the wire time of the bytes that adds (Packed codes gaps n
// times as wide: ~ld(n) bits more per pair, +7 % of BP's bytes at 1 %,
// n = 8) on a receiver's link is below the CPU it saves there: the inverse
// permutation then runs once, here, instead of on every rank, and every
// receiver writes its output in order (densifySortedParts) instead of at
// random. Measured at 1 %, n = 8 (docs/perf/sparse_cpu.md): 5.7 ms of CPU
// per call over 630 K received pairs, ~9 ns a pair; so on the default
// model (1 GB/s) global indices are always taken, on a 1 Gbit/s link up
// to about one byte more per pair (never past the receivers' bound on
// the message). The flag names the choice, so each owner decides alone;
// the values, hence the bits, are the same either way.
constexpr double kSecondsSavedPerPulledPair = 8e-9;

uint8_t encodePullMessage(const Context& c, const SparseSet& mine, uint64_t first,
                          uint64_t positions, SparseSet* global, std::vector<unsigned char>* out) {
  const int r = c.ctx.rank();
  const size_t k = mine.size(), s = c.valueBytes;
  const unsigned allowed = c.options.allowedEncodings;
  out->clear();  // (its capacity stays)
  const Encoding local =
      encodeSet(mine.positions.data(), mine.values.data(), k, positions, s, allowed, out);
  global->positions.resize(k);
  if (first == 0) {
    c.partition.indices(r, mine.positions.data(), k, global->positions.data());
  } else {  // a piece's positions count from its first
    for (size_t i = 0; i < k; ++i) global->positions[i] = first + mine.positions[i];
    c.partition.indices(r, global->positions.data(), k, global->positions.data());
  }
  global->values.assign(mine.values.begin(), mine.values.end());
  sortByPosition(global->positions.data(), global->values.data(), k, s);
  std::vector<unsigned char>& alternative = c.workspace.denseMessage;
  alternative.clear();
  const Encoding wide = encodeSet(global->positions.data(), global->values.data(), k, c.in.universe,
                                  s, allowed, &alternative);
  const size_t bound = messageCapacity(totalNnz(c), positions, s, allowed);
  const double extraBytes =
      static_cast<double>(alternative.size()) - static_cast<double>(out->size());
  const double extraSeconds = extraBytes * c.ctx.linkModel().betaSecondsPerByte;
  if (extraSeconds > static_cast<double>(k) * kSecondsSavedPerPulledPair ||
      alternative.size() > bound)
    return static_cast<uint8_t>(local);
  std::swap(*out, alternative);
  return static_cast<uint8_t>(wide) | kGlobalIndices;
}

spcclResult_t decodePullMessage(const Context& c, const unsigned char* data, size_t bytes,
                                uint8_t flags, int owner, uint64_t first, uint64_t positions,
                                SparseSet* part) {
  const bool global = (flags & kGlobalIndices) != 0;
  SPCCL_CHECK(decodeSet(data, bytes, static_cast<uint8_t>(flags & ~kGlobalIndices),
                        global ? c.in.universe : positions, c.valueBytes,
                        c.options.allowedEncodings, owner, part));
  if (global) return spcclSuccess;
  if (first != 0)  // a piece's positions count from its first
    for (uint64_t& position : part->positions) position += first;
  // (indices() maps in place)
  c.partition.indices(owner, part->positions.data(), part->size(), part->positions.data());
  return spcclSuccess;
}

spcclResult_t writePulledParts(const Context& c, std::span<const SparseSet* const> ascending,
                               std::span<const SparseSet* const> unordered, SparseSet* result) {
  result->positions.clear();
  result->values.clear();
  if (!c.in.sortedResult && c.in.denseOutput != nullptr) {
    densifySortedParts(c.valueBytes, ascending, c.in.denseOutput,
                       static_cast<size_t>(c.in.universe));
    size_t nonZeros = 0;
    for (const SparseSet* part : ascending)
      nonZeros += kernels::countNonZeros(c.in.type, part->values.data(), part->size());
    for (const SparseSet* part : unordered) {
      kernels::scatterCopy(c.valueBytes, part->positions.data(), part->values.data(), part->size(),
                           c.in.denseOutput);
      nonZeros += kernels::countNonZeros(c.in.type, part->values.data(), part->size());
    }
    result->inDenseOutput = true;
    result->denseOutputNnz = nonZeros;
    return spcclSuccess;
  }
  auto join = [&](const SparseSet* part) {
    result->positions.insert(result->positions.end(), part->positions.begin(),
                             part->positions.end());
    result->values.insert(result->values.end(), part->values.begin(), part->values.end());
  };
  for (const SparseSet* part : ascending) join(part);
  for (const SparseSet* part : unordered) join(part);
  if (c.in.sortedResult)
    sortByPosition(result->positions.data(), result->values.data(), result->size(), c.valueBytes);
  result->ascending = c.in.sortedResult;
  return spcclSuccess;
}

namespace {

// Pull: the owner's aggregate goes to every other rank (an all-gather of
// the partitions), and every rank writes the parts out (writePulledParts).
spcclResult_t pull(const Context& c, const SparseSet& mine, SparseSet* result) {
  const int n = c.ctx.nranks(), r = c.ctx.rank();
  SparseSet& ownGlobal = c.workspace.currentSet;  // (the own part is summed already)
  std::vector<unsigned char>& encoded = c.workspace.encodedSet;
  const uint8_t flags =
      encodePullMessage(c, mine, 0, c.partition.partSize(r), &ownGlobal, &encoded);
  std::vector<Outgoing> sends;
  std::vector<Incoming> incoming;
  const uint64_t total = totalNnz(c);
  for (int q : peersInTurn(r, n)) {
    sends.push_back({q, encoded.data(), encoded.size(), flags});
    incoming.push_back(
        {q,
         messageCapacity(total, c.partition.partSize(q), c.valueBytes, c.options.allowedEncodings),
         {},
         0});
  }
  SPCCL_CHECK(exchangeWithPeerBuffers(c, sends, incoming));
  std::vector<uint64_t> aggregateSizes(n);
  aggregateSizes[r] = mine.size();
  // Each part in global indices, by owner (the push's sets are free now).
  std::vector<SparseSet>& parts = c.workspace.peerSets;
  parts.resize(n);
  std::vector<const SparseSet*> ascending{&ownGlobal};
  std::vector<const SparseSet*> unordered;
  for (Incoming& m : incoming) {
    const MessageBuffer& data = c.workspace.peerReceives[m.peer];
    SparseSet& part = parts[m.peer];
    SPCCL_CHECK(decodePullMessage(c, data.data(), data.size(), m.flags, m.peer, 0,
                                  c.partition.partSize(m.peer), &part));
    aggregateSizes[m.peer] = part.size();
    if ((m.flags & kGlobalIndices) != 0)
      ascending.push_back(&part);
    else
      unordered.push_back(&part);
  }
  if (c.report) c.report->pullImbalance = imbalanceRatio(aggregateSizes);
  return writePulledParts(c, ascending, unordered, result);
}

}  // namespace
}  // namespace bp

spcclResult_t balancedParallelism(CollContext& ctx, const SparseInput& in,
                                  const SparseRunOptions& options, SparseSet* result,
                                  SparseRunReport* report) {
  std::vector<uint64_t> nnzStorage;
  const uint64_t* rankNnz = nullptr;
  SPCCL_CHECK(rankNonZeros(ctx, in, &nnzStorage, &rankNnz));
  uint64_t total = 0;
  for (int q = 0; q < ctx.nranks(); ++q) total += rankNnz[q];
  const bool denseRanges = bp::useDenseRanges(total, ctx.nranks(), in.universe);
  std::shared_ptr<const IndexPartition> partition =
      makePartition(denseRanges ? PartitionKind::Contiguous : options.partition, in.universe,
                    ctx.nranks(), options.seed);
  SparseWorkspace local;
  SparseWorkspace& workspace = in.workspace != nullptr ? *in.workspace : local;
  const bp::Context c{ctx,   workspace, in, options, *partition, rankNnz, spcclTypeSize(in.type),
                      report};
  if (denseRanges) return bp::runDenseRanges(c, result);
  const int pieces = bp::pipelinePieces(c);
  if (pieces > 1) return bp::runPipelined(c, pieces, result);
  SparseSet& own = workspace.currentSet;
  SparseSet& aggregated = workspace.mergedSet;
  SPCCL_CHECK(bp::push(c, &own, &workspace.peerSets));
  bp::aggregate(c, own, workspace.peerSets, c.partition.partSize(ctx.rank()), &aggregated);
  return bp::pull(c, aggregated, result);
}

}  // namespace spccl::sparse
