// The sparse all-reduce's work on device memory (docs/gpu.md, "Sparse
// all-reduce of device buffers"): a dense device input's non-zeros
// extracted on the GPU, and a result scattered into a dense device output,
// with spccl's kernels (kernels/device_sparse/extract_nonzeros.h) launched
// through the dlopen'ed driver. Every step runs on `stream` and is
// synchronised before it returns (the caller needs the counts on the host).
// Errors name the call, the kernel or copy, and the driver's error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "device/cuda_driver.h"
#include "device/device_memory.h"
#include "kernels/device_sparse/extract_nonzeros.h"
#include "kernels/device_sparse/partition_math.h"
#include "sparse/bucketing.h"
#include "spccl.h"

namespace spccl::device {
class EmbeddedModule;
}

namespace spccl::sparse {

class DeviceRankTiles;  // (device_rank_tiles.h)

// This build has the kernels (CUDA at build time), the loaded driver has
// the module, stream and stream-ordered memory entry points, and `type`
// has kernels.
bool deviceNonZerosAvailable(spcclDataType_t type);

class DeviceNonZeros {
 public:
  // stream: where every kernel, copy and scratch allocation goes (a stream
  // of spccl's own, device/device_memory.h). indexBytes: the pairs' index
  // width both ways, 4 (uint32; only where every index fits:
  // kernels::device_sparse::indexBytesFor) or 8 (uint64).
  DeviceNonZeros(const char* call, spcclDataType_t type, device::CuStream stream,
                 size_t indexBytes = sizeof(uint64_t))
      : call_(call),
        type_(type),
        stream_(stream),
        indexBytes_(indexBytes),
        tileCounts_(stream),
        pairs_(stream),
        bucketScratch_(stream) {}

  // Loads the kernels (once per context; cuModuleLoadData may wait for
  // the device): on the caller's thread, before a host function holds its
  // stream.
  spcclResult_t loadKernels() const;

  // Counts the non-zeros (ZeroTest) of `count` elements of device memory
  // at `input`, and its signed zeros (-0.0), on the device; copies the two
  // totals to the host.
  spcclResult_t count(const void* input, size_t count);
  uint64_t nonZeros() const { return totals_[0]; }
  uint64_t signedZeros() const { return totals_[1]; }
  // The pairs' index width on the device (4 or 8 bytes).
  size_t indexBytes() const { return indexBytes_; }

  // After count: the nonZeros() pairs, ascending by index, written on the
  // device (they stay there for copyPairsToHost and bucketPairs).
  spcclResult_t writePairs();
  // After writePairs: the pairs copied to indices (indexBytes each) and
  // values (host memory; pinned for speed).
  spcclResult_t copyPairsToHost(void* indices, void* values);

  // After writePairs: the pairs, as they lie on the device, by owner of
  // the partition `math` into *out (Balanced Parallelism's push buckets;
  // kernels/device_sparse/bucket_pairs.h, in device_buckets.cc): offsets,
  // positions and values copied to the host. *sorted: every bucket is
  // ascending by position (true: the kernels sort every kind's).
  // *onDevice false (and success): no device memory for the kernels'
  // arrays, nothing was queued: the caller buckets elsewhere (an optional step must not fail a call
  // whose result the host can still give).
  // rankTiles: where a ZenHash partition's rank tiles are kept between
  // calls (nullptr: in this call's scratch, computed every time).
  spcclResult_t bucketPairs(const kernels::device_sparse::PartitionMath& math,
                            DeviceRankTiles* rankTiles, Buckets* out, bool* sorted, bool* onDevice);

  // Whole buffers, for the sides that pairs would not shrink.
  spcclResult_t copyToHost(void* host, const void* device, size_t bytes, const char* what);
  spcclResult_t copyToDevice(void* device, const void* host, size_t bytes, const char* what);

  // output (count elements of device memory) = zeros, then
  // output[indices[i]] = values[i] for nnz pairs given in host memory
  // (indices of indexBytes each).
  spcclResult_t scatter(void* output, size_t count, const void* indices, const void* values,
                        size_t nnz);

 private:
  // "spcclCountNonZeros_f32" for kCountPrefix and f32.
  std::string typed(const char* prefix) const;
  // The extraction kernels' arguments over the counted input (count()).
  kernels::device_sparse::ExtractArgs extractArgs() const;
  spcclResult_t launch(const std::string& kernel, unsigned grid, unsigned threads,
                       void* args) const;
  spcclResult_t launchIn(const device::EmbeddedModule& module, const std::string& kernel,
                         unsigned grid, unsigned threads, void* args) const;
  spcclResult_t copy(const char* what, device::CuResult result, const char* entry);
  spcclResult_t synchronize(const char* what);
  // synchronize where `queued` (a step's enqueues) succeeded; else waits
  // for what the step queued before it failed, and returns its error.
  spcclResult_t finishQueued(spcclResult_t queued, const char* what);

  const char* call_;
  spcclDataType_t type_;
  device::CuStream stream_;
  size_t indexBytes_;
  const void* input_ = nullptr;
  size_t count_ = 0;
  uint64_t blocks_ = 0;
  uint64_t totals_[2] = {0, 0};
  device::StreamMemory tileCounts_;     // blockCounts, blockSignedZeros, totals
  device::StreamMemory pairs_;          // indices, then values
  device::StreamMemory bucketScratch_;  // bucketPairs' arrays (device_buckets.cc)
};

}  // namespace spccl::sparse
