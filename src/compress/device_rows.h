// The token all-reduces' work on a device tensor (docs/gpu.md, "Token
// all-reduces of device buffers"): kept rows gathered into packed device
// scratch and copied to host memory, the all-reduced packed rows copied
// back and scattered, the pruned rows zeroed, with spccl's kernels
// (kernels/device_rows/move_rows.h) launched through the dlopen'ed
// driver. Every step runs on `stream` and is synchronised before it
// returns; a second tensor's rows (error feedback's residual) move with
// the first's, in the same step. Errors name the call, the tensor, the
// kernel or copy, and the driver's error.
#pragma once

#include <cstddef>
#include <optional>
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
        stream_(stream),
        tokens_(tokens),
        indices_(stream),
        tensor_(tensorName, tensor, rowBytes, stream) {}

  // Loads the kernels (once per context): on the caller's thread, before a
  // host function holds its stream.
  static spcclResult_t loadKernels();

  // A second [tokens x rowBytes] tensor whose rows move with this one's
  // in gather and scatter (error feedback's residual, its own row width):
  // the same indices, uploaded once; its kernel and copy queued behind
  // this tensor's on the stream, and one synchronisation for both.
  void moveAlso(void* tensor, size_t rowBytes, const char* tensorName);

  // host (rows.size() x rowBytes) = the tensor's rows `rows`, packed;
  // alsoHost the same for moveAlso's tensor (if any).
  spcclResult_t gather(std::span<const size_t> rows, void* host, void* alsoHost = nullptr);
  // The tensor's rows `rows` = host's packed rows, and moveAlso's =
  // alsoHost's (as gather left the indices: call after gather with the
  // same rows).
  spcclResult_t scatter(std::span<const size_t> rows, const void* host,
                        const void* alsoHost = nullptr);
  // The tensor's rows `rows` = zero bytes (moveAlso's untouched).
  spcclResult_t zero(std::span<const size_t> rows);

  // Small buffers (scores, masks) between device and host.
  spcclResult_t copyToHost(void* host, const void* device, size_t bytes, const char* what);
  spcclResult_t copyToDevice(void* device, const void* host, size_t bytes, const char* what);

  // Bytes copied so far each way (row indices and moveAlso's rows
  // included).
  size_t bytesToHost() const { return bytesToHost_; }
  size_t bytesToDevice() const { return bytesToDevice_; }

 private:
  // One tensor whose rows move, and its packed rows' device scratch.
  struct Tensor {
    Tensor(const char* tensorName, void* tensorRows, size_t width, device::CuStream stream)
        : name(tensorName), rows(tensorRows), rowBytes(width), packed(stream) {}
    const char* name;
    void* rows;
    size_t rowBytes;
    device::StreamMemory packed;
  };

  spcclResult_t uploadRows(std::span<const size_t> rows, const char* what);
  spcclResult_t queueGather(Tensor& tensor, size_t rowCount, void* host);
  spcclResult_t queueScatter(Tensor& tensor, size_t rowCount, const void* host);
  spcclResult_t launch(const char* kernel, const Tensor& tensor, size_t rowCount) const;
  spcclResult_t copy(const Tensor& tensor, const char* what, device::CuResult result,
                     const char* entry);
  spcclResult_t synchronize(const char* what);
  spcclResult_t finishQueued(spcclResult_t queued, const char* what);

  const char* call_;
  device::CuStream stream_;
  size_t tokens_;
  size_t bytesToHost_ = 0;
  size_t bytesToDevice_ = 0;
  device::StreamMemory indices_;  // the rows being moved, uint64 each
  Tensor tensor_;
  std::optional<Tensor> also_;  // moveAlso's
};

}  // namespace spccl::compress
