// The partitions' owner and position bits pinned (src/sparse/index_partition.h):
// values computed by the partitions as they were before their math moved
// to kernels/device_sparse/partition_math.h (main a2b7c41, when
// FeistelPermutation and EvenRanges had code of their own). The host and
// the device share that code now, so DevicePartitionMath.* compares it
// with itself for these kinds; this table is what catches a change of the
// bits themselves (a changed permutation moves every pair to another owner
// or position: the sparse results stay right, but ranks of two versions
// would disagree, and pinned figures would move).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "sparse/index_partition.h"
#include "sparse/partition_kinds.h"

namespace spccl::sparse {
namespace {

struct Pinned {
  int kind;  // 0 ZenHash, 1 Permutation, 2 Contiguous
  uint64_t universe;
  int parts;
  uint64_t seed;
  uint64_t index;
  int owner;
  uint64_t position;
};

constexpr Pinned kPinned[] = {
    {0, 1000u, 3, 7u, 0u, 1, 0u},                                            // Zen
    {0, 1000u, 3, 7u, 1u, 2, 0u},                                            // Zen
    {0, 1000u, 3, 7u, 333u, 0, 106u},                                        // Zen
    {0, 1000u, 3, 7u, 500u, 0, 169u},                                        // Zen
    {0, 1000u, 3, 7u, 998u, 2, 336u},                                        // Zen
    {0, 1000u, 3, 7u, 999u, 1, 329u},                                        // Zen
    {0, 1000u, 3, 7u, 636u, 1, 205u},                                        // Zen
    {0, 1000u, 3, 7u, 384u, 1, 124u},                                        // Zen
    {1, 1000u, 3, 7u, 0u, 2, 186u},                                          // Perm
    {1, 1000u, 3, 7u, 1u, 0, 82u},                                           // Perm
    {1, 1000u, 3, 7u, 333u, 2, 308u},                                        // Perm
    {1, 1000u, 3, 7u, 500u, 0, 283u},                                        // Perm
    {1, 1000u, 3, 7u, 998u, 0, 171u},                                        // Perm
    {1, 1000u, 3, 7u, 999u, 0, 254u},                                        // Perm
    {1, 1000u, 3, 7u, 636u, 2, 250u},                                        // Perm
    {1, 1000u, 3, 7u, 384u, 2, 87u},                                         // Perm
    {2, 1000u, 3, 7u, 0u, 0, 0u},                                            // Contig
    {2, 1000u, 3, 7u, 1u, 0, 1u},                                            // Contig
    {2, 1000u, 3, 7u, 333u, 1, 0u},                                          // Contig
    {2, 1000u, 3, 7u, 500u, 1, 167u},                                        // Contig
    {2, 1000u, 3, 7u, 998u, 2, 332u},                                        // Contig
    {2, 1000u, 3, 7u, 999u, 2, 333u},                                        // Contig
    {2, 1000u, 3, 7u, 636u, 1, 303u},                                        // Contig
    {2, 1000u, 3, 7u, 384u, 1, 51u},                                         // Contig
    {0, 1048576u, 4, 42u, 0u, 2, 0u},                                        // Zen
    {0, 1048576u, 4, 42u, 1u, 0, 0u},                                        // Zen
    {0, 1048576u, 4, 42u, 349525u, 1, 87869u},                               // Zen
    {0, 1048576u, 4, 42u, 524288u, 3, 131411u},                              // Zen
    {0, 1048576u, 4, 42u, 1048574u, 0, 261690u},                             // Zen
    {0, 1048576u, 4, 42u, 1048575u, 3, 261944u},                             // Zen
    {0, 1048576u, 4, 42u, 667275u, 2, 166887u},                              // Zen
    {0, 1048576u, 4, 42u, 403298u, 2, 100537u},                              // Zen
    {1, 1048576u, 4, 42u, 0u, 2, 132176u},                                   // Perm
    {1, 1048576u, 4, 42u, 1u, 2, 190558u},                                   // Perm
    {1, 1048576u, 4, 42u, 349525u, 2, 18319u},                               // Perm
    {1, 1048576u, 4, 42u, 524288u, 0, 74888u},                               // Perm
    {1, 1048576u, 4, 42u, 1048574u, 1, 57825u},                              // Perm
    {1, 1048576u, 4, 42u, 1048575u, 1, 201725u},                             // Perm
    {1, 1048576u, 4, 42u, 667275u, 1, 141620u},                              // Perm
    {1, 1048576u, 4, 42u, 403298u, 3, 257614u},                              // Perm
    {2, 1048576u, 4, 42u, 0u, 0, 0u},                                        // Contig
    {2, 1048576u, 4, 42u, 1u, 0, 1u},                                        // Contig
    {2, 1048576u, 4, 42u, 349525u, 1, 87381u},                               // Contig
    {2, 1048576u, 4, 42u, 524288u, 2, 0u},                                   // Contig
    {2, 1048576u, 4, 42u, 1048574u, 3, 262142u},                             // Contig
    {2, 1048576u, 4, 42u, 1048575u, 3, 262143u},                             // Contig
    {2, 1048576u, 4, 42u, 667275u, 2, 142987u},                              // Contig
    {2, 1048576u, 4, 42u, 403298u, 1, 141154u},                              // Contig
    {1, 4294967301u, 7, 11400714819323198485u, 0u, 3, 597503335u},           // Perm
    {1, 4294967301u, 7, 11400714819323198485u, 1u, 6, 535199259u},           // Perm
    {1, 4294967301u, 7, 11400714819323198485u, 1431655767u, 3, 402729597u},  // Perm
    {1, 4294967301u, 7, 11400714819323198485u, 2147483650u, 1, 420753732u},  // Perm
    {1, 4294967301u, 7, 11400714819323198485u, 4294967299u, 3, 134273073u},  // Perm
    {1, 4294967301u, 7, 11400714819323198485u, 4294967300u, 2, 442851656u},  // Perm
    {1, 4294967301u, 7, 11400714819323198485u, 2733161009u, 1, 326801554u},  // Perm
    {1, 4294967301u, 7, 11400714819323198485u, 1651910500u, 4, 549050794u},  // Perm
    {2, 4294967301u, 7, 11400714819323198485u, 0u, 0, 0u},                   // Contig
    {2, 4294967301u, 7, 11400714819323198485u, 1u, 0, 1u},                   // Contig
    {2, 4294967301u, 7, 11400714819323198485u, 1431655767u, 2, 204522253u},  // Contig
    {2, 4294967301u, 7, 11400714819323198485u, 2147483650u, 3, 306783379u},  // Contig
    {2, 4294967301u, 7, 11400714819323198485u, 4294967299u, 6, 613566756u},  // Contig
    {2, 4294967301u, 7, 11400714819323198485u, 4294967300u, 6, 613566757u},  // Contig
    {2, 4294967301u, 7, 11400714819323198485u, 2733161009u, 4, 278893980u},  // Contig
    {2, 4294967301u, 7, 11400714819323198485u, 1651910500u, 2, 424776986u},  // Contig
    {0, 17u, 2, 1u, 0u, 1, 0u},                                              // Zen
    {0, 17u, 2, 1u, 1u, 0, 0u},                                              // Zen
    {0, 17u, 2, 1u, 5u, 0, 3u},                                              // Zen
    {0, 17u, 2, 1u, 8u, 1, 3u},                                              // Zen
    {0, 17u, 2, 1u, 15u, 1, 8u},                                             // Zen
    {0, 17u, 2, 1u, 16u, 1, 9u},                                             // Zen
    {0, 17u, 2, 1u, 10u, 1, 4u},                                             // Zen
    {0, 17u, 2, 1u, 6u, 0, 4u},                                              // Zen
    {1, 17u, 2, 1u, 0u, 0, 3u},                                              // Perm
    {1, 17u, 2, 1u, 1u, 1, 7u},                                              // Perm
    {1, 17u, 2, 1u, 5u, 0, 6u},                                              // Perm
    {1, 17u, 2, 1u, 8u, 0, 2u},                                              // Perm
    {1, 17u, 2, 1u, 15u, 0, 0u},                                             // Perm
    {1, 17u, 2, 1u, 16u, 0, 1u},                                             // Perm
    {1, 17u, 2, 1u, 10u, 0, 4u},                                             // Perm
    {1, 17u, 2, 1u, 6u, 1, 2u},                                              // Perm
    {2, 17u, 2, 1u, 0u, 0, 0u},                                              // Contig
    {2, 17u, 2, 1u, 1u, 0, 1u},                                              // Contig
    {2, 17u, 2, 1u, 5u, 0, 5u},                                              // Contig
    {2, 17u, 2, 1u, 8u, 1, 0u},                                              // Contig
    {2, 17u, 2, 1u, 15u, 1, 7u},                                             // Contig
    {2, 17u, 2, 1u, 16u, 1, 8u},                                             // Contig
    {2, 17u, 2, 1u, 10u, 1, 2u},                                             // Contig
    {2, 17u, 2, 1u, 6u, 0, 6u},                                              // Contig
};

std::shared_ptr<const IndexPartition> partitionOf(const Pinned& p) {
  switch (p.kind) {
    case 0:
      return makeZenHashPartition(p.universe, p.parts, p.seed);
    case 1:
      return makePermutationPartition(p.universe, p.parts, p.seed);
    default:
      return makeContiguousPartition(p.universe, p.parts);
  }
}

TEST(PartitionBits, OwnersAndPositionsAsPinned) {
  for (const Pinned& p : kPinned) {
    SCOPED_TRACE(testing::Message() << "kind " << p.kind << " M " << p.universe << " n " << p.parts
                                    << " seed " << p.seed << " index " << p.index);
    const std::shared_ptr<const IndexPartition> partition = partitionOf(p);
    EXPECT_EQ(partition->owner(p.index), p.owner);
    EXPECT_EQ(partition->position(p.index), p.position);
    EXPECT_EQ(partition->index(p.owner, p.position), p.index);
  }
}

}  // namespace
}  // namespace spccl::sparse
