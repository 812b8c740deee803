// What the two schedules of Balanced Parallelism share (balanced_parallelism.cc:
// the keyed partition and sparse owners; bp_dense_ranges.cc: contiguous
// ranges and dense owners past the break-even): the call's context and the
// exchange through the workspace's per-peer receive buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_messages.h"

namespace spccl::sparse::bp {

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

inline uint64_t totalNnz(const Context& c) {
  uint64_t total = 0;
  for (int r = 0; r < c.ctx.nranks(); ++r) total += c.rankNnz[r];
  return total;
}

// Whether the call runs over dense ranges (bp_dense_ranges.cc): once the
// ranks hold on average M/8 non-zeros each (dense_stage.h's break-even),
// each push and pull message is near its dense size whatever the
// partition, so the keyed partition's balance buys little, while its
// scattered indices cost a permutation and a random access per element of
// the (by then near-dense) result. Decided from the agreed counts, so every
// rank takes the same schedule.
inline bool useDenseRanges(uint64_t totalNnz, int nranks, uint64_t universe) {
  return nranks > 1 && universe > 0 &&
         static_cast<unsigned __int128>(totalNnz) * 8 >=
             static_cast<unsigned __int128>(universe) * static_cast<unsigned>(nranks);
}

// exchangeMessages with each receive in the workspace's buffer for its
// peer, lent for the exchange: the buffers keep their pages between calls.
spcclResult_t exchangeWithPeerBuffers(const Context& c, std::span<const Outgoing> sends,
                                      std::span<Incoming> incoming);

// The dense-range schedule; c.partition must be the Contiguous partition.
spcclResult_t runDenseRanges(const Context& c, SparseSet* result);

// This rank's pairs on the host: c.in's, or where they are not there yet
// (c.in.pairSource), fetched now (fetchInsideCall).
spcclResult_t inputPairs(const Context& c, const uint64_t** indices, const unsigned char** values);

// This rank's pairs by owner into *out, from c.in.bucketer where the
// caller gave one and it made them, else bucketByOwner; *sorted: every
// bucket is ascending by position already (no sortByPosition needed).
spcclResult_t bucketOwnPairs(const Context& c, Buckets* out, bool* sorted);

// The keyed-partition schedule's steps (balanced_parallelism.cc), shared
// by its one-message form there and its pieces (bp_pipeline.cc). Sets of
// an owner's part hold positions counted from `first`, the first position
// of the piece (0: the whole part), over `positions` positions.

// The owner's sum of own (at rank r) and parts[q] (q != r), in rank order.
void aggregate(const Context& c, const SparseSet& own, const std::vector<SparseSet>& parts,
               uint64_t positions, SparseSet* out);

// Frame flag of a pull message whose pairs are over global indices [0, M),
// ascending, instead of positions in the owner's part I_p.
constexpr uint8_t kGlobalIndices = 0x80;

// This rank's pull message of its aggregate `mine` into *out; returns the
// frame flags. *global gets the pairs over global indices, ascending.
uint8_t encodePullMessage(const Context& c, const SparseSet& mine, uint64_t first,
                          uint64_t positions, SparseSet* global, std::vector<unsigned char>* out);

// Decodes owner's pull message into *part, over global indices (ascending
// when flags carry kGlobalIndices).
spcclResult_t decodePullMessage(const Context& c, const unsigned char* data, size_t bytes,
                                uint8_t flags, int owner, uint64_t first, uint64_t positions,
                                SparseSet* part);

// Writes the pulled parts (global indices, disjoint; `ascending` ones
// sorted) into the caller's dense output or *result.
spcclResult_t writePulledParts(const Context& c, std::span<const SparseSet* const> ascending,
                               std::span<const SparseSet* const> unordered, SparseSet* result);

// How many pieces the keyed-partition schedule cuts each message into
// (bp_pipeline.cc), from agreed figures only; 1: not cut.
int pipelinePieces(const Context& c);

// The keyed-partition schedule in `pieces` (> 1) pieces per message.
spcclResult_t runPipelined(const Context& c, int pieces, SparseSet* result);

}  // namespace spccl::sparse::bp
