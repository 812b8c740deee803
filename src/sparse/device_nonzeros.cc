#include "sparse/device_nonzeros.h"

#include <algorithm>
#include <string>

#include "base/check.h"
#include "device/cuda_ipc.h"
#include "device/cuda_module.h"
#include "kernels/device_sparse/extract_nonzeros.h"
#include "kernels/device_sparse/extract_nonzeros_image.h"
#include "sparse/device_buckets.h"

namespace spccl::sparse {

namespace {

namespace ds = kernels::device_sparse;
using device::CuDevicePtr;

const device::EmbeddedModule& sparseModule() {
  static const device::EmbeddedModule module(ds::extractNonZerosImage(),
                                             ds::extractNonZerosImageBytes());
  return module;
}

}  // namespace

bool deviceNonZerosAvailable(spcclDataType_t type) {
  return sparseModule().present() && bucketKernelsPresent() && ds::typeSuffix(type) != nullptr &&
         device::cudaModuleDriver() != nullptr && device::cudaIpcDriver() != nullptr &&
         device::streamMemoryDriver() != nullptr;
}

spcclResult_t DeviceNonZeros::loadKernels() const {
  device::CuFunction function = nullptr;
  for (const char* prefix :
       {ds::kCountPrefix, ds::kWritePrefix, ds::kZeroFillPrefix, ds::kScatterPrefix})
    SPCCL_CHECK(sparseModule().function(typed(prefix), &function));
  SPCCL_CHECK(sparseModule().function(ds::kScanKernel, &function));
  return loadBucketKernels();
}

std::string DeviceNonZeros::typed(const char* prefix) const {
  return std::string(prefix) + ds::typeSuffix(type_);
}

spcclResult_t DeviceNonZeros::launch(const std::string& kernel, unsigned grid, unsigned threads,
                                     void* args) const {
  return launchIn(sparseModule(), kernel, grid, threads, args);
}

spcclResult_t DeviceNonZeros::launchIn(const device::EmbeddedModule& module,
                                       const std::string& kernel, unsigned grid, unsigned threads,
                                       void* args) const {
  device::CuFunction function = nullptr;
  SPCCL_CHECK(module.function(kernel, &function));
  void* params[] = {args};
  const device::CuResult result = device::cudaModuleDriver()->launchKernel(
      function, grid, 1, 1, threads, 1, 1, 0, stream_, params, nullptr);
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: kernel %s: %s", call_, kernel.c_str(),
                      device::describeCuError("cuLaunchKernel", result).c_str());
  return spcclSuccess;
}

spcclResult_t DeviceNonZeros::copy(const char* what, device::CuResult result, const char* entry) {
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: copying %s: %s", call_, what,
                      device::describeCuError(entry, result).c_str());
  return spcclSuccess;
}

spcclResult_t DeviceNonZeros::synchronize(const char* what) {
  const device::CuResult result = device::cudaDriver()->streamSynchronize(stream_);
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: %s: %s", call_, what,
                      device::describeCuError("cuStreamSynchronize", result).c_str());
  return spcclSuccess;
}

spcclResult_t DeviceNonZeros::finishQueued(spcclResult_t queued, const char* what) {
  if (queued == spcclSuccess) return synchronize(what);
  // What was queued before the failure still reads or writes the caller's
  // (pinned) memory: done before the call returns and hands it back.
  (void)device::cudaDriver()->streamSynchronize(stream_);
  return queued;
}

ds::ExtractArgs DeviceNonZeros::extractArgs() const {
  const CuDevicePtr base = tileCounts_.address();
  ds::ExtractArgs args{};
  args.input = device::devicePointer(input_);
  args.count = count_;
  args.blocks = blocks_;
  args.blockCounts = base;
  args.blockSignedZeros = base + blocks_ * sizeof(uint64_t);
  args.totals = base + 2 * blocks_ * sizeof(uint64_t);
  return args;
}

spcclResult_t DeviceNonZeros::count(const void* input, size_t count) {
  input_ = input;
  count_ = count;
  blocks_ = ds::tilesFor(count);
  totals_[0] = totals_[1] = 0;
  if (count == 0) return spcclSuccess;
  SPCCL_CHECK(tileCounts_.reserve((2 * blocks_ + 2) * sizeof(uint64_t),
                                  "the non-zero extraction's tile counts"));
  ds::ExtractArgs args = extractArgs();
  const spcclResult_t queued = [&]() -> spcclResult_t {
    SPCCL_CHECK(
        launch(typed(ds::kCountPrefix), static_cast<unsigned>(blocks_), ds::kThreads, &args));
    SPCCL_CHECK(launch(ds::kScanKernel, 1, ds::kScanThreads, &args));
    return copy(
        "the non-zero count to the host",
        device::cudaDriver()->memcpyDtoHAsync(totals_, args.totals, sizeof(totals_), stream_),
        "cuMemcpyDtoHAsync");
  }();
  return finishQueued(queued, "counting the input's non-zeros on the device");
}

