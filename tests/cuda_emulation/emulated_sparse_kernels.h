// Host stand-ins for the sparse all-reduce's device kernels
// (kernels/device_sparse/extract_nonzeros.h), for the emulated driver's
// cuLaunchKernel. THIS EMULATES THE GPU: the tiles, the scan and the
// pairs are computed by the same element code as the .cu file, one tile
// after the other on the stream's thread; it checks the logic and the
// schedule, never the CUDA kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "driver_results.h"

namespace spccl::emulation {

bool isSparseKernel(const std::string& name);

// Whether [address, +bytes) is memory the launching stream's device may
// touch (the driver's check, emulated_driver.cc).
using KernelAccess = std::function<CuResult(uint64_t address, size_t bytes)>;

// Checks a launch of `name` as a GPU would refuse it (bad grid, memory
// it cannot reach) and, if it may run, sets *work to the host stand-in
// to run in stream order.
CuResult prepareSparseKernel(const std::string& name, unsigned gridX, unsigned blockX,
                             void** params, const KernelAccess& access,
                             std::function<void()>* work);

}  // namespace spccl::emulation
