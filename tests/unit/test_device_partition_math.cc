// The partitions' element code shared with the device
// (kernels/device_sparse/partition_math.h) against the CPU's
// IndexPartition, and the device bucketing's element functions
// (kernels/device_sparse/bucket_pairs.h), run thread by thread on host
// memory as the emulated driver runs them, against bucketByOwner: every
// kind, several universes, part counts and seeds. Host code only: no
// driver, no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/device_sparse/bucket_pairs.h"
#include "kernels/zen_hash.h"
#include "partition_shapes.h"
#include "sparse/bucketing.h"
#include "sparse/index_partition.h"

namespace spccl::sparse {
namespace {

namespace ds = kernels::device_sparse;

// Small and odd universes, one below and one past a rank tile, part counts
// that do and do not divide them.
constexpr Shape kShapes[] = {{1, 1, 0},     {7, 3, 5},          {1000, 2, 1},
                             {1025, 4, 99}, {4096, 3, 7},       {50001, 2, 12345},
                             {50001, 3, 2}, {65537, 8, 0xfeed}, {100003, 5, 31}};

TEST(DevicePartitionMath, OwnersAndPositionsEqualTheCpuPartitions) {
  for (PartitionKind kind : kAllKinds)
    for (const Shape& s : kShapes) {
      SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind) << " M " << s.universe
                                      << " n " << s.parts << " seed " << s.seed);
      const auto partition = makePartition(kind, s.universe, s.parts, s.seed);
      const ds::PartitionMath m = partition->deviceMath();
      ASSERT_EQ(m.kind, static_cast<uint32_t>(kind));
      ASSERT_EQ(m.parts, static_cast<uint32_t>(s.parts));
      ASSERT_EQ(m.universe, s.universe);
      std::vector<uint64_t> zenSeen(static_cast<size_t>(s.parts), 0);  // ZenHash: I_p's ranks
      size_t wrong = 0;
      for (uint64_t idx = 0; idx < s.universe; ++idx) {
        const int owner = ds::partitionOwner(m, idx);
        uint64_t position = 0;
        if (kind == PartitionKind::ZenHash) {
          position = zenSeen[static_cast<size_t>(owner)]++;
        } else {
          int formulaOwner = -1;
          ds::locateByFormula(m, idx, &formulaOwner, &position);
          wrong += formulaOwner != owner ? 1 : 0;
        }
        wrong += owner != partition->owner(idx) ? 1 : 0;
        wrong += position != partition->position(idx) ? 1 : 0;
      }
      EXPECT_EQ(wrong, 0u);
    }
}

// DeviceNonZeros::bucketPairs's launches (ds::forEachBucketLaunch), each
// kernel's threads run on the host (ds::runBucketKernelOnHost, as the
// emulated driver runs them), over pairs in host memory.
struct HostBuckets {
  std::vector<uint64_t> offsets, positions;
  std::vector<unsigned char> values;
};

template <typename Index>
HostBuckets bucketAsTheDevice(const ds::PartitionMath& m, const std::vector<Index>& indices,
                              const std::vector<unsigned char>& values, size_t valueBytes) {
  const uint64_t nnz = indices.size(), parts = m.parts;
  ds::BucketArgs a{};
  a.partition = m;
  a.nnz = nnz;
  a.indexBytes = sizeof(Index);
  a.valueBytes = valueBytes;
  a.chunks = ds::bucketChunksFor(nnz);
  a.rankTiles = ds::rankTilesFor(m);
  std::vector<uint32_t> owners(nnz);
  std::vector<uint64_t> positions(nnz), orderA(nnz), orderB(nnz), chunkCounts(parts * a.chunks),
      digitCounts(ds::kRadixDigits * a.chunks), rankCounts(parts * a.rankTiles),
      chunkBase(ds::kScanThreads + 1);
  HostBuckets out{std::vector<uint64_t>(parts + 1), std::vector<uint64_t>(nnz),
                  std::vector<unsigned char>(nnz * valueBytes)};
  auto address = [](const void* p) { return reinterpret_cast<uint64_t>(p); };
  a.indices = address(indices.data());
  a.values = address(values.data());
  a.owners = address(owners.data());
  a.positions = address(positions.data());
  a.chunkCounts = address(chunkCounts.data());
  a.digitCounts = address(digitCounts.data());
  a.rankCounts = address(rankCounts.data());
  a.scanChunkBase = address(chunkBase.data());
  a.offsets = address(out.offsets.data());
  // (Raw bytes, as device memory is: the kernel writes positions of
  // sizeof(Index) bytes there.)
  std::vector<unsigned char> outPositions(nnz * sizeof(uint64_t));
  a.outPositions = address(outPositions.data());
  a.outValues = address(out.values.data());
  ds::forEachBucketLaunch(a, address(orderA.data()), address(orderB.data()), false,
                          [](const char* kernel, const ds::BucketArgs& args, uint64_t) {
                            ds::runBucketKernelOnHost(kernel, args);
                            return true;
                          });
  ds::copyPositions(outPositions.data(), nnz, sizeof(Index), out.positions.data());
  return out;
}

