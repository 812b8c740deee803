// Moving a [tokens x hidden] tensor's kept rows in and out of one packed
// buffer, so that the all-reduce sees a contiguous tensor of kept*hidden
// elements (AccTFM section 4.3.1: only significant tokens travel), and the
// prune policy for the rows that stay behind.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "spccl.h"

namespace spccl::compress {

// The kept token indices (mask byte != 0), ascending.
std::vector<size_t> keptTokens(const unsigned char* mask, size_t tokens);

// packed row i = tensor row rows[i]; rows are rowBytes long.
void gatherRows(const void* tensor, std::span<const size_t> rows, size_t rowBytes, void* packed);
// tensor row rows[i] = packed row i.
void scatterRows(const void* packed, std::span<const size_t> rows, size_t rowBytes, void* tensor);

// spcclPruneZero: every row whose mask byte is 0 set to zero bytes (+0 in
// every float type). spcclPruneKeepLocal: nothing to do.
void applyPrunePolicy(spcclPrunePolicy_t policy, const unsigned char* mask, size_t tokens,
                      size_t rowBytes, void* tensor);

}  // namespace spccl::compress
