#include "spccl_gpu.h"

#include <type_traits>
#include <utility>

// Fallbacks that take part in overload resolution beside spccl.h's
// declarations. Both sit in namespaces directly under the global one, so
// the using-directive below makes these templates visible as if declared
// in the global namespace, next to ::spcclCommGetAsyncError: where spccl.h
// declares the real function, it (a non-template, exact match) wins;
// where it does not, the template is all there is and its return type,
// Absent, says so. Only named inside decltype and discarded if-constexpr
// branches: never defined, never called.
namespace spccl_nccl_gpu_fallback {
struct Absent {};
template <typename... Args>
Absent spcclCommGetAsyncError(Args...);
template <typename... Args>
Absent spcclCommCuDevice(Args...);
}  // namespace spccl_nccl_gpu_fallback

namespace spccl_nccl_gpu_probe {
using namespace spccl_nccl_gpu_fallback;  // NOLINT(google-build-using-namespace)

constexpr bool kHasAsyncError =
    !std::is_same_v<decltype(spcclCommGetAsyncError(std::declval<spcclComm_t>(),
                                                    std::declval<spcclResult_t*>())),
                    Absent>;
constexpr bool kHasCuDevice =
    !std::is_same_v<decltype(spcclCommCuDevice(std::declval<spcclComm_t>(), std::declval<int*>())),
                    Absent>;

// Templates, so that the branch not taken is never instantiated.
template <typename Comm>
spcclResult_t asyncError(Comm comm, spcclResult_t* out) {
  if constexpr (kHasAsyncError) {
    return spcclCommGetAsyncError(comm, out);
  } else {
    (void)comm;
    *out = spcclSuccess;
    return spcclSuccess;
  }
}

template <typename Comm>
spcclResult_t cuDevice(Comm comm, int* device) {
  if constexpr (kHasCuDevice) {
    return spcclCommCuDevice(comm, device);
  } else {
    (void)comm;
    (void)device;
    return spcclInvalidUsage;
  }
}

}  // namespace spccl_nccl_gpu_probe

namespace spccl::nccl {

bool spcclTakesDeviceMemory() {
  return spccl_nccl_gpu_probe::kHasAsyncError && spccl_nccl_gpu_probe::kHasCuDevice;
}

spcclResult_t spcclAsyncErrorOf(spcclComm_t comm, spcclResult_t* out) {
  return spccl_nccl_gpu_probe::asyncError(comm, out);
}

spcclResult_t spcclCuDeviceOf(spcclComm_t comm, int* device) {
  return spccl_nccl_gpu_probe::cuDevice(comm, device);
}

}  // namespace spccl::nccl
