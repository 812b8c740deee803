// bucketByOwner (src/sparse/bucketing.h): both methods give each owner
// exactly the (position, value) multiset a brute force owner(idx) loop
// gives, over every partition kind; Zen's hierarchical hashing also under
// forced collisions (indices whose h1..h3 all pick one slot), serial-memory
// overflow and growth, and two concurrent writers. Last, the push
// positions decode back to the pushed indices through the same partition
// and a real encode/decode, which is what the pull side relies on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "partition_shapes.h"
#include "sparse/bucketing.h"
#include "sparse/bucketing_methods.h"
#include "sparse/encoding.h"
#include "sparse/index_partition.h"

namespace spccl::sparse {
namespace {

using Entry = std::pair<uint64_t, uint32_t>;  // (position, value)

// Unique indices in shuffled order, with 0 and M-1 always among them.
std::vector<uint64_t> randomIndices(uint64_t universe, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> indices = {0, universe - 1};
  std::vector<bool> taken(universe, false);
  taken[0] = taken[universe - 1] = true;
  while (indices.size() < count) {
    const uint64_t idx = rng() % universe;
    if (!taken[idx]) {
      taken[idx] = true;
      indices.push_back(idx);
    }
  }
  indices.resize(std::min(indices.size(), count));
  std::shuffle(indices.begin(), indices.end(), rng);
  return indices;
}

// Value i of the input is 1000 + i, so a value names its entry.
std::vector<uint32_t> valuesFor(size_t count) {
  std::vector<uint32_t> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<uint32_t>(1000 + i);
  return values;
}

std::vector<std::vector<Entry>> bruteForce(const IndexPartition& partition,
                                           const std::vector<uint64_t>& indices,
                                           const std::vector<uint32_t>& values) {
  std::vector<std::vector<Entry>> buckets(static_cast<size_t>(partition.parts()));
  for (size_t i = 0; i < indices.size(); ++i) {
    buckets[static_cast<size_t>(partition.owner(indices[i]))].push_back(
        {partition.position(indices[i]), values[i]});
  }
  return buckets;
}

std::vector<Entry> bucketEntries(const Buckets& buckets, int p) {
  std::vector<Entry> entries;
  for (size_t k = buckets.offsets[static_cast<size_t>(p)];
       k < buckets.offsets[static_cast<size_t>(p) + 1]; ++k) {
    uint32_t value;
    std::memcpy(&value, &buckets.values[k * sizeof(uint32_t)], sizeof(value));
    entries.push_back({buckets.positions[k], value});
  }
  return entries;
}

void expectSameMultisets(const IndexPartition& partition, const std::vector<uint64_t>& indices,
                         const std::vector<uint32_t>& values, const Buckets& buckets) {
  const size_t parts = static_cast<size_t>(partition.parts());
  ASSERT_EQ(buckets.offsets.size(), parts + 1);
  ASSERT_EQ(buckets.offsets[0], 0u);
  ASSERT_EQ(buckets.offsets[parts], indices.size());
  ASSERT_EQ(buckets.positions.size(), indices.size());
  ASSERT_EQ(buckets.values.size(), indices.size() * sizeof(uint32_t));
  auto expected = bruteForce(partition, indices, values);
  for (int p = 0; p < partition.parts(); ++p) {
    std::vector<Entry> got = bucketEntries(buckets, p);
    std::sort(got.begin(), got.end());
    std::sort(expected[static_cast<size_t>(p)].begin(), expected[static_cast<size_t>(p)].end());
    ASSERT_EQ(got, expected[static_cast<size_t>(p)]) << "bucket " << p;
  }
}

TEST(SparseBucketing, BothMethodsMatchBruteForce) {
  struct Case {
    uint64_t universe;
    int parts;
    size_t nnz;
  };
  const Case cases[] = {{1, 1, 1},     {2, 3, 2},           {100, 7, 100},
                        {5000, 8, 50}, {200000, 16, 20000}, {100003, 5, 1}};
  for (PartitionKind kind : kAllKinds) {
    for (const Case& c : cases) {
      SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind) << " M " << c.universe
                                      << " n " << c.parts << " nnz " << c.nnz);
      const auto partition = makePartition(kind, c.universe, c.parts, 31);
      const auto indices = randomIndices(c.universe, c.nnz, c.universe + c.nnz);
      const auto values = valuesFor(indices.size());
      for (BucketMethod method : {BucketMethod::TwoPass, BucketMethod::HierarchicalHash}) {
        Buckets buckets;
        bucketByOwner(method, *partition, spcclUint32, indices.data(), values.data(),
                      indices.size(), &buckets);
        expectSameMultisets(*partition, indices, values, buckets);
      }
    }
  }
}

