// Balanced Parallelism's push buckets on the device (docs/gpu.md, "Sparse
// all-reduce of device buffers"; issue 16): the input's pairs, as the
// extraction wrote them (extract_nonzeros.h: ascending indices), split by
// owner into (position, value) buckets with an IndexPartition's math
// (partition_math.h), so that the host's bucketByOwner is skipped.
//
// Launches, in order (forEachBucketLaunch):
//   ZenHash only, and only where rankCounts does not hold them from an
//   earlier call over the same partition (src/sparse/device_rank_tiles.h):
//   rank tiles. I_p's positions count the indices of part p
//   below idx (Zen section 3.3), so per tile of kRankTile universe indices
//     1. countRankTiles: rankCounts[p * rankTiles + t] = the tile's
//        indices owned by p (h0 of every index of [0, M): no O(M) table);
//     2. scan of rankCounts, owner-major, so that
//        rankCounts[p * rankTiles + t] - rankCounts[p * rankTiles] is the
//        number of p's indices before tile t.
//   3. locatePairs: owners[i], positions[i] of each pair (ZenHash: the
//      tile's base plus p's indices in [tile start, idx), counted again),
//      and order[i] = i;
//   Permutation only: an LSD radix sort of `order` by position, kRadixBits
//   a pass (the pairs' other arrays stay where they are), each pass
//     4. countDigits: per chunk of kBucketChunk, its pairs per digit,
//        digitCounts[d * chunks + c];
//     5. scan of digitCounts, digit-major: each (digit, chunk)'s first slot;
//     6. scatterDigits: each chunk's order entries, in order, to their
//        digit's next slot (stable);
//   7. countChunkOwners: per chunk of `order`, its pairs per owner,
//      chunkCounts[p * chunks + c];
//   8. scan of chunkCounts, owner-major: each (owner, chunk)'s first slot;
//   9. scatterChunks: each chunk's pairs, in `order`, to their owner's next
//      slot (a stable scatter), and offsets[] (bucket p is
//      [offsets[p], offsets[p+1])).
// Every bucket comes out ascending by position: the pairs come in
// ascending index order and every scatter is stable, so ZenHash's
// (position = rank of idx in I_p) and Contiguous's (idx - start) are in
// order already; Permutation's (pi scatters them) are sorted by the radix
// passes, the owner being the last, most significant, digit. The host
// skips its sortByPosition.
//
// Simple and correct first: a thread per rank tile or chunk, sequential
// inside it. Written once for the GPU (bucket_pairs.cu) and the emulated
// driver's host stand-ins (tests/cuda_emulation/emulated_bucket_kernels.cc),
// which run these functions thread by thread: they check this logic, not
// the CUDA code around it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/device_sparse/extract_nonzeros.h"
#include "kernels/device_sparse/partition_math.h"
#include "kernels/host_device.h"

