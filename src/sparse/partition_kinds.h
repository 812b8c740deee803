// Constructors of the three IndexPartition kinds (index_partition.h), kept
// out of the public interface; makePartition() picks and caches.
#pragma once

#include <cstdint>
#include <memory>

#include "sparse/index_partition.h"

namespace spccl::sparse {

std::shared_ptr<const IndexPartition> makeZenHashPartition(uint64_t universe, int parts,
                                                           uint64_t seed);
std::shared_ptr<const IndexPartition> makePermutationPartition(uint64_t universe, int parts,
                                                               uint64_t seed);
std::shared_ptr<const IndexPartition> makeContiguousPartition(uint64_t universe, int parts);

}  // namespace spccl::sparse