TEST(SparseBucketing, EmptyInputGivesEmptyBuckets) {
  const auto partition = makePartition(PartitionKind::Permutation, 100, 4, 0);
  for (BucketMethod method : {BucketMethod::TwoPass, BucketMethod::HierarchicalHash}) {
    Buckets buckets;
    bucketByOwner(method, *partition, spcclFloat64, nullptr, nullptr, 0, &buckets);
    EXPECT_EQ(buckets.offsets, std::vector<size_t>(5, 0));
    EXPECT_TRUE(buckets.positions.empty());
  }
}

TEST(SparseBucketing, TwoPassIsStable) {
  const auto partition = makePartition(PartitionKind::ZenHash, 10000, 4, 3);
  const auto indices = randomIndices(10000, 3000, 8);
  const auto values = valuesFor(indices.size());
  Buckets buckets;
  bucketByOwner(BucketMethod::TwoPass, *partition, spcclUint32, indices.data(), values.data(),
                indices.size(), &buckets);
  for (int p = 0; p < 4; ++p) {
    const auto entries = bucketEntries(buckets, p);
    for (size_t k = 1; k < entries.size(); ++k) ASSERT_LT(entries[k - 1].second, entries[k].second);
  }
}

TEST(SparseBucketing, IndexZeroAloneIsBucketedOnce) {
  // A reproduction that marked empty slots with index 0 doubled it.
  for (PartitionKind kind : kAllKinds) {
    const auto partition = makePartition(kind, 50, 3, 0);
    const std::vector<uint64_t> indices = {0};
    const std::vector<uint32_t> values = {7};
    Buckets buckets;
    bucketByOwner(BucketMethod::HierarchicalHash, *partition, spcclUint32, indices.data(),
                  values.data(), 1, &buckets);
    expectSameMultisets(*partition, indices, values, buckets);
  }
}

// Indices whose h1, h2 and h3 all choose slot 0 of an 8-slot table: every
// one after the first collides k times and must reach the serial memory.
std::vector<uint64_t> indicesCollidingEverywhere(size_t count, uint64_t seed) {
  std::vector<uint64_t> found;
  for (uint64_t idx = 0; found.size() < count; ++idx) {
    bool allZero = true;
    for (int i = 1; i <= HierarchicalHashOptions::kHashes; ++i) {
      allZero &= secondLevelSlot(i, idx, seed, 8) == 0;
    }
    if (allZero) found.push_back(idx);
  }
  return found;
}

TEST(SparseBucketing, HierarchicalHashSurvivesTotalCollisionAndGrowsSerialMemory) {
  HierarchicalHashOptions options;
  options.fixedParallelSlots = 8;
  options.fixedSerialSlots = 1;
  const auto indices = indicesCollidingEverywhere(49, options.secondLevelSeed);
  const uint64_t universe = indices.back() + 1;
  const auto partition = makePartition(PartitionKind::Contiguous, universe, 1, 0);
  const auto values = valuesFor(indices.size());
  Buckets buckets;
  hierarchicalHashBucketing(*partition, sizeof(uint32_t), indices.data(), values.data(),
                            indices.size(), options, &buckets);
  expectSameMultisets(*partition, indices, values, buckets);
  EXPECT_EQ(buckets.rehashed, 48u);
  EXPECT_EQ(buckets.serialWrites, 48u);
  EXPECT_EQ(buckets.serialGrowths, 6u);  // 1 -> 64 slots for 48 entries
}

TEST(SparseBucketing, HierarchicalHashTinyTablesManyPartitions) {
  HierarchicalHashOptions options;
  options.fixedParallelSlots = 4;
  options.fixedSerialSlots = 1;
  for (PartitionKind kind : kAllKinds) {
    const auto partition = makePartition(kind, 100000, 8, 4);
    const auto indices = randomIndices(100000, 5000, 9);
    const auto values = valuesFor(indices.size());
    Buckets buckets;
    hierarchicalHashBucketing(*partition, sizeof(uint32_t), indices.data(), values.data(),
                              indices.size(), options, &buckets);
    expectSameMultisets(*partition, indices, values, buckets);
    EXPECT_GT(buckets.serialGrowths, 0u);
    EXPECT_GE(buckets.serialWrites, indices.size() - 8 * 4);
  }
}

