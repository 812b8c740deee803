// Block sparse, after OmniReduce (Zen Table 3, [24]): the tensor is cut into
// 256-element blocks and only blocks with a non-zero are sent, without
// indices inside a block. Owners hold an even, contiguous share of the
// blocks (point-to-point, one-shot, parallelism, imbalanced): skewed
// gradients put most non-zero blocks on one owner, the weakness Zen's
// section 2.4 measures. Push to owners, owners sum in rank order, then an
// all-gather of every owner's non-zero blocks.
//
// Message: u64 block count, the block ids (u64, ascending), then each
// block's 256 values (the tail block zero-padded). Frame flags 0: this
// format is not one of the set encodings.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "base/check.h"
#include "kernels/sparse_kernels.h"
#include "sparse/ordered_dense_allreduce.h"
#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_messages.h"
#include "sparse/sparse_stats.h"

namespace spccl::sparse {

namespace {

constexpr uint64_t kBlockElements = 256;  // OmniReduce's block size

struct BlockLayout {
  uint64_t universe, blocks;
  int nranks;
  size_t valueBytes;
  size_t blockBytes() const { return kBlockElements * valueBytes; }
  uint64_t firstBlock(int p) const {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(blocks) * p / nranks);
  }
  uint64_t ownedBlocks(int p) const { return firstBlock(p + 1) - firstBlock(p); }
  size_t messageBytes(uint64_t count) const { return 8 + count * (8 + blockBytes()); }
};

// Blocks with their dense values; ids ascending.
struct BlockSet {
  std::vector<uint64_t> ids;
  std::vector<unsigned char> values;  // ids.size() * blockBytes
};

void serialize(const BlockLayout& L, const BlockSet& set, size_t first, size_t count,
               std::vector<unsigned char>* out) {
  out->resize(L.messageBytes(count));
  uint64_t c = count;
  std::memcpy(out->data(), &c, 8);
  if (count == 0) return;  // empty vectors may have no storage: no memcpy from NULL
  std::memcpy(out->data() + 8, set.ids.data() + first, count * 8);
  std::memcpy(out->data() + 8 + count * 8, set.values.data() + first * L.blockBytes(),
              count * L.blockBytes());
}

spcclResult_t deserialize(const BlockLayout& L, const MessageBuffer& in, int peer,
                          uint64_t firstBlock, uint64_t ownedBlocks, BlockSet* out) {
  uint64_t count = 0;
  if (in.size() >= 8) std::memcpy(&count, in.data(), 8);
  if (in.size() < 8 || count > ownedBlocks || in.size() != L.messageBytes(count))
    return SPCCL_FAIL(spcclRemoteError, "malformed block-sparse message from rank %d (%zu bytes)",
                      peer, in.size());
  out->ids.resize(count);
  if (count > 0) std::memcpy(out->ids.data(), in.data() + 8, count * 8);
  for (uint64_t id : out->ids)
    if (id < firstBlock || id >= firstBlock + ownedBlocks)
      return SPCCL_FAIL(spcclRemoteError,
                        "block-sparse message from rank %d names block %lu "
                        "outside [%lu, %lu)",
                        peer, static_cast<unsigned long>(id),
                        static_cast<unsigned long>(firstBlock),
                        static_cast<unsigned long>(firstBlock + ownedBlocks));
  out->values.assign(in.data() + 8 + count * 8, in.data() + in.size());
  return spcclSuccess;
}

// This rank's non-zero blocks, from its sorted non-zeros.
BlockSet localBlocks(const BlockLayout& L, const SparseInput& in) {
  BlockSet set;
  for (size_t i = 0; i < in.nnz;) {
    const uint64_t block = in.indices[i] / kBlockElements;
    set.ids.push_back(block);
    set.values.resize(set.ids.size() * L.blockBytes(), 0);
    unsigned char* base = set.values.data() + (set.ids.size() - 1) * L.blockBytes();
    const unsigned char* values = static_cast<const unsigned char*>(in.values);
    for (; i < in.nnz && in.indices[i] / kBlockElements == block; ++i)
      std::memcpy(base + (in.indices[i] % kBlockElements) * L.valueBytes, values + i * L.valueBytes,
                  L.valueBytes);
  }
  return set;
}

// Adds a set's blocks into a buffer whose element 0 is block `base`'s first,
// clipping at the tensor's end.
void addBlocks(const CollContext& ctx, spcclDataType_t type, const BlockLayout& L,
               const BlockSet& set, uint64_t base, unsigned char* buffer) {
  for (size_t i = 0; i < set.ids.size(); ++i) {
    const uint64_t start = set.ids[i] * kBlockElements;
    const size_t length = static_cast<size_t>(std::min(kBlockElements, L.universe - start));
    unsigned char* dst = buffer + (set.ids[i] - base) * L.blockBytes();
    kernels::reduce(ctx.kernels(), type, spcclSum, dst, dst, set.values.data() + i * L.blockBytes(),
                    length);
  }
}

// Appends the non-zeros of a set's blocks (ids ascending, after every block
// already in *result) as global indices, clipping at the tensor's end.
void appendNonZeros(spcclDataType_t type, const BlockLayout& L, const BlockSet& set,
                    SparseSet* result) {
  for (size_t i = 0; i < set.ids.size(); ++i) {
    const uint64_t start = set.ids[i] * kBlockElements;
    const size_t length = static_cast<size_t>(std::min(kBlockElements, L.universe - start));
    const size_t at = result->size();
    result->positions.resize(at + length);
    result->values.resize((at + length) * L.valueBytes);
    const size_t found = kernels::extractNonZeros(
        type, set.values.data() + i * L.blockBytes(), length, result->positions.data() + at,
        result->values.data() + at * L.valueBytes, length);
    for (size_t j = at; j < at + found; ++j) result->positions[j] += start;
    result->positions.resize(at + found);
    result->values.resize((at + found) * L.valueBytes);
  }
}

// Writes the owners' blocks (parts in rank order: ascending block ids)
// straight into the dense output, zeros between them, clipping the tail
// block: the values extraction and densification would give, without the
// pairs in between (a block's absent elements are +0 either way).
void writeDense(const BlockLayout& L, const std::vector<BlockSet>& parts, void* output) {
  auto* out = static_cast<unsigned char*>(output);
  uint64_t next = 0;  // the first element not written yet
  for (const BlockSet& part : parts)
    for (size_t i = 0; i < part.ids.size(); ++i) {
      const uint64_t start = part.ids[i] * kBlockElements;
      const size_t length = static_cast<size_t>(std::min(kBlockElements, L.universe - start));
      std::memset(out + next * L.valueBytes, 0, (start - next) * L.valueBytes);
      std::memcpy(out + start * L.valueBytes, part.values.data() + i * L.blockBytes(),
                  length * L.valueBytes);
      next = start + length;
    }
  std::memset(out + next * L.valueBytes, 0, (L.universe - next) * L.valueBytes);
}

// This rank's non-zero blocks (its indices are sorted).
uint64_t countBlocks(const SparseInput& in) {
  if (in.nnz == 0) return 0;
  // Each pair compared with the one before, not with a carried "last
  // block", so the loop has no dependency between iterations.
  uint64_t blocks = 1;
  for (size_t i = 1; i < in.nnz; ++i)
    blocks += in.indices[i] / kBlockElements != in.indices[i - 1] / kBlockElements;
  return blocks;
}

// Whether the block messages would cost at least 3/4 of the dense
// fallback's bytes (ordered_dense_allreduce.h; a uniform spread reaches it
// near 1/256 density, where 3/4 of the blocks hold a non-zero): the push
// sends each rank's blocks, the pull at least the largest rank's, each
// block with its id, and the owners' sums touch every received block, so
// the schedule then costs more CPU than the dense all-reduce for little
// saving. The fallback adds in the owners' rank order: the bits are the
// schedule's. When the nnz bound already rules it out no round is spent;
// else the ranks agree on their block counts, so every rank decides alike.
spcclResult_t preferDense(CollContext& ctx, const SparseInput& in, const BlockLayout& L,
                          const uint64_t* rankNnz, bool* dense) {
  const int n = L.nranks;
  *dense = false;
  if (n < 2) return spcclSuccess;
  const unsigned __int128 threshold =
      static_cast<unsigned __int128>(3) * denseFallbackBytes(L.universe, L.valueBytes, n) / 4;
  auto blockBytes = [&](const uint64_t* blocks) {
    unsigned __int128 sum = 0;
    uint64_t largest = 0;
    for (int q = 0; q < n; ++q) {
      sum += blocks[q];
      largest = std::max(largest, blocks[q]);
    }
    // Per rank: (n-1)/n of the push (the mean rank's blocks) and of the pull.
    return (sum / static_cast<unsigned>(n) + largest) * (8 + L.blockBytes()) *
           static_cast<unsigned>(n - 1) / static_cast<unsigned>(n);
  };
  std::vector<uint64_t> bound(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q) bound[static_cast<size_t>(q)] = std::min(rankNnz[q], L.blocks);
  if (blockBytes(bound.data()) < threshold) return spcclSuccess;
  std::vector<uint64_t> blocks(static_cast<size_t>(n));
  const uint64_t mine = countBlocks(in);
  SPCCL_CHECK(allGatherSmall(ctx, &mine, sizeof(mine), blocks.data()));
  *dense = blockBytes(blocks.data()) >= threshold;
  return spcclSuccess;
}

}  // namespace

