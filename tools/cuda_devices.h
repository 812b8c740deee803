// The CUDA devices of this machine, for spccl_info --topo. libcudart is
// opened with dlopen when asked, never linked: spccl runs where there is
// no CUDA at all.
#pragma once

#include <string>
#include <vector>

namespace spccl::info {

struct CudaDevice {
  std::string name;   // "NVIDIA H100 80GB HBM3"
  std::string busId;  // "0000:1B:00.0"
  int computeMajor = 0, computeMinor = 0;
  int multiprocessors = 0;
};

struct CudaDevices {
  std::vector<CudaDevice> devices;
  std::string runtime;  // "libcudart.so (runtime 13000, driver 13000)"
  std::string reason;   // why there are none: no libcudart, no driver, no device
};

CudaDevices findCudaDevices();

}  // namespace spccl::info