TEST(SparseBucketing, HierarchicalHashDefaultSizingRarelyNeedsSerialMemory) {
  // Zen section 4.2: with r1 = 2|G|d and k = 3 few entries go serial.
  const auto partition = makePartition(PartitionKind::ZenHash, 1 << 20, 16, 1);
  const auto indices = randomIndices(1 << 20, 10000, 10);
  const auto values = valuesFor(indices.size());
  Buckets buckets;
  bucketByOwner(BucketMethod::HierarchicalHash, *partition, spcclUint32, indices.data(),
                values.data(), indices.size(), &buckets);
  expectSameMultisets(*partition, indices, values, buckets);
  EXPECT_GT(buckets.rehashed, 0u);
  EXPECT_LT(buckets.serialWrites, indices.size() / 20);
}

TEST(SparseBucketing, HierarchicalHashWithTwoConcurrentWriters) {
  for (uint64_t parallelSlots : {uint64_t{0}, uint64_t{16}}) {  // default sizing, then contention
    HierarchicalHashOptions options;
    options.threads = 2;
    options.fixedParallelSlots = parallelSlots;
    options.fixedSerialSlots = parallelSlots > 0 ? 2 : 0;
    const auto partition = makePartition(PartitionKind::Permutation, 1 << 18, 4, 2);
    const auto indices = randomIndices(1 << 18, 60000, 11);
    const auto values = valuesFor(indices.size());
    Buckets buckets;
    hierarchicalHashBucketing(*partition, sizeof(uint32_t), indices.data(), values.data(),
                              indices.size(), options, &buckets);
    expectSameMultisets(*partition, indices, values, buckets);
  }
}

// Push: bucket, sort, encode each bucket over its part's |I_p| positions.
// Pull: decode and map position -> index through the same partition. The
// indices and values that come back are the ones pushed.
TEST(SparseBucketing, PushPositionsDecodeToThePushedIndices) {
  for (PartitionKind kind : kAllKinds) {
    for (BucketMethod method : {BucketMethod::TwoPass, BucketMethod::HierarchicalHash}) {
      const auto partition = makePartition(kind, 300007, 6, 77);
      const auto indices = randomIndices(300007, 40000, 12);
      const auto values = valuesFor(indices.size());
      Buckets buckets;
      bucketByOwner(method, *partition, spcclUint32, indices.data(), values.data(), indices.size(),
                    &buckets);
      std::vector<std::pair<uint64_t, uint32_t>> recovered;
      for (int p = 0; p < partition->parts(); ++p) {
        auto entries = bucketEntries(buckets, p);
        std::sort(entries.begin(), entries.end());
        std::vector<uint64_t> positions;
        std::vector<uint32_t> bucketValues;
        for (const Entry& e : entries) {
          positions.push_back(e.first);
          bucketValues.push_back(e.second);
        }
        const uint64_t universe = partition->partSize(p);
        for (Encoding encoding : {Encoding::Bitmap, Encoding::Coo, Encoding::Packed}) {
          std::vector<unsigned char> message;
          encode(encoding, positions.data(), bucketValues.data(), positions.size(), universe,
                 sizeof(uint32_t), &message);
          std::vector<uint64_t> decoded;
          std::vector<unsigned char> decodedValues;
          ASSERT_EQ(decode(message.data(), message.size(), universe, sizeof(uint32_t), &decoded,
                           &decodedValues),
                    spcclSuccess);
          ASSERT_EQ(decoded, positions);
          if (encoding != Encoding::Bitmap) continue;
          for (size_t k = 0; k < decoded.size(); ++k) {
            uint32_t value;
            std::memcpy(&value, &decodedValues[k * sizeof(value)], sizeof(value));
            recovered.push_back({partition->index(p, decoded[k]), value});
          }
        }
      }
      std::vector<std::pair<uint64_t, uint32_t>> pushed;
      for (size_t i = 0; i < indices.size(); ++i) pushed.push_back({indices[i], values[i]});
      std::sort(pushed.begin(), pushed.end());
      std::sort(recovered.begin(), recovered.end());
      ASSERT_EQ(recovered, pushed) << "kind " << static_cast<int>(kind);
    }
  }
}

}  // namespace
}  // namespace spccl::sparse
