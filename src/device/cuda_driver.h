// The few CUDA driver entry points spccl uses, found at run time.
//
// libspccl.so never links the CUDA driver or runtime: it must load and run
// on hosts with no NVIDIA driver. A process that holds device memory or a
// stream has loaded libcuda.so.1 already (directly, or through a CUDA
// runtime), so the driver is looked up with RTLD_NOLOAD: while it is absent
// there is no device memory to find and no stream to order against.
//
// The types are declared here with the driver ABI's sizes and values, so
// that a build without the CUDA toolkit compiles this file too.
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace spccl::device {

using CuResult = int;  // CUresult; 0 is CUDA_SUCCESS
using CuStream = void*;
using CuContext = void*;
using CuDevicePtr = uint64_t;
using CuHostFn = void (*)(void* userData);

// A device buffer's address as the driver API takes it (the same bits).
inline CuDevicePtr devicePointer(const void* pointer) {
  return reinterpret_cast<CuDevicePtr>(pointer);
}

struct CudaDriver {
  // cuPointerGetAttributes: unlike the singular query it answers memory the
  // driver does not know (plain host memory) with CUDA_SUCCESS and default
  // values, so a host buffer raises no API error (compute-sanitizer reports
  // every failed driver call).
  CuResult (*pointerGetAttributes)(unsigned count, int* attributes, void** data,
                                   CuDevicePtr pointer);
  CuResult (*memcpyDtoH)(void* dst, CuDevicePtr src, size_t bytes);
  CuResult (*memcpyHtoD)(CuDevicePtr dst, const void* src, size_t bytes);
  CuResult (*memcpyDtoHAsync)(void* dst, CuDevicePtr src, size_t bytes, CuStream stream);
  CuResult (*memcpyHtoDAsync)(CuDevicePtr dst, const void* src, size_t bytes, CuStream stream);
  CuResult (*memHostAlloc)(void** pointer, size_t bytes, unsigned int flags);
  CuResult (*memFreeHost)(void* pointer);
  CuResult (*launchHostFunc)(CuStream stream, CuHostFn fn, void* userData);
  CuResult (*streamSynchronize)(CuStream stream);
  CuResult (*streamGetCtx)(CuStream stream, CuContext* context);
  CuResult (*ctxGetCurrent)(CuContext* context);
  CuResult (*ctxPushCurrent)(CuContext context);
  CuResult (*ctxPopCurrent)(CuContext* context);
  CuResult (*ctxGetDevice)(int* device);
  CuResult (*getErrorName)(CuResult error, const char** name);
  CuResult (*getErrorString)(CuResult error, const char** text);
  // For the NCCL interposer (interpose/nccl): copies between any two
  // pointers (unified addressing), ncclMemAlloc's memory, and acting for
  // the caller's context on its own threads.
  CuResult (*memcpyAsync)(CuDevicePtr dst, CuDevicePtr src, size_t bytes, CuStream stream);
  CuResult (*memAlloc)(CuDevicePtr* pointer, size_t bytes);
  CuResult (*memFree)(CuDevicePtr pointer);
  CuResult (*ctxSetCurrent)(CuContext context);
};

// The driver once this process has loaded it, with every entry point
// above found; nullptr before (looked for again at each call until found).
const CudaDriver* cudaDriver();
// What cudaDriver() found so far, without looking again: a dlopen with
// RTLD_NOLOAD costs about 20 us where no driver is loaded, too much to
// repeat per call (the memory-kind checks of a call look first).
const CudaDriver* cudaDriverFoundSoFar();

// An entry point by its ABI name (the _v2 copies take 64-bit device
// pointers), or by `older` in a driver that lacks that name.
template <typename Fn>
bool resolveDriverSymbol(void* library, Fn* fn, const char* name, const char* older = nullptr) {
  *fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (*fn == nullptr && older != nullptr) *fn = reinterpret_cast<Fn>(dlsym(library, older));
  return *fn != nullptr;
}

// A table of driver entry points (CudaDriver, and the tables of
// cuda_ipc.h and cuda_module.h, kept apart so that staging works with a
// driver that lacks theirs), filled once by `fill` from the libcuda.so.1
// this process has loaded (RTLD_NOLOAD: never loading one) and published
// in `slot`. nullptr while no driver is loaded or when fill finds an
// entry point missing; looked for again at the next call.
template <typename Table>
const Table* lookUpDriverTable(std::atomic<const Table*>& slot,
                               bool (*fill)(void* library, Table* table)) {
  const Table* found = slot.load(std::memory_order_acquire);
  if (found != nullptr) return found;
  static std::mutex mutex;  // one per Table
  std::lock_guard<std::mutex> lock(mutex);
  found = slot.load(std::memory_order_relaxed);
  if (found != nullptr) return found;
  void* library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (library == nullptr) return nullptr;
  static Table table;
  if (!fill(library, &table)) return nullptr;
  slot.store(&table, std::memory_order_release);
  return &table;
}

// "cuMemcpyDtoHAsync failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory
// access was encountered, CUresult 700)" for failWith and logs.
std::string describeCuError(const char* what, CuResult result);

// The CUDA device of the calling thread's current context; -1 without
// the driver or a current context.
int currentCudaDevice();

// While alive, `context` is current on the calling thread (pushed when it
// differs from the current one, popped at the end). For work on a thread
// of spccl's own (the queue's worker) on a buffer of that context.
class ScopedCudaContext {
 public:
  explicit ScopedCudaContext(CuContext context);
  ~ScopedCudaContext();
  ScopedCudaContext(const ScopedCudaContext&) = delete;
  ScopedCudaContext& operator=(const ScopedCudaContext&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace spccl::device
