#include "device/host_function.h"

#include <memory>

#include "base/check.h"

namespace spccl::device {

namespace {

void runAndDelete(void* userData) {
  std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()>*>(userData));
  (*fn)();
}

}  // namespace

spcclResult_t enqueueHostFunction(CuStream stream, std::function<void()> fn, const char* what) {
  const CudaDriver* d = cudaDriver();
  if (d == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "%s: a stream was given but no CUDA driver is loaded",
                      what);
  auto owned = std::make_unique<std::function<void()>>(std::move(fn));
  const CuResult result = d->launchHostFunc(stream, &runAndDelete, owned.get());
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: %s", what,
                      describeCuError("cuLaunchHostFunc", result).c_str());
  static_cast<void>(owned.release());  // runAndDelete owns it now
  return spcclSuccess;
}

}  // namespace spccl::device
