// What the two schedules of Balanced Parallelism share (balanced_parallelism.cc:
// the keyed partition and sparse owners; bp_dense_ranges.cc: contiguous
// ranges and dense owners past the break-even): the call's context and the
// exchange through the workspace's per-peer receive buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

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

}  // namespace spccl::sparse::bp
