// Runs a C++ callable in a CUDA stream's order (cuLaunchHostFunc): after
// the work queued on the stream before it, before the work queued after.
// The callable runs on a thread of the CUDA driver and must not call CUDA.
#pragma once

#include <functional>

#include "device/cuda_driver.h"
#include "spccl.h"

namespace spccl::device {

// `what` names it in the error when the driver refuses (the callable is
// then destroyed without running).
spcclResult_t enqueueHostFunction(CuStream stream, std::function<void()> fn, const char* what);

}  // namespace spccl::device
