#include "compress/device_rows.h"

#include <algorithm>
#include <cstdint>

#include "base/check.h"
#include "device/cuda_ipc.h"
#include "device/cuda_module.h"
#include "kernels/device_rows/move_rows.h"
#include "kernels/device_rows/move_rows_image.h"

namespace spccl::compress {

namespace {

namespace dr = kernels::device_rows;

// The row indices go to the device as they lie in the host's vector.
static_assert(sizeof(size_t) == sizeof(uint64_t));

const device::EmbeddedModule& rowsModule() {
  static const device::EmbeddedModule module(dr::moveRowsImage(), dr::moveRowsImageBytes());
  return module;
}

}  // namespace

bool deviceRowsAvailable() {
  return rowsModule().present() && device::cudaModuleDriver() != nullptr &&
         device::cudaIpcDriver() != nullptr && device::streamMemoryDriver() != nullptr;
}

spcclResult_t DeviceRows::loadKernels() {
  device::CuFunction function = nullptr;
  for (const char* kernel : {dr::kGatherKernel, dr::kScatterKernel, dr::kZeroKernel})
    SPCCL_CHECK(rowsModule().function(kernel, &function));
  return spcclSuccess;
}

void DeviceRows::moveAlso(void* tensor, size_t rowBytes, const char* tensorName) {
  also_.emplace(tensorName, tensor, rowBytes, stream_);
}

spcclResult_t DeviceRows::launch(const char* kernel, const Tensor& tensor, size_t rowCount) const {
  device::CuFunction function = nullptr;
  SPCCL_CHECK(rowsModule().function(kernel, &function));
  dr::RowsArgs args{};
  args.tensor = device::devicePointer(tensor.rows);
  args.packed = tensor.packed.address();
  args.rows = indices_.address();
  args.rowCount = rowCount;
  args.rowBytes = tensor.rowBytes;
  args.tokens = tokens_;
  args.wordBytes = dr::wordBytesFor(args.tensor, args.packed, args.rowBytes);
  // Grid-stride: enough blocks to fill a GPU, not one per word.
  const uint64_t words = dr::words(args);
  const auto grid = static_cast<unsigned>(
      std::clamp<uint64_t>((words + dr::kThreads - 1) / dr::kThreads, 1, uint64_t{1} << 16));
  void* params[] = {&args};
  const device::CuResult result = device::cudaModuleDriver()->launchKernel(
      function, grid, 1, 1, dr::kThreads, 1, 1, 0, stream_, params, nullptr);
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: %s: kernel %s: %s", call_, tensor.name, kernel,
                      device::describeCuError("cuLaunchKernel", result).c_str());
  return spcclSuccess;
}

spcclResult_t DeviceRows::copy(const Tensor& tensor, const char* what, device::CuResult result,
                               const char* entry) {
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: %s: copying %s: %s", call_, tensor.name, what,
                      device::describeCuError(entry, result).c_str());
  return spcclSuccess;
}

spcclResult_t DeviceRows::synchronize(const char* what) {
  const device::CuResult result = device::cudaDriver()->streamSynchronize(stream_);
  // The stream's error may come from either tensor's work: both named.
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: %s%s%s: %s: %s", call_, tensor_.name,
                      also_ ? " and " : "", also_ ? also_->name : "", what,
                      device::describeCuError("cuStreamSynchronize", result).c_str());
  return spcclSuccess;
}

// A step whose queueing failed still waits for what it queued before, so
// that no copy into the caller's host memory runs after it returns.
spcclResult_t DeviceRows::finishQueued(spcclResult_t queued, const char* what) {
  if (queued == spcclSuccess) return synchronize(what);
  device::cudaDriver()->streamSynchronize(stream_);
  return queued;
}

