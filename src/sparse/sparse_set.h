// A set of (position, value) pairs: what the sparse schedules exchange,
// merge and deliver. Positions are partition-local inside Balanced
// Parallelism and global indices everywhere else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spccl::sparse {

struct SparseSet {
  std::vector<uint64_t> positions;    // unique, ascending (unless !ascending)
  std::vector<unsigned char> values;  // positions.size() * valueBytes
  // false only for a result the caller allowed to stay unsorted
  // (SparseInput::sortedResult): disjoint runs in partition order.
  bool ascending = true;
  // true: the schedule wrote the result straight into the caller's dense
  // output (SparseInput::denseOutput); positions and values are unused.
  bool inDenseOutput = false;
  // With inDenseOutput: the output's non-zeros when the schedule counted
  // them as it wrote (SIZE_MAX: unknown, the caller counts them, a pass
  // over the whole output).
  size_t denseOutputNnz = SIZE_MAX;
  size_t size() const { return positions.size(); }
};

}  // namespace spccl::sparse
