#include "common/device_memory.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace spccl::perf {

// The driver entry points --device uses, by their ABI names.
struct DeviceMemory::Driver {
  using Result = int;
  Result (*init)(unsigned flags);
  Result (*deviceGetCount)(int* count);
  Result (*deviceGet)(int* device, int ordinal);
  Result (*primaryCtxRetain)(void** context, int device);
  Result (*ctxSetCurrent)(void* context);
  Result (*memAlloc)(uint64_t* pointer, size_t bytes);
  Result (*memFree)(uint64_t pointer);
  Result (*memcpyHtoD)(uint64_t device, const void* host, size_t bytes);
  Result (*memcpyDtoH)(void* host, uint64_t device, size_t bytes);
  Result (*streamCreate)(void** stream, unsigned flags);
  Result (*streamDestroy)(void* stream);
  Result (*streamSynchronize)(void* stream);
};

namespace {

[[noreturn]] void die(const char* what, int result) {
  std::fprintf(stderr, "--device: %s failed (CUresult %d)\n", what, result);
  std::exit(2);
}

template <typename Fn>
void resolve(void* library, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (*fn == nullptr) {
    std::fprintf(stderr, "--device: the CUDA driver has no %s\n", name);
    std::exit(2);
  }
}

uint64_t address(const void* pointer) { return reinterpret_cast<uint64_t>(pointer); }

}  // namespace

DeviceMemory::DeviceMemory(int rank) : driver_(std::make_unique<Driver>()) {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) {
    std::fprintf(stderr, "--device: cannot load the CUDA driver (libcuda.so.1): %s\n", dlerror());
    std::exit(2);
  }
  Driver& d = *driver_;
  resolve(library, "cuInit", &d.init);
  resolve(library, "cuDeviceGetCount", &d.deviceGetCount);
  resolve(library, "cuDeviceGet", &d.deviceGet);
  resolve(library, "cuDevicePrimaryCtxRetain", &d.primaryCtxRetain);
  resolve(library, "cuCtxSetCurrent", &d.ctxSetCurrent);
  resolve(library, "cuMemAlloc_v2", &d.memAlloc);
  resolve(library, "cuMemFree_v2", &d.memFree);
  resolve(library, "cuMemcpyHtoD_v2", &d.memcpyHtoD);
  resolve(library, "cuMemcpyDtoH_v2", &d.memcpyDtoH);
  resolve(library, "cuStreamCreate", &d.streamCreate);
  resolve(library, "cuStreamDestroy_v2", &d.streamDestroy);
  resolve(library, "cuStreamSynchronize", &d.streamSynchronize);
  int result = d.init(0);
  if (result != 0) die("cuInit", result);
  int count = 0;
  if ((result = d.deviceGetCount(&count)) != 0 || count < 1) die("cuDeviceGetCount", result);
  int handle = 0;
  if ((result = d.deviceGet(&handle, rank % count)) != 0) die("cuDeviceGet", result);
  void* context = nullptr;
  if ((result = d.primaryCtxRetain(&context, handle)) != 0) die("cuDevicePrimaryCtxRetain", result);
  if ((result = d.ctxSetCurrent(context)) != 0) die("cuCtxSetCurrent", result);
  if ((result = d.streamCreate(&stream_, 0)) != 0) die("cuStreamCreate", result);
  device_ = rank % count;
}

DeviceMemory::~DeviceMemory() {
  if (stream_ != nullptr) driver_->streamDestroy(stream_);
}

void* DeviceMemory::allocate(size_t bytes) {
  uint64_t pointer = 0;
  const int result = driver_->memAlloc(&pointer, bytes > 0 ? bytes : 1);
  if (result != 0) die("cuMemAlloc", result);
  void* device =
      reinterpret_cast<void*>(pointer);  // NOLINT(performance-no-int-to-ptr): driver address
  const std::vector<unsigned char> zeros(bytes, 0);
  upload(device, zeros.data(), bytes);
  return device;
}

void DeviceMemory::release(void* pointer) {
  if (pointer != nullptr) driver_->memFree(address(pointer));
}

void DeviceMemory::upload(void* device, const void* host, size_t bytes) {
  if (bytes == 0) return;
  const int result = driver_->memcpyHtoD(address(device), host, bytes);
  if (result != 0) die("cuMemcpyHtoD", result);
}

void DeviceMemory::download(void* host, const void* device, size_t bytes) {
  if (bytes == 0) return;
  const int result = driver_->memcpyDtoH(host, address(device), bytes);
  if (result != 0) die("cuMemcpyDtoH", result);
}

void DeviceMemory::synchronize() {
  const int result = driver_->streamSynchronize(stream_);
  if (result != 0) die("cuStreamSynchronize", result);
}

}  // namespace spccl::perf
