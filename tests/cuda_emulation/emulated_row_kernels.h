// Host stand-ins for the token all-reduces' row kernels
// (kernels/device_rows/move_rows.h), for the emulated driver's
// cuLaunchKernel. THIS EMULATES THE GPU: every word (16, 4 or 1 byte(s),
// as the launch says) is moved by the same per-word code as the .cu file,
// one after the other on the stream's thread; it checks the logic, the
// words' alignment and the schedule, never the CUDA kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "emulated_sparse_kernels.h"

namespace spccl::emulation {

bool isRowKernel(const std::string& name);

// As prepareSparseKernel: checks the launch as a GPU would refuse it and
// sets *work to the host stand-in.
CuResult prepareRowKernel(const std::string& name, unsigned gridX, unsigned blockX, void** params,
                          const KernelAccess& access, std::function<void()>* work);

// The word width (RowsArgs::wordBytes) a row kernel's launch parameters
// give: 16, 4 or 1 as prepareRowKernel accepts them. The driver counts
// the launches by it (EmuCudaCounters::rowLaunchesOf*).
uint64_t rowKernelWordBytes(void** params);

}  // namespace spccl::emulation
