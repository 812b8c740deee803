// Host stand-ins for the compressed all-reduce's codec kernels
// (kernels/device_codecs/encode_codes.h, decode_codes.h), for the
// emulated driver's cuLaunchKernel. THIS EMULATES THE GPU: every block,
// group or element is done by the same code as the .cu file, one after the
// other on the stream's thread; it checks the logic and the schedule, never the CUDA
// kernel.
#pragma once

#include <functional>
#include <string>

#include "emulated_sparse_kernels.h"

namespace spccl::emulation {

bool isCodecKernel(const std::string& name);

// As prepareSparseKernel: checks the launch as a GPU would refuse it and
// sets *work to the host stand-in.
CuResult prepareCodecKernel(const std::string& name, unsigned gridX, unsigned blockX, void** params,
                            const KernelAccess& access, std::function<void()>* work);

}  // namespace spccl::emulation
