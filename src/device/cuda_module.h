// Kernels that libspccl carries as an embedded fatbin (no CUDA link),
// loaded through the driver found at run time (cuda_driver.h):
// cuModuleLoadData per context, cuModuleGetFunction by C name,
// cuLaunchKernel. Kept apart from CudaDriver, like CUDA IPC, so that
// staging works with a driver that lacks these entry points.
#pragma once

#include <cstddef>
#include <string>

#include "device/cuda_driver.h"
#include "spccl.h"

namespace spccl::device {

using CuModule = void*;
using CuFunction = void*;

struct CudaModuleDriver {
  CuResult (*moduleLoadData)(CuModule* module, const void* image);
  CuResult (*moduleGetFunction)(CuFunction* function, CuModule module, const char* name);
  CuResult (*launchKernel)(CuFunction function, unsigned gridX, unsigned gridY, unsigned gridZ,
                           unsigned blockX, unsigned blockY, unsigned blockZ, unsigned sharedBytes,
                           CuStream stream, void** params, void** extra);
};

// The entry points once the driver is loaded with all of them; nullptr
// before, or with a driver that lacks one.
const CudaModuleDriver* cudaModuleDriver();

// One embedded image's kernels: the image is loaded once per CUDA context
// (the first time a thread with that context current asks) and stays
// loaded for the process's life; functions are looked up once per name.
class EmbeddedModule {
 public:
  EmbeddedModule(const unsigned char* image, size_t bytes) : image_(image), bytes_(bytes) {}
  bool present() const { return image_ != nullptr && bytes_ > 0; }
  // The kernel `name` in the calling thread's current context.
  // spcclSystemError naming the call and the driver's error when the image
  // does not load or has no such kernel.
  spcclResult_t function(const std::string& name, CuFunction* out) const;

 private:
  const unsigned char* image_;
  size_t bytes_;
};

}  // namespace spccl::device
