// The CUDA driver calls a test makes itself, found at run time in the
// libcuda.so.1 the loader finds: the emulated one in CI (LD_LIBRARY_PATH
// of the ctest), NVIDIA's on a GPU machine. So one test binary checks the
// emulation's logic in CI and the real driver on a lent GPU. Nothing is
// loaded before the first call, so ranks forked earlier start clean.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace spccl::testing {

struct DriverApi {
  int (*init)(unsigned);
  int (*deviceGet)(int*, int);
  int (*primaryCtxRetain)(void**, int);
  int (*ctxSetCurrent)(void*);
  int (*memAlloc)(uint64_t*, size_t);
  int (*memFree)(uint64_t);
  int (*memcpyHtoD)(uint64_t, const void*, size_t);
  int (*memcpyDtoH)(void*, uint64_t, size_t);
  int (*memcpyAsync)(uint64_t, uint64_t, size_t, void*);
  int (*streamCreate)(void**, unsigned);
  int (*streamSynchronize)(void*);
  int (*streamDestroy)(void*);
};

// The driver, loaded RTLD_GLOBAL (spccl finds it with RTLD_NOLOAD), with
// device 0's primary context current on the calling thread; nullptr when
// there is none.
inline const DriverApi* driverWithContext() {
  static DriverApi api;
  static void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) return nullptr;
  const auto get = [](const char* name) { return dlsym(library, name); };
  api.init = reinterpret_cast<int (*)(unsigned)>(get("cuInit"));
  api.deviceGet = reinterpret_cast<int (*)(int*, int)>(get("cuDeviceGet"));
  api.primaryCtxRetain = reinterpret_cast<int (*)(void**, int)>(get("cuDevicePrimaryCtxRetain"));
  api.ctxSetCurrent = reinterpret_cast<int (*)(void*)>(get("cuCtxSetCurrent"));
  api.memAlloc = reinterpret_cast<int (*)(uint64_t*, size_t)>(get("cuMemAlloc_v2"));
  api.memFree = reinterpret_cast<int (*)(uint64_t)>(get("cuMemFree_v2"));
  api.memcpyHtoD = reinterpret_cast<int (*)(uint64_t, const void*, size_t)>(get("cuMemcpyHtoD_v2"));
  api.memcpyDtoH = reinterpret_cast<int (*)(void*, uint64_t, size_t)>(get("cuMemcpyDtoH_v2"));
  api.memcpyAsync =
      reinterpret_cast<int (*)(uint64_t, uint64_t, size_t, void*)>(get("cuMemcpyAsync"));
  api.streamCreate = reinterpret_cast<int (*)(void**, unsigned)>(get("cuStreamCreate"));
  api.streamSynchronize = reinterpret_cast<int (*)(void*)>(get("cuStreamSynchronize"));
  api.streamDestroy = reinterpret_cast<int (*)(void*)>(get("cuStreamDestroy_v2"));
  int device = 0;
  void* context = nullptr;
  if (api.init == nullptr || api.init(0) != 0 || api.deviceGet(&device, 0) != 0 ||
      api.primaryCtxRetain(&context, device) != 0 || api.ctxSetCurrent(context) != 0)
    return nullptr;
  return &api;
}

}  // namespace spccl::testing
