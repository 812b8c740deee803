// The sparse all-reduce's device-side kernels (docs/gpu.md, "Sparse
// all-reduce of device buffers"): a dense device input's non-zeros as
// (index, value) pairs in ascending index order, so that only they cross
// PCIe; and the result's pairs scattered into a zeroed dense device output.
//
// Extraction is three launches, each tile of kTile elements one block:
//   1. count: blockCounts[b] = the tile's non-zeros, blockSignedZeros[b] =
//      its zeros whose bits are not all 0 (-0.0: the caller stages those
//      calls whole, since the CPU's dense schedules keep -0.0's bits);
//   2. scan (one block): blockCounts becomes each tile's first output
//      slot (exclusive scan), totals = {non-zeros, signed zeros};
//   3. write: each tile's non-zeros, in order, from its first slot.
// "Zero" is the CPU's ZeroTest (kernels/cpu/sparse/format_dispatch.h):
// -0.0 is zero, NaN is not, so the pairs are those the CPU would extract.
// The pairs' indices are 32-bit where every index of the call fits
// (indexBytesFor), else 64-bit: a field of the args, so one element code
// and one kernel per type serve both widths.
//
// Written once for the GPU (extract_nonzeros.cu, a fatbin libspccl loads
// through the driver) and the emulated driver's host stand-in
// (tests/cuda_emulation), which runs these same functions per tile and
// chunk: it checks this logic and the call's schedule, not the CUDA code
// around it. Kernel names (kernelName) are the ABI with the fatbin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/sparse/format_dispatch.h"
#include "kernels/device_reduce/reduce_inputs.h"
#include "kernels/host_device.h"
#include "spccl.h"