spcclResult_t DeviceNonZeros::writePairs() {
  const uint64_t nnz = nonZeros();
  if (nnz == 0) return spcclSuccess;
  const size_t valueBytes = spcclTypeSize(type_);
  SPCCL_CHECK(
      pairs_.reserve(ds::pairsBytes(nnz, indexBytes_, valueBytes), "the input's non-zeros"));
  ds::ExtractArgs args = extractArgs();
  args.outIndices = pairs_.address();
  args.outValues = pairs_.address() + ds::valuesOffset(nnz, indexBytes_, valueBytes);
  args.capacity = nnz;
  args.indexBytes = indexBytes_;
  // Not waited for: the stream orders the copies and bucket kernels that
  // read the pairs, and their wait reports a fault of this kernel.
  const spcclResult_t launched =
      launch(typed(ds::kWritePrefix), static_cast<unsigned>(blocks_), ds::kThreads, &args);
  return launched == spcclSuccess
             ? spcclSuccess
             : finishQueued(launched, "extracting the input's non-zeros on the device");
}

spcclResult_t DeviceNonZeros::copyPairsToHost(void* indices, void* values) {
  const uint64_t nnz = nonZeros();
  if (nnz == 0) return spcclSuccess;
  const size_t valueBytes = spcclTypeSize(type_);
  const CuDevicePtr onDevice = pairs_.address();
  const spcclResult_t queued = [&]() -> spcclResult_t {
    const device::CudaDriver* d = device::cudaDriver();
    SPCCL_CHECK(copy("the non-zeros' indices to the host",
                     d->memcpyDtoHAsync(indices, onDevice, nnz * indexBytes_, stream_),
                     "cuMemcpyDtoHAsync"));
    return copy(
        "the non-zeros' values to the host",
        d->memcpyDtoHAsync(values, onDevice + ds::valuesOffset(nnz, indexBytes_, valueBytes),
                           nnz * valueBytes, stream_),
        "cuMemcpyDtoHAsync");
  }();
  return finishQueued(queued, "copying the input's non-zeros to the host");
}

spcclResult_t DeviceNonZeros::copyToHost(void* host, const void* device, size_t bytes,
                                         const char* what) {
  SPCCL_CHECK(copy(
      what,
      device::cudaDriver()->memcpyDtoHAsync(host, device::devicePointer(device), bytes, stream_),
      "cuMemcpyDtoHAsync"));
  return synchronize(what);
}

spcclResult_t DeviceNonZeros::copyToDevice(void* device, const void* host, size_t bytes,
                                           const char* what) {
  SPCCL_CHECK(copy(
      what,
      device::cudaDriver()->memcpyHtoDAsync(device::devicePointer(device), host, bytes, stream_),
      "cuMemcpyHtoDAsync"));
  return synchronize(what);
}

spcclResult_t DeviceNonZeros::scatter(void* output, size_t count, const void* indices,
                                      const void* values, size_t nnz) {
  if (count == 0) return spcclSuccess;
  const size_t valueBytes = spcclTypeSize(type_);
  ds::ScatterArgs args{};
  args.output = device::devicePointer(output);
  args.count = count;
  args.nnz = nnz;
  args.indexBytes = indexBytes_;
  const spcclResult_t queued = [&]() -> spcclResult_t {
    SPCCL_CHECK(launch(typed(ds::kZeroFillPrefix), ds::gridFor(count), ds::kThreads, &args));
    if (nnz == 0) return spcclSuccess;
    SPCCL_CHECK(
        pairs_.reserve(ds::pairsBytes(nnz, indexBytes_, valueBytes), "the result's non-zeros"));
    args.indices = pairs_.address();
    args.values = pairs_.address() + ds::valuesOffset(nnz, indexBytes_, valueBytes);
    const device::CudaDriver* d = device::cudaDriver();
    SPCCL_CHECK(copy("the result's indices to the device",
                     d->memcpyHtoDAsync(args.indices, indices, nnz * indexBytes_, stream_),
                     "cuMemcpyHtoDAsync"));
    SPCCL_CHECK(copy("the result's values to the device",
                     d->memcpyHtoDAsync(args.values, values, nnz * valueBytes, stream_),
                     "cuMemcpyHtoDAsync"));
    return launch(typed(ds::kScatterPrefix), ds::gridFor(nnz), ds::kThreads, &args);
  }();
  return finishQueued(queued, "writing the result on the device");
}

}  // namespace spccl::sparse