spcclResult_t blockSparse(CollContext& ctx, const SparseInput& in, const SparseRunOptions&,
                          SparseSet* result, SparseRunReport* report) {
  std::vector<uint64_t> nnzStorage;
  const uint64_t* rankNnz = nullptr;
  SPCCL_CHECK(rankNonZeros(ctx, in, &nnzStorage, &rankNnz));
  const int n = ctx.nranks(), r = ctx.rank();
  const BlockLayout L{in.universe, (in.universe + kBlockElements - 1) / kBlockElements, n,
                      spcclTypeSize(in.type)};
  uint64_t total = 0;
  for (int q = 0; q < n; ++q) total += rankNnz[q];
  bool dense = false;
  SPCCL_CHECK(preferDense(ctx, in, L, rankNnz, &dense));
  if (dense) return denseFallback(ctx, in, SumOrder::RankOrder, result, report);

  // Push: each owner's share of this rank's non-zero blocks.
  BlockSet mine = localBlocks(L, in);
  std::vector<size_t> split(n + 1, mine.ids.size());
  for (int p = n - 1; p >= 0; --p)
    split[p] = static_cast<size_t>(
        std::lower_bound(mine.ids.begin(), mine.ids.end(), L.firstBlock(p)) - mine.ids.begin());
  std::vector<uint64_t> pushed(n);
  std::vector<std::vector<unsigned char>> encoded(n);
  std::vector<Outgoing> sends;
  std::vector<Incoming> incoming;
  for (int q : peersInTurn(r, n)) {
    serialize(L, mine, split[q], split[q + 1] - split[q], &encoded[q]);
    sends.push_back({q, encoded[q].data(), encoded[q].size(), 0});
    incoming.push_back({q, L.messageBytes(std::min(rankNnz[q], L.ownedBlocks(r))), {}, 0});
  }
  for (int p = 0; p < n; ++p) pushed[p] = split[p + 1] - split[p];
  if (report) report->pushImbalance = imbalanceRatio(pushed);
  SPCCL_CHECK(exchangeMessages(ctx, sends, incoming, report));

  // Owner: sum the blocks in rank order, keep the non-zero ones.
  const uint64_t first = L.firstBlock(r), owned = L.ownedBlocks(r);
  std::vector<unsigned char> accumulator(owned * L.blockBytes(), 0);
  std::vector<BlockSet> received(n);
  for (Incoming& m : incoming)
    SPCCL_CHECK(deserialize(L, m.data, m.peer, first, owned, &received[m.peer]));
  BlockSet ownPart;
  ownPart.ids.assign(mine.ids.begin() + static_cast<ptrdiff_t>(split[r]),
                     mine.ids.begin() + static_cast<ptrdiff_t>(split[r + 1]));
  ownPart.values.assign(
      mine.values.begin() + static_cast<ptrdiff_t>(split[r] * L.blockBytes()),
      mine.values.begin() + static_cast<ptrdiff_t>(split[r + 1] * L.blockBytes()));
  for (int q = 0; q < n; ++q)
    addBlocks(ctx, in.type, L, q == r ? ownPart : received[q], first, accumulator.data());
  BlockSet aggregate;
  for (uint64_t b = 0; b < owned; ++b) {
    const unsigned char* block = accumulator.data() + b * L.blockBytes();
    if (kernels::countNonZeros(in.type, block, kBlockElements) == 0) continue;
    aggregate.ids.push_back(first + b);
    aggregate.values.insert(aggregate.values.end(), block, block + L.blockBytes());
  }

  // Pull: every owner's non-zero blocks to everyone.
  std::vector<unsigned char> message;
  serialize(L, aggregate, 0, aggregate.ids.size(), &message);
  sends.clear();
  incoming.clear();
  for (int q : peersInTurn(r, n)) {
    sends.push_back({q, message.data(), message.size(), 0});
    incoming.push_back({q, L.messageBytes(std::min(total, L.ownedBlocks(q))), {}, 0});
  }
  SPCCL_CHECK(exchangeMessages(ctx, sends, incoming, report));
  // Owners' block ranges ascend with their rank: joined in rank order, the
  // result is sorted.
  std::vector<BlockSet> parts(n);
  for (Incoming& m : incoming)
    SPCCL_CHECK(deserialize(L, m.data, m.peer, L.firstBlock(m.peer), L.ownedBlocks(m.peer),
                            &parts[m.peer]));
  parts[r] = std::move(aggregate);
  std::vector<uint64_t> pulled(n);
  for (int q = 0; q < n; ++q) pulled[q] = parts[q].ids.size();
  if (report) report->pullImbalance = imbalanceRatio(pulled);
  if (in.denseOutput != nullptr) {
    writeDense(L, parts, in.denseOutput);
    result->inDenseOutput = true;
    return spcclSuccess;
  }
  result->positions.clear();
  result->values.clear();
  for (int q = 0; q < n; ++q) appendNonZeros(in.type, L, parts[q], result);
  return spcclSuccess;
}

}  // namespace spccl::sparse