spcclResult_t DeviceRows::uploadRows(std::span<const size_t> rows, const char* what) {
  const size_t bytes = rows.size() * sizeof(uint64_t);
  SPCCL_CHECK(indices_.reserve(bytes, "the row indices"));
  SPCCL_CHECK(
      copy(tensor_, what,
           device::cudaDriver()->memcpyHtoDAsync(indices_.address(), rows.data(), bytes, stream_),
           "cuMemcpyHtoDAsync"));
  bytesToDevice_ += bytes;
  return spcclSuccess;
}

spcclResult_t DeviceRows::queueGather(Tensor& tensor, size_t rowCount, void* host) {
  const size_t bytes = rowCount * tensor.rowBytes;
  if (bytes == 0) return spcclSuccess;
  SPCCL_CHECK(tensor.packed.reserve(bytes, "the packed rows"));
  SPCCL_CHECK(launch(dr::kGatherKernel, tensor, rowCount));
  SPCCL_CHECK(
      copy(tensor, "the packed rows to the host",
           device::cudaDriver()->memcpyDtoHAsync(host, tensor.packed.address(), bytes, stream_),
           "cuMemcpyDtoHAsync"));
  bytesToHost_ += bytes;
  return spcclSuccess;
}

spcclResult_t DeviceRows::queueScatter(Tensor& tensor, size_t rowCount, const void* host) {
  const size_t bytes = rowCount * tensor.rowBytes;
  if (bytes == 0) return spcclSuccess;
  SPCCL_CHECK(
      copy(tensor, "the reduced rows to the device",
           device::cudaDriver()->memcpyHtoDAsync(tensor.packed.address(), host, bytes, stream_),
           "cuMemcpyHtoDAsync"));
  bytesToDevice_ += bytes;
  return launch(dr::kScatterKernel, tensor, rowCount);
}

spcclResult_t DeviceRows::gather(std::span<const size_t> rows, void* host, void* alsoHost) {
  if (rows.empty() || tensor_.rowBytes == 0) return spcclSuccess;
  SPCCL_CHECK(uploadRows(rows, "the kept rows' indices to the device"));
  spcclResult_t queued = queueGather(tensor_, rows.size(), host);
  if (queued == spcclSuccess && also_ && alsoHost != nullptr)
    queued = queueGather(*also_, rows.size(), alsoHost);
  return finishQueued(queued, "gathering the kept rows on the device");
}

spcclResult_t DeviceRows::scatter(std::span<const size_t> rows, const void* host,
                                  const void* alsoHost) {
  if (rows.empty() || tensor_.rowBytes == 0) return spcclSuccess;
  spcclResult_t queued = queueScatter(tensor_, rows.size(), host);
  if (queued == spcclSuccess && also_ && alsoHost != nullptr)
    queued = queueScatter(*also_, rows.size(), alsoHost);
  return finishQueued(queued, "scattering the reduced rows on the device");
}

spcclResult_t DeviceRows::zero(std::span<const size_t> rows) {
  if (rows.empty() || tensor_.rowBytes == 0) return spcclSuccess;
  SPCCL_CHECK(uploadRows(rows, "the pruned rows' indices to the device"));
  return finishQueued(launch(dr::kZeroKernel, tensor_, rows.size()),
                      "zeroing the pruned rows on the device");
}

spcclResult_t DeviceRows::copyToHost(void* host, const void* device, size_t bytes,
                                     const char* what) {
  if (bytes == 0) return spcclSuccess;
  SPCCL_CHECK(copy(
      tensor_, what,
      device::cudaDriver()->memcpyDtoHAsync(host, device::devicePointer(device), bytes, stream_),
      "cuMemcpyDtoHAsync"));
  bytesToHost_ += bytes;
  return synchronize(what);
}

spcclResult_t DeviceRows::copyToDevice(void* device, const void* host, size_t bytes,
                                       const char* what) {
  if (bytes == 0) return spcclSuccess;
  SPCCL_CHECK(copy(
      tensor_, what,
      device::cudaDriver()->memcpyHtoDAsync(device::devicePointer(device), host, bytes, stream_),
      "cuMemcpyHtoDAsync"));
  bytesToDevice_ += bytes;
  return synchronize(what);
}

}  // namespace spccl::compress