namespace spccl::kernels::device_sparse {

constexpr unsigned kThreads = 256;        // per block, every kernel but the scan
constexpr unsigned kItemsPerThread = 16;  // rounds of kThreads elements per tile
constexpr uint64_t kTile = uint64_t{kThreads} * kItemsPerThread;
constexpr unsigned kScanThreads = 256;  // the scan's one block

// The kernels' one parameter, by value (pointers as 64-bit integers, the
// same layout on host and device).
struct ExtractArgs {
  uint64_t input;  // count elements
  uint64_t count;
  uint64_t blocks;            // tiles: ceil(count / kTile)
  uint64_t blockCounts;       // [blocks] uint64
  uint64_t blockSignedZeros;  // [blocks] uint64
  uint64_t totals;            // [2] uint64: non-zeros, signed zeros
  uint64_t outIndices;        // [capacity] indices of indexBytes each (write only)
  uint64_t outValues;         // [capacity] elements (write only)
  uint64_t capacity;          // pairs the outputs hold: none is written past it
  uint64_t indexBytes;        // 4 (uint32) or 8 (uint64; also 0, a zero-filled args)
};

// The zero fill and the scatter: output[indices[i]] = values[i].
struct ScatterArgs {
  uint64_t output;  // count elements
  uint64_t count;
  uint64_t indices;  // [nnz] indices of indexBytes each, each < count
  uint64_t values;   // [nnz] elements
  uint64_t nnz;
  uint64_t indexBytes;  // 4 (uint32) or 8 (uint64; also 0, a zero-filled args)
};

constexpr const char* kCountPrefix = "spcclCountNonZeros_";
constexpr const char* kWritePrefix = "spcclWriteNonZeros_";
constexpr const char* kZeroFillPrefix = "spcclZeroFill_";
constexpr const char* kScatterPrefix = "spcclScatterPairs_";
constexpr const char* kScanKernel = "spcclScanBlockCounts";

// Grid-stride kernels' blocks of kThreads: enough to fill a GPU, not one
// per element.
inline unsigned gridFor(uint64_t elements) {
  const uint64_t blocks = (elements + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1                     ? 1
                               : blocks > (uint64_t{1} << 16) ? uint64_t{1} << 16
                                                              : blocks);
}

inline uint64_t tilesFor(uint64_t count) { return (count + kTile - 1) / kTile; }

// The pairs' index width for a call of `count` elements: 4 bytes where
// every index, at most count - 1, fits in a uint32 (count <= 2^32), else
// 8. At 0.1-1 % density of f32 the indices are most of what crosses PCIe,
// so this takes a third off each way.
constexpr uint64_t kNarrowIndicesMaxCount = uint64_t{UINT32_MAX} + 1;
inline size_t indexBytesFor(uint64_t count) {
  return count <= kNarrowIndicesMaxCount ? sizeof(uint32_t) : sizeof(uint64_t);
}

// The bytes of one index the kernels read or write for an args' indexBytes.
SPCCL_HOST_DEVICE inline uint64_t indexWidth(uint64_t indexBytes) {
  return indexBytes == sizeof(uint32_t) ? sizeof(uint32_t) : sizeof(uint64_t);
}

// nnz pairs as the kernels and the host lay them out in one buffer: the
// indices, then the values from valuesOffset, aligned to the element (an
// f64 after an odd number of uint32 indices would be misaligned).
inline uint64_t valuesOffset(uint64_t nnz, uint64_t indexBytes, uint64_t valueBytes) {
  return (nnz * indexBytes + valueBytes - 1) / valueBytes * valueBytes;
}
inline uint64_t pairsBytes(uint64_t nnz, uint64_t indexBytes, uint64_t valueBytes) {
  return valuesOffset(nnz, indexBytes, valueBytes) + nnz * valueBytes;
}

// Elements [*first, *last) of tile `block`.
SPCCL_HOST_DEVICE inline void tileRange(uint64_t count, uint64_t block, uint64_t* first,
                                        uint64_t* last) {
  *first = block * kTile < count ? block * kTile : count;
  *last = *first + kTile < count ? *first + kTile : count;
}

template <typename Format>
SPCCL_HOST_DEVICE inline bool isNonZero(typename Format::Storage v) {
  return !ZeroTest<Format>::isZero(v);
}

// A zero (ZeroTest) whose bits are not all 0: -0.0 in the IEEE formats.
template <typename Format>
SPCCL_HOST_DEVICE inline bool isSignedZero(typename Format::Storage v) {
  using Storage = typename Format::Storage;
  if (!ZeroTest<Format>::isZero(v)) return false;
  unsigned char bytes[sizeof(Storage)];
  std::memcpy(bytes, &v, sizeof(Storage));
  for (size_t i = 0; i < sizeof(Storage); ++i)
    if (bytes[i] != 0) return true;
  return false;
}

// Thread `thread` of `threads` scans blockCounts[first, last).
SPCCL_HOST_DEVICE inline void chunkRange(uint64_t blocks, unsigned thread, unsigned threads,
                                         uint64_t* first, uint64_t* last) {
  const uint64_t per = (blocks + threads - 1) / threads;
  *first = per * thread < blocks ? per * thread : blocks;
  *last = *first + per < blocks ? *first + per : blocks;
}

SPCCL_HOST_DEVICE inline uint64_t sumOf(const uint64_t* values, uint64_t first, uint64_t last) {
  uint64_t sum = 0;
  for (uint64_t i = first; i < last; ++i) sum += values[i];
  return sum;
}

// values[i] = base + the sum of values[first..i) for i in [first, last);
// returns base + the sum of them all.
SPCCL_HOST_DEVICE inline uint64_t exclusiveScan(uint64_t* values, uint64_t first, uint64_t last,
                                                uint64_t base) {
  uint64_t running = base;
  for (uint64_t i = first; i < last; ++i) {
    const uint64_t v = values[i];
    values[i] = running;
    running += v;
  }
  return running;
}

// One pair, at `slot` of the output arrays.
template <typename Format>
SPCCL_HOST_DEVICE inline void writePair(const ExtractArgs& args, uint64_t slot, uint64_t index,
                                        typename Format::Storage v) {
  if (slot >= args.capacity) return;  // never past the buffers, whatever the counts said
  if (indexWidth(args.indexBytes) == sizeof(uint32_t))
    reinterpret_cast<uint32_t*>(args.outIndices)[slot] = static_cast<uint32_t>(index);
  else
    reinterpret_cast<uint64_t*>(args.outIndices)[slot] = index;
  reinterpret_cast<typename Format::Storage*>(args.outValues)[slot] = v;
}

template <typename Format>
SPCCL_HOST_DEVICE inline void scatterPair(const ScatterArgs& args, uint64_t i) {
  using Storage = typename Format::Storage;
  const uint64_t index = indexWidth(args.indexBytes) == sizeof(uint32_t)
                             ? reinterpret_cast<const uint32_t*>(args.indices)[i]
                             : reinterpret_cast<const uint64_t*>(args.indices)[i];
  if (index >= args.count) return;  // the host checked them; never written out of bounds
  reinterpret_cast<Storage*>(args.output)[index] = reinterpret_cast<const Storage*>(args.values)[i];
}

// "spcclCountNonZeros_f32": prefix + the device all-reduce's type suffix;
// nullptr for a type without kernels.
inline const char* typeSuffix(spcclDataType_t type) { return device_reduce::typeSuffix(type); }

}  // namespace spccl::kernels::device_sparse