// Every kind's buckets hold what bucketByOwner's hold, bucket by bucket,
// in ascending position order (what lets the host skip its sort).
template <typename Index>
void checkBuckets(double density, size_t valueBytes) {
  for (PartitionKind kind : kAllKinds)
    for (const Shape& s : kShapes) {
      SCOPED_TRACE(testing::Message()
                   << "kind " << static_cast<int>(kind) << " M " << s.universe << " n " << s.parts
                   << " density " << density << " index bytes " << sizeof(Index));
      std::vector<uint64_t> wide;
      for (uint64_t i = 0; i < s.universe; ++i)
        if (static_cast<double>(kernels::mix64(i + s.seed) % 1000) < density * 1000)
          wide.push_back(i);
      const std::vector<Index> indices(wide.begin(), wide.end());
      std::vector<unsigned char> values(wide.size() * valueBytes);
      for (size_t b = 0; b < values.size(); ++b)
        values[b] = static_cast<unsigned char>(kernels::mix64(b) | 1);
      const auto partition = makePartition(kind, s.universe, s.parts, s.seed);
      const HostBuckets device =
          bucketAsTheDevice(partition->deviceMath(), indices, values, valueBytes);
      Buckets host;
      bucketByOwner(BucketMethod::TwoPass, *partition,
                    valueBytes == 2   ? spcclBfloat16
                    : valueBytes == 4 ? spcclFloat32
                                      : spcclFloat64,
                    wide.data(), values.data(), wide.size(), &host);
      ASSERT_EQ(device.offsets.size(), host.offsets.size());
      for (size_t p = 0; p < host.offsets.size(); ++p)
        ASSERT_EQ(device.offsets[p], host.offsets[p]) << "offset " << p;
      for (int p = 0; p < s.parts; ++p) {
        auto pairsOf = [&](const uint64_t* positions, const unsigned char* v) {
          std::vector<std::pair<uint64_t, std::vector<unsigned char>>> pairs;
          for (size_t i = host.offsets[p]; i < host.offsets[p + 1]; ++i)
            pairs.push_back({positions[i], {v + i * valueBytes, v + (i + 1) * valueBytes}});
          return pairs;
        };
        auto mine = pairsOf(device.positions.data(), device.values.data());
        auto theirs = pairsOf(host.positions.data(), host.values.data());
        EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end())) << "bucket " << p;
        std::sort(mine.begin(), mine.end());
        std::sort(theirs.begin(), theirs.end());
        EXPECT_EQ(mine, theirs) << "bucket " << p;
      }
    }
}

TEST(DevicePartitionMath, BucketsEqualBucketByOwner32BitIndices) {
  for (double density : {0.001, 0.05, 0.5, 1.0}) checkBuckets<uint32_t>(density, 4);
}

TEST(DevicePartitionMath, BucketsEqualBucketByOwner64BitIndicesTwoAndEightByteValues) {
  checkBuckets<uint64_t>(0.3, 8);
  checkBuckets<uint32_t>(0.3, 2);
}

}  // namespace
}  // namespace spccl::sparse
