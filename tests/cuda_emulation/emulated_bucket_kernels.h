// Host stand-ins for Balanced Parallelism's device bucketing kernels
// (kernels/device_sparse/bucket_pairs.h), for the emulated driver's
// cuLaunchKernel. THIS EMULATES THE GPU: each thread's element function of
// the .cu file runs in turn on the stream's thread; it checks the logic and
// the schedule, never the CUDA kernel.
#pragma once

#include <functional>
#include <string>

#include "driver_results.h"
#include "emulated_sparse_kernels.h"

namespace spccl::emulation {

bool isBucketKernel(const std::string& name);

// As prepareSparseKernel (emulated_sparse_kernels.h): refuses a launch a
// GPU would refuse (the scan not one block of kScanThreads, memory the
// device cannot reach), else sets *work to the stand-in.
CuResult prepareBucketKernel(const std::string& name, unsigned gridX, unsigned blockX,
                             void** params, const KernelAccess& access,
                             std::function<void()>* work);

}  // namespace spccl::emulation
