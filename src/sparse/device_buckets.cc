// DeviceNonZeros::bucketPairs (device_nonzeros.h): the launches of
// kernels/device_sparse/bucket_pairs.h on the call's stream, over the pairs
// writePairs left on the device, and the buckets' copies to the host
// (through pinned memory, then into the Buckets on the host).
#include "sparse/device_buckets.h"

#include <cinttypes>
#include <cstring>
#include <utility>

#include "base/check.h"
#include "base/log.h"
#include "device/cuda_module.h"
#include "device/pinned_pool.h"
#include "kernels/device_sparse/bucket_pairs.h"
#include "kernels/device_sparse/bucket_pairs_image.h"
#include "sparse/device_rank_tiles.h"

namespace spccl::sparse {

namespace {

namespace ds = kernels::device_sparse;

const device::EmbeddedModule& bucketModule() {
  static const device::EmbeddedModule module(ds::bucketPairsImage(), ds::bucketPairsImageBytes());
  return module;
}

// Offsets of the arrays in one scratch allocation, each 8-byte aligned.
struct ScratchLayout {
  uint64_t owners, positions, orderA, orderB, chunkCounts, digitCounts, rankCounts, scanChunkBase,
      offsets, outPositions, outValues, bytes;
};

ScratchLayout layoutFor(uint64_t nnz, uint64_t parts, uint64_t chunks, uint64_t rankTiles,
                        uint64_t valueBytes) {
  auto words = [](uint64_t bytes) { return (bytes + 7) / 8 * 8; };
  ScratchLayout l{};
  uint64_t at = 0;
  auto take = [&at](uint64_t bytes) { return std::exchange(at, at + bytes); };
  l.owners = take(words(nnz * sizeof(uint32_t)));
  l.positions = take(nnz * sizeof(uint64_t));
  l.orderA = take(nnz * sizeof(uint64_t));
  l.orderB = take(nnz * sizeof(uint64_t));
  l.chunkCounts = take(parts * chunks * sizeof(uint64_t));
  l.digitCounts = take(ds::kRadixDigits * chunks * sizeof(uint64_t));
  l.rankCounts = take(parts * rankTiles * sizeof(uint64_t));
  l.scanChunkBase = take((ds::kScanThreads + 1) * sizeof(uint64_t));
  l.offsets = take((parts + 1) * sizeof(uint64_t));
  l.outPositions = take(nnz * sizeof(uint64_t));  // (or half of it: 32-bit positions)
  l.outValues = take(words(nnz * valueBytes));
  l.bytes = at;
  return l;
}

// Offsets of the buckets' copies in the pinned host staging, as the device
// wrote them: offsets, positions (indexBytes each), values.
struct HostLayout {
  uint64_t positions, values, bytes;
};

HostLayout hostLayoutFor(uint64_t nnz, uint64_t parts, uint64_t indexBytes, uint64_t valueBytes) {
  HostLayout h{};
  h.positions = (parts + 1) * sizeof(uint64_t);
  h.values = h.positions + (nnz * indexBytes + 7) / 8 * 8;
  h.bytes = h.values + nnz * valueBytes;
  return h;
}

}  // namespace

bool bucketKernelsPresent() { return bucketModule().present(); }

spcclResult_t loadBucketKernels() {
  device::CuFunction function = nullptr;
  for (const char* kernel :
       {ds::kCountRankTilesKernel, ds::kScanKernelOfBuckets, ds::kLocatePairsKernel,
        ds::kCountChunkOwnersKernel, ds::kScatterChunksKernel, ds::kCountDigitsKernel,
        ds::kScatterDigitsKernel})
    SPCCL_CHECK(bucketModule().function(kernel, &function));
  return spcclSuccess;
}

bool DevicePairBucketer::bucket(const IndexPartition& partition, Buckets* out, bool* sorted) {
  bool onDevice = false;
  const spcclResult_t result =
      pairs_.bucketPairs(partition.deviceMath(), rankTiles_, out, sorted, &onDevice);
  if (result == spcclSuccess && onDevice) {
    bucketedOnDevice_ = true;
    bytesToHost_ = out->offsets.size() * sizeof(uint64_t) +
                   nnz_ * (pairs_.indexBytes() + spcclTypeSize(type_));
    return true;
  }
  if (result != spcclSuccess) {  // the device failed: this rank reports it, once its part is done
    failure_ = result;
    why_ = threadLastError();
  } else {
    SPCCL_INFO(kLogSparse,
               "%" PRIu64
               " pairs bucketed on the host: no device or pinned host memory for the push "
               "buckets' arrays (%s)",
               static_cast<uint64_t>(nnz_), threadLastError().c_str());
  }
  return false;
}

spcclResult_t DeviceNonZeros::bucketPairs(const ds::PartitionMath& math, DeviceRankTiles* rankTiles,
                                          Buckets* out, bool* sorted, bool* onDevice) {
  static_assert(sizeof(size_t) == sizeof(uint64_t), "Buckets::offsets are copied as uint64");
  const uint64_t nnz = nonZeros(), parts = math.parts;
  const size_t valueBytes = spcclTypeSize(type_);
  *sorted = true;  // (bucket_pairs.h: the Permutation's by the radix passes)
  *onDevice = true;
  out->offsets.assign(parts + 1, 0);
  out->positions.resize(nnz);
  out->values.resize(nnz * valueBytes);
  if (nnz == 0) return spcclSuccess;
  ds::BucketArgs args{};
  args.partition = math;
  args.indices = pairs_.address();
  args.values = pairs_.address() + ds::valuesOffset(nnz, indexBytes_, valueBytes);
  args.nnz = nnz;
  args.indexBytes = indexBytes_;
  args.valueBytes = valueBytes;
  args.chunks = ds::bucketChunksFor(nnz);
  args.rankTiles = ds::rankTilesFor(math);
  // ZenHash's rank tiles: the communicator's, kept between calls, or this
  // call's scratch.
  const bool keptTiles = args.rankTiles > 0 && rankTiles != nullptr;
  const ScratchLayout l =
      layoutFor(nnz, parts, args.chunks, keptTiles ? 0 : args.rankTiles, valueBytes);
  const HostLayout h = hostLayoutFor(nnz, parts, indexBytes_, valueBytes);
  // The copies land in pinned memory (a real driver stages a copy into
  // pageable memory itself), back to the pool on return: after finishQueued.
  device::PinnedBuffer staging;
  device::CuDevicePtr keptCounts = 0;
  bool rankCountsReady = false;
  if (bucketScratch_.reserve(l.bytes, "the push buckets' arrays") != spcclSuccess ||
      (keptTiles && rankTiles->take(math, stream_, parts * args.rankTiles * sizeof(uint64_t),
                                    &keptCounts, &rankCountsReady) != spcclSuccess) ||
      device::acquirePinned(h.bytes, &staging) != spcclSuccess) {
    *onDevice = false;  // nothing queued; the reason is the thread's last error
    return spcclSuccess;
  }
  auto* staged = static_cast<unsigned char*>(staging.data());
  const device::CuDevicePtr base = bucketScratch_.address();
  args.owners = base + l.owners;
  args.positions = base + l.positions;
  args.chunkCounts = base + l.chunkCounts;
  args.digitCounts = base + l.digitCounts;
  args.rankCounts = keptTiles ? keptCounts : base + l.rankCounts;
  args.scanChunkBase = base + l.scanChunkBase;
  args.offsets = base + l.offsets;
  args.outPositions = base + l.outPositions;
  args.outValues = base + l.outValues;
  const device::EmbeddedModule& module = bucketModule();
  const spcclResult_t queued = [&]() -> spcclResult_t {
    spcclResult_t launched = spcclSuccess;
    ds::forEachBucketLaunch(args, base + l.orderA, base + l.orderB, rankCountsReady,
                            [&](const char* kernel, ds::BucketArgs& launchArgs, uint64_t items) {
                              const bool scan = std::strcmp(kernel, ds::kScanKernelOfBuckets) == 0;
                              launched =
                                  launchIn(module, kernel, scan ? 1 : ds::gridFor(items),
                                           scan ? ds::kScanThreads : ds::kThreads, &launchArgs);
                              return launched == spcclSuccess;
                            });
    SPCCL_CHECK(launched);
    const device::CudaDriver* d = device::cudaDriver();
    SPCCL_CHECK(
        copy("the push buckets' offsets to the host",
             d->memcpyDtoHAsync(staged, args.offsets, (parts + 1) * sizeof(uint64_t), stream_),
             "cuMemcpyDtoHAsync"));
    SPCCL_CHECK(copy(
        "the push buckets' positions to the host",
        d->memcpyDtoHAsync(staged + h.positions, args.outPositions, nnz * indexBytes_, stream_),
        "cuMemcpyDtoHAsync"));
    return copy("the push buckets' values to the host",
                d->memcpyDtoHAsync(staged + h.values, args.outValues, nnz * valueBytes, stream_),
                "cuMemcpyDtoHAsync");
  }();
  // (finishQueued waits for the copies into `staging` even where one
  // failed: none is queued when it is read or goes back to the pool.)
  SPCCL_CHECK(finishQueued(queued, "bucketing the input's non-zeros by owner on the device"));
  if (keptTiles) rankTiles->markReady(math);
  std::memcpy(out->offsets.data(), staged, (parts + 1) * sizeof(uint64_t));
  ds::copyPositions(staged + h.positions, nnz, indexBytes_, out->positions.data());
  std::memcpy(out->values.data(), staged + h.values, nnz * valueBytes);
  return spcclSuccess;
}

}  // namespace spccl::sparse
