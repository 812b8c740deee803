// The token all-reduces' work on a device tensor (docs/gpu.md, "Token
// all-reduces of device buffers"): kept rows gathered into packed device
// scratch and copied to host memory, the all-reduced packed rows copied
// back and scattered, the pruned rows zeroed, with spccl's kernels
// (kernels/device_rows/move_rows.h) launched through the dlopen'ed
// driver. Every step runs on `stream` and is synchronised before it
// returns. Errors name the call, the kernel or copy, and the driver's
// error.
#pragma once

#include <cstddef>
#include <span>

#include "device/cuda_driver.h"
#include "device/device_memory.h"
#include "spccl.h"

namespace spccl::compress {

// This build has the kernels (CUDA at build time) and the loaded driver
// has the module, stream and stream-ordered memory entry points.
bool deviceRowsAvailable();

class DeviceRows {
 public:
  // tensor: [tokens x rowBytes] of device memory, named `tensor` in
  // errors ("buff", "cfg->residual"). stream: where every kernel, copy
  // and scratch allocation goes (device/device_memory.h).
  DeviceRows(const char* call, device::CuStream stream, void* tensor, size_t tokens,
             size_t rowBytes, const char* tensorName = "buff")
      : call_(call),
        tensorName_(tensorName),
        stream_(stream),
        tensor_(tensor),
        tokens_(tokens),
        rowBytes_(rowBytes),
        indices_(stream),
        packed_(stream) {}

  // Loads the kernels (once per context): on the caller's thread, before a
  // host function holds its stream.
  static spcclResult_t loadKernels();

  // host (rows.size() x rowBytes) = the tensor's rows `rows`, packed.
  spcclResult_t gather(std::span<const size_t> rows, void* host);
  // The tensor's rows `rows` = host's packed rows (as gather left the
  // indices: call after gather with the same rows).
  spcclResult_t scatter(std::span<const size_t> rows, const void* host);
  // The tensor's rows `rows` = zero bytes.
  spcclResult_t zero(std::span<const size_t> rows);

  // Small buffers (scores, masks) between device and host.
  spcclResult_t copyToHost(void* host, const void* device, size_t bytes, const char* what);
  spcclResult_t copyToDevice(void* device, const void* host, size_t bytes, const char* what);

  // Bytes copied so far each way (row indices included).
  size_t bytesToHost() const { return bytesToHost_; }
  size_t bytesToDevice() const { return bytesToDevice_; }

 private:
  spcclResult_t uploadRows(std::span<const size_t> rows, const char* what);
  spcclResult_t launch(const char* kernel, size_t rowCount) const;
  spcclResult_t copy(const char* what, device::CuResult result, const char* entry);
  spcclResult_t synchronize(const char* what);

  const char* call_;
  const char* tensorName_;
  device::CuStream stream_;
  void* tensor_;
  size_t tokens_;
  size_t rowBytes_;
  size_t bytesToHost_ = 0;
  size_t bytesToDevice_ = 0;
  device::StreamMemory indices_;  // the rows being moved, uint64 each
  device::StreamMemory packed_;   // the packed rows
};

}  // namespace spccl::compress
