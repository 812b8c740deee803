#include "cuda_devices.h"

#include <dlfcn.h>

#include <cstring>
#include <memory>

namespace spccl::info {

namespace {

// The runtime API's C signatures (cuda_runtime_api.h); cudaError_t is an
// int enum, 0 = cudaSuccess.
using GetDeviceCountFn = int (*)(int*);
using GetErrorStringFn = const char* (*)(int);
using DeviceGetAttributeFn = int (*)(int*, int, int);
using DeviceGetPciBusIdFn = int (*)(char*, int, int);
using VersionFn = int (*)(int*);
using GetDevicePropertiesFn = int (*)(void*, int);

// cudaDeviceAttr values (cuda_runtime_api.h), stable across releases.
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
// cudaDeviceProp begins with `char name[256]` in every release; the rest
// of its layout changes, so it is read into a buffer far larger than any
// release's struct and only the name is used.
constexpr size_t kDevicePropBufferBytes = 16384;

const char* const kLibraries[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                  "libcudart.so.11.0"};

template <typename Fn>
Fn symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

CudaDevices findCudaDevices() {
  CudaDevices out;
  void* library = nullptr;
  const char* opened = nullptr;
  std::string errors;
  for (const char* name : kLibraries) {
    library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) {
      opened = name;
      break;
    }
    if (errors.empty()) errors = dlerror();
  }
  if (library == nullptr) {
    out.reason = "no CUDA runtime: " + errors;
    return out;
  }
  auto getCount = symbol<GetDeviceCountFn>(library, "cudaGetDeviceCount");
  auto errorString = symbol<GetErrorStringFn>(library, "cudaGetErrorString");
  auto attribute = symbol<DeviceGetAttributeFn>(library, "cudaDeviceGetAttribute");
  auto busId = symbol<DeviceGetPciBusIdFn>(library, "cudaDeviceGetPCIBusId");
  auto runtimeVersion = symbol<VersionFn>(library, "cudaRuntimeGetVersion");
  auto driverVersion = symbol<VersionFn>(library, "cudaDriverGetVersion");
  auto properties = symbol<GetDevicePropertiesFn>(library, "cudaGetDeviceProperties_v2");
  if (properties == nullptr)
    properties = symbol<GetDevicePropertiesFn>(library, "cudaGetDeviceProperties");
  if (getCount == nullptr || errorString == nullptr) {
    out.reason = std::string(opened) + " lacks cudaGetDeviceCount";
    return out;
  }
  int runtime = 0, driver = 0;
  if (runtimeVersion != nullptr) runtimeVersion(&runtime);
  if (driverVersion != nullptr) driverVersion(&driver);
  out.runtime = std::string(opened) + " (runtime " + std::to_string(runtime) + ", driver " +
                (driver > 0 ? std::to_string(driver) : "none") + ")";
  int count = 0;
  const int status = getCount(&count);
  if (status != 0) {
    out.reason = std::string("cudaGetDeviceCount: ") + errorString(status);
    return out;
  }
  if (count == 0) out.reason = "cudaGetDeviceCount found none";
  auto props = std::make_unique<char[]>(kDevicePropBufferBytes);
  for (int dev = 0; dev < count; ++dev) {
    CudaDevice device;
    std::memset(props.get(), 0, kDevicePropBufferBytes);
    if (properties != nullptr && properties(props.get(), dev) == 0)
      device.name.assign(props.get(), strnlen(props.get(), 256));
    char bus[32] = {};
    if (busId != nullptr && busId(bus, sizeof(bus), dev) == 0) device.busId = bus;
    if (attribute != nullptr) {
      attribute(&device.computeMajor, kAttrComputeCapabilityMajor, dev);
      attribute(&device.computeMinor, kAttrComputeCapabilityMinor, dev);
      attribute(&device.multiprocessors, kAttrMultiprocessorCount, dev);
    }
    out.devices.push_back(device);
  }
  return out;
}

}  // namespace spccl::info
