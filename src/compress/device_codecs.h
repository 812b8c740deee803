// The compressed all-reduce's output on a device tensor (docs/gpu.md,
// "Compressed all-reduce of device buffers"): the two-shot schedule's
// codes, in host memory, copied to device scratch and decoded there into
// the f32 output by spccl's kernel (kernels/device_codecs/decode_codes.h)
// launched through the dlopen'ed driver: only codes cross PCIe towards the
// device. Every decode runs on `stream` and is synchronised before it
// returns (the schedule reuses the host codes' memory afterwards). Errors
// name the call, the kernel or copy, and the driver's error.
#pragma once

#include <cstddef>

#include "compress/compressed_allreduce.h"
#include "device/cuda_driver.h"
#include "device/device_memory.h"
#include "spccl.h"

namespace spccl::compress {

// This build has the kernel (CUDA at build time) and the loaded driver has
// the module, stream and stream-ordered memory entry points.
bool deviceCodecsAvailable();

class DeviceDecoder : public OutputDecoder {
 public:
  // out: count f32 of device memory. stream: where every copy, kernel and
  // scratch allocation goes (device/device_memory.h).
  DeviceDecoder(const char* call, device::CuStream stream, const kernels::QuantizerSpec& spec,
                float* out)
      : call_(call), stream_(stream), spec_(spec), out_(out), codes_(stream) {}

  // Loads the kernel (once per context): on the caller's thread, before a
  // host function holds its stream.
  static spcclResult_t loadKernels();

  spcclResult_t decode(size_t begin, size_t length, const unsigned char* codes) override;

  // Bytes of codes copied to the device so far.
  size_t bytesToDevice() const { return bytesToDevice_; }
  // Whether a decode failed (a launch or copy: the context may be unusable).
  bool failed() const { return failed_; }

 private:
  spcclResult_t decodeNow(size_t begin, size_t length, const unsigned char* codes);

  const char* call_;
  device::CuStream stream_;
  kernels::QuantizerSpec spec_;
  float* out_;
  size_t bytesToDevice_ = 0;
  bool failed_ = false;
  device::StreamMemory codes_;  // one piece's encoding
};

}  // namespace spccl::compress
