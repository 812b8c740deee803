// The dense fallback of the sparse schedules (issue "Network-bound speed",
// part 3): past a density where a schedule's sets are nearly the whole
// tensor, it sends more bytes and spends several times the CPU of a dense
// all-reduce. This is a direct reduce-scatter (rank q owns the even range
// q of the tensor and receives every rank's slice of it) and all-gather,
// the dense ring's traffic, 2 (n-1)/n of the tensor per rank, in two
// rounds. Unlike the ring, the owner adds the n slices in the order the
// sparse schedule adds its sets, so the switch leaves the result's bits
// as they were: an absent position is +0 in a slice and x + (+0) = x for
// every x but -0.0, which no set holds (extraction drops it as a zero);
// each sum starts from +0, so a -0.0 in a dense input adds as the sparse
// schedule's absent pair does.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/coll_context.h"
#include "sparse/sparse_algorithms.h"
#include "spccl.h"

namespace spccl::sparse {

// The order of the additions, that of the schedule the fallback stands in
// for.
enum class SumOrder : uint8_t {
  // (((0 + x_0) + x_1) + x_2) ...: AGsparse's and block sparse's owners.
  RankOrder,
  // Hierarchical Centralization's recursive doubling: with p the largest
  // power of two <= n, leaf i < p is x_i + x_{i+p} (the folded rank, when
  // i + p < n), then pairs of groups add lower + higher, stage by stage.
  Tree,
};

// The sum of every rank's `input` (count values of `type`) into `output`,
// bitwise identical on every rank. input may equal output. Uses the
// workspace's slice buffers; adds the bytes moved to *report.
spcclResult_t orderedDenseAllReduce(CollContext& ctx, spcclDataType_t type, const void* input,
                                    void* output, size_t count, SumOrder order,
                                    SparseWorkspace* workspace, SparseRunReport* report);

// The same for a schedule's input: from the caller's dense input when it
// has one (else the pairs densified), into its dense output (else the
// workspace's tensor, whose non-zeros become *result).
spcclResult_t denseFallback(CollContext& ctx, const SparseInput& in, SumOrder order,
                            SparseSet* result, SparseRunReport* report);

// The bytes per rank of the fallback: 2 (n-1)/n of the tensor. Schedules
// compare their own estimate with it (the same agreed figures on every
// rank, so all take the same path).
uint64_t denseFallbackBytes(uint64_t universe, size_t valueBytes, int nranks);

}  // namespace spccl::sparse