namespace spccl::kernels::device_sparse {

constexpr uint64_t kRankTile = 1024;    // universe indices per ZenHash rank tile
constexpr uint64_t kBucketChunk = 256;  // pairs per scatter thread
constexpr unsigned kRadixBits = 8;      // Permutation's sort: bits of position a pass
constexpr uint64_t kRadixDigits = uint64_t{1} << kRadixBits;
// Blocks of kThreads (gridFor), the scan one block of kScanThreads.

struct BucketArgs {
  PartitionMath partition;
  uint64_t indices;  // [nnz] ascending, of indexBytes each
  uint64_t values;   // [nnz] elements of valueBytes
  uint64_t nnz;
  uint64_t indexBytes;    // 4 (uint32) or 8 (uint64)
  uint64_t valueBytes;    // 1, 2, 4 or 8
  uint64_t owners;        // [nnz] uint32
  uint64_t positions;     // [nnz] uint64
  uint64_t order;         // [nnz] uint64: the pairs in the order the owner pass reads them
  uint64_t chunks;        // ceil(nnz / kBucketChunk)
  uint64_t chunkCounts;   // [parts * chunks] uint64, owner-major
  uint64_t rankTiles;     // ZenHash: ceil(universe / kRankTile); else 0
  uint64_t rankCounts;    // ZenHash: [parts * rankTiles] uint64, owner-major
  uint64_t outPositions;  // [nnz] of indexBytes each (a position is below M, as an index)
  uint64_t outValues;     // [nnz] elements
  uint64_t offsets;       // [parts + 1] uint64
  // The scan's array and length (rankCounts or chunkCounts) and its
  // running totals ([kScanThreads] uint64 scratch plus the total).
  uint64_t scan;
  uint64_t scanLength;
  uint64_t scanChunkBase;  // [kScanThreads + 1] uint64
  // Permutation's radix passes: order entries from radixFrom to radixTo
  // ([nnz] uint64 each) by the digit at radixShift of their position.
  uint64_t digitCounts;  // [kRadixDigits * chunks] uint64, digit-major
  uint64_t radixFrom;
  uint64_t radixTo;
  uint64_t radixShift;
};

constexpr const char* kCountRankTilesKernel = "spcclBucketCountRankTiles";
constexpr const char* kScanKernelOfBuckets = "spcclBucketScan";
constexpr const char* kLocatePairsKernel = "spcclBucketLocatePairs";
constexpr const char* kCountDigitsKernel = "spcclBucketCountDigits";
constexpr const char* kScatterDigitsKernel = "spcclBucketScatterDigits";
constexpr const char* kCountChunkOwnersKernel = "spcclBucketCountChunkOwners";
constexpr const char* kScatterChunksKernel = "spcclBucketScatterChunks";

inline uint64_t bucketChunksFor(uint64_t nnz) { return (nnz + kBucketChunk - 1) / kBucketChunk; }
inline uint64_t rankTilesFor(const PartitionMath& m) {
  return m.kind == kZenHashPartition ? (m.universe + kRankTile - 1) / kRankTile : 0;
}

SPCCL_HOST_DEVICE inline uint64_t pairIndex(const BucketArgs& a, uint64_t i) {
  return indexWidth(a.indexBytes) == sizeof(uint32_t)
             ? reinterpret_cast<const uint32_t*>(a.indices)[i]
             : reinterpret_cast<const uint64_t*>(a.indices)[i];
}

// 1. Thread t: tile t's indices per owner.
SPCCL_HOST_DEVICE inline void countRankTile(const BucketArgs& a, uint64_t t) {
  auto* counts = reinterpret_cast<uint64_t*>(a.rankCounts);
  for (uint64_t p = 0; p < a.partition.parts; ++p) counts[p * a.rankTiles + t] = 0;
  const uint64_t first = t * kRankTile;
  const uint64_t last =
      first + kRankTile < a.partition.universe ? first + kRankTile : a.partition.universe;
  for (uint64_t j = first; j < last; ++j)
    ++counts[static_cast<uint64_t>(partitionOwner(a.partition, j)) * a.rankTiles + t];
}

// 2, 5 and 8. The one-block scan of `scan`, in the steps of
// extract_nonzeros.h's: thread `thread` sums its chunk (scanSum), thread 0
// scans the chunk sums (scanBase), every thread scans its chunk
// (scanChunk). Exclusive: scan[i] becomes the sum of scan[0, i).
SPCCL_HOST_DEVICE inline void scanSum(const BucketArgs& a, unsigned thread) {
  uint64_t first = 0, last = 0;
  chunkRange(a.scanLength, thread, kScanThreads, &first, &last);
  reinterpret_cast<uint64_t*>(a.scanChunkBase)[thread] =
      sumOf(reinterpret_cast<const uint64_t*>(a.scan), first, last);
}
SPCCL_HOST_DEVICE inline void scanBase(const BucketArgs& a) {
  auto* base = reinterpret_cast<uint64_t*>(a.scanChunkBase);
  base[kScanThreads] = exclusiveScan(base, 0, kScanThreads, 0);
}
SPCCL_HOST_DEVICE inline void scanChunk(const BucketArgs& a, unsigned thread) {
  uint64_t first = 0, last = 0;
  chunkRange(a.scanLength, thread, kScanThreads, &first, &last);
  exclusiveScan(reinterpret_cast<uint64_t*>(a.scan), first, last,
                reinterpret_cast<const uint64_t*>(a.scanChunkBase)[thread]);
}

// 3. Pair i's owner and position.
SPCCL_HOST_DEVICE inline void locatePair(const BucketArgs& a, uint64_t i) {
  const uint64_t idx = pairIndex(a, i);
  int owner = 0;
  uint64_t position = 0;
  if (a.partition.kind == kZenHashPartition) {
    owner = partitionOwner(a.partition, idx);
    const auto* counts = reinterpret_cast<const uint64_t*>(a.rankCounts);
    const uint64_t t = idx / kRankTile, column = static_cast<uint64_t>(owner) * a.rankTiles;
    position = counts[column + t] - counts[column];
    for (uint64_t j = t * kRankTile; j < idx; ++j)
      position += partitionOwner(a.partition, j) == owner ? 1 : 0;
  } else {
    locateByFormula(a.partition, idx, &owner, &position);
  }
  reinterpret_cast<uint32_t*>(a.owners)[i] = static_cast<uint32_t>(owner);
  reinterpret_cast<uint64_t*>(a.positions)[i] = position;
  reinterpret_cast<uint64_t*>(a.order)[i] = i;
}

// Pairs [*first, *last) of chunk c.
SPCCL_HOST_DEVICE inline void chunkPairs(const BucketArgs& a, uint64_t c, uint64_t* first,
                                         uint64_t* last) {
  *first = c * kBucketChunk;
  *last = *first + kBucketChunk < a.nnz ? *first + kBucketChunk : a.nnz;
}

SPCCL_HOST_DEVICE inline uint64_t digitOf(const BucketArgs& a, uint64_t pair) {
  return (reinterpret_cast<const uint64_t*>(a.positions)[pair] >> a.radixShift) &
         (kRadixDigits - 1);
}

// 4. Chunk c's order entries per digit.
SPCCL_HOST_DEVICE inline void countDigits(const BucketArgs& a, uint64_t c) {
  auto* counts = reinterpret_cast<uint64_t*>(a.digitCounts);
  for (uint64_t d = 0; d < kRadixDigits; ++d) counts[d * a.chunks + c] = 0;
  uint64_t first = 0, last = 0;
  chunkPairs(a, c, &first, &last);
  const auto* from = reinterpret_cast<const uint64_t*>(a.radixFrom);
  for (uint64_t i = first; i < last; ++i) ++counts[digitOf(a, from[i]) * a.chunks + c];
}

// 6. Chunk c's order entries to their digit's slots, in order.
SPCCL_HOST_DEVICE inline void scatterDigits(const BucketArgs& a, uint64_t c) {
  auto* counts = reinterpret_cast<uint64_t*>(a.digitCounts);
  uint64_t first = 0, last = 0;
  chunkPairs(a, c, &first, &last);
  const auto* from = reinterpret_cast<const uint64_t*>(a.radixFrom);
  auto* to = reinterpret_cast<uint64_t*>(a.radixTo);
  for (uint64_t i = first; i < last; ++i)
    to[counts[digitOf(a, from[i]) * a.chunks + c]++] = from[i];
}

// 7. Chunk c's pairs per owner.
SPCCL_HOST_DEVICE inline void countChunkOwners(const BucketArgs& a, uint64_t c) {
  auto* counts = reinterpret_cast<uint64_t*>(a.chunkCounts);
  for (uint64_t p = 0; p < a.partition.parts; ++p) counts[p * a.chunks + c] = 0;
  uint64_t first = 0, last = 0;
  chunkPairs(a, c, &first, &last);
  const auto* owners = reinterpret_cast<const uint32_t*>(a.owners);
  const auto* order = reinterpret_cast<const uint64_t*>(a.order);
  for (uint64_t i = first; i < last; ++i) ++counts[owners[order[i]] * a.chunks + c];
}

// 9. Chunk c's pairs to their slots, in order. Chunk 0 first records the
// buckets' offsets: column 0 of the scanned counts, which only it moves.
SPCCL_HOST_DEVICE inline void scatterChunk(const BucketArgs& a, uint64_t c) {
  auto* counts = reinterpret_cast<uint64_t*>(a.chunkCounts);
  if (c == 0) {
    auto* offsets = reinterpret_cast<uint64_t*>(a.offsets);
    for (uint64_t p = 0; p < a.partition.parts; ++p) offsets[p] = counts[p * a.chunks];
    offsets[a.partition.parts] = a.nnz;
  }
  uint64_t first = 0, last = 0;
  chunkPairs(a, c, &first, &last);
  const auto* owners = reinterpret_cast<const uint32_t*>(a.owners);
  const auto* positions = reinterpret_cast<const uint64_t*>(a.positions);
  const auto* from = reinterpret_cast<const unsigned char*>(a.values);
  auto* to = reinterpret_cast<unsigned char*>(a.outValues);
  const auto* order = reinterpret_cast<const uint64_t*>(a.order);
  for (uint64_t i = first; i < last; ++i) {
    const uint64_t pair = order[i];
    const uint64_t slot = counts[owners[pair] * a.chunks + c]++;
    if (indexWidth(a.indexBytes) == sizeof(uint32_t))
      reinterpret_cast<uint32_t*>(a.outPositions)[slot] = static_cast<uint32_t>(positions[pair]);
    else
      reinterpret_cast<uint64_t*>(a.outPositions)[slot] = positions[pair];
    std::memcpy(to + slot * a.valueBytes, from + pair * a.valueBytes, a.valueBytes);
  }
}

// The Permutation partition's radix passes: enough for its largest
// position (the widest part's size - 1); none for the others.
inline unsigned radixPasses(const PartitionMath& m) {
  if (m.kind != kPermutationPartition) return 0;
  uint64_t largest = 0;
  for (uint64_t p = 0; p < m.parts; ++p) {
    const uint64_t size =
        evenRangeStart(m.universe, m.parts, p + 1) - evenRangeStart(m.universe, m.parts, p);
    largest = size > largest ? size : largest;
  }
  unsigned bits = 0;
  while (bits < 64 && largest > 1 && ((largest - 1) >> bits) != 0) ++bits;
  return (bits + kRadixBits - 1) / kRadixBits;
}

// The host's schedule of the launches above (the library's and the tests'
// alike): launch(kernel, args, items) for each in order, where items is
// the threads the kernel needs (the scan: its one block), until one
// returns false. args holds every array of `base` but `order`; orderA and
// orderB are [nnz] uint64 each. rankCountsReady: args.rankCounts holds the
// partition's scanned rank tiles already (launches 1 and 2 are skipped).
template <typename Launch>
bool forEachBucketLaunch(BucketArgs args, uint64_t orderA, uint64_t orderB, bool rankCountsReady,
                         Launch&& launch) {
  auto scan = [&](uint64_t array, uint64_t length) {
    BucketArgs s = args;
    s.scan = array;
    s.scanLength = length;
    return launch(kScanKernelOfBuckets, s, uint64_t{kScanThreads});
  };
  const uint64_t parts = args.partition.parts;
  if (args.rankTiles > 0 && !rankCountsReady &&
      (!launch(kCountRankTilesKernel, args, args.rankTiles) ||
       !scan(args.rankCounts, parts * args.rankTiles)))
    return false;
  args.order = orderA;
  if (!launch(kLocatePairsKernel, args, args.nnz)) return false;
  const unsigned passes = radixPasses(args.partition);
  for (unsigned pass = 0; pass < passes; ++pass) {
    args.radixFrom = pass % 2 == 0 ? orderA : orderB;
    args.radixTo = pass % 2 == 0 ? orderB : orderA;
    args.radixShift = uint64_t{pass} * kRadixBits;
    if (!launch(kCountDigitsKernel, args, args.chunks) ||
        !scan(args.digitCounts, kRadixDigits * args.chunks) ||
        !launch(kScatterDigitsKernel, args, args.chunks))
      return false;
    args.order = args.radixTo;
  }
  return launch(kCountChunkOwnersKernel, args, args.chunks) &&
         scan(args.chunkCounts, parts * args.chunks) &&
         launch(kScatterChunksKernel, args, args.chunks);
}

// The nnz positions scatterChunks wrote (`written`, on the host: 32-bit
// where the pairs' indices are, indexBytes 4, else 64-bit) into `out` as
// uint64, widened in the same pass.
inline void copyPositions(const unsigned char* written, uint64_t nnz, uint64_t indexBytes,
                          uint64_t* out) {
  if (indexWidth(indexBytes) != sizeof(uint32_t)) {
    if (nnz > 0) std::memcpy(out, written, nnz * sizeof(uint64_t));
    return;
  }
  for (uint64_t i = 0; i < nnz; ++i) {
    uint32_t narrow = 0;
    std::memcpy(&narrow, written + i * sizeof(uint32_t), sizeof(narrow));
    out[i] = narrow;
  }
}

// One launch's threads run one after the other on the host (the emulated
// driver's stand-ins and the unit tests): the scan's steps phase by phase,
// as its block's barriers order them.
inline void runBucketKernelOnHost(const char* kernel, const BucketArgs& a) {
  auto is = [kernel](const char* name) { return std::strcmp(kernel, name) == 0; };
  if (is(kScanKernelOfBuckets)) {
    for (unsigned t = 0; t < kScanThreads; ++t) scanSum(a, t);
    scanBase(a);
    for (unsigned t = 0; t < kScanThreads; ++t) scanChunk(a, t);
  } else if (is(kCountRankTilesKernel)) {
    for (uint64_t t = 0; t < a.rankTiles; ++t) countRankTile(a, t);
  } else if (is(kLocatePairsKernel)) {
    for (uint64_t i = 0; i < a.nnz; ++i) locatePair(a, i);
  } else {
    void (*perChunk)(const BucketArgs&, uint64_t) = is(kCountDigitsKernel)        ? countDigits
                                                    : is(kScatterDigitsKernel)    ? scatterDigits
                                                    : is(kCountChunkOwnersKernel) ? countChunkOwners
                                                                                  : scatterChunk;
    for (uint64_t c = 0; c < a.chunks; ++c) perChunk(a, c);
  }
}

}  // namespace spccl::kernels::device_sparse
