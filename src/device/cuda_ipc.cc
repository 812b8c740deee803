#include "device/cuda_ipc.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <utility>

#include "base/check.h"

namespace spccl::device {

namespace {

// cuIpcOpenMemHandle_v2 is the name since CUDA 11; the unversioned one is
// the same call in older drivers.
template <typename Fn>
bool resolveAny(void* library, Fn* fn, const char* name, const char* older = nullptr) {
  *fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (*fn == nullptr && older != nullptr) *fn = reinterpret_cast<Fn>(dlsym(library, older));
  return *fn != nullptr;
}

constexpr unsigned int kLazyEnablePeerAccess = 1;  // CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS

}  // namespace

const CudaIpcDriver* cudaIpcDriver() {
  static std::atomic<const CudaIpcDriver*> loaded{nullptr};
  static std::mutex mutex;
  const CudaIpcDriver* d = loaded.load(std::memory_order_acquire);
  if (d != nullptr) return d;
  if (cudaDriver() == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  d = loaded.load(std::memory_order_relaxed);
  if (d != nullptr) return d;
  void* library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (library == nullptr) return nullptr;
  static CudaIpcDriver functions;
  const bool all = resolveAny(library, &functions.ipcGetMemHandle, "cuIpcGetMemHandle") &&
                   resolveAny(library, &functions.ipcOpenMemHandle, "cuIpcOpenMemHandle_v2",
                              "cuIpcOpenMemHandle") &&
                   resolveAny(library, &functions.ipcCloseMemHandle, "cuIpcCloseMemHandle") &&
                   resolveAny(library, &functions.memGetAddressRange, "cuMemGetAddressRange_v2") &&
                   resolveAny(library, &functions.streamCreate, "cuStreamCreate") &&
                   resolveAny(library, &functions.streamDestroy, "cuStreamDestroy_v2");
  if (!all) return nullptr;
  loaded.store(&functions, std::memory_order_release);
  return &functions;
}

spcclResult_t exportDeviceRange(const void* pointer, size_t bytes, const char* what,
                                ExportedDeviceRange* out) {
  const CudaIpcDriver* ipc = cudaIpcDriver();
  if (ipc == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: CUDA IPC needs the CUDA driver loaded, with cuIpcGetMemHandle", what);
  const auto address = reinterpret_cast<CuDevicePtr>(pointer);
  CuDevicePtr base = 0;
  size_t size = 0;
  CuResult result = ipc->memGetAddressRange(&base, &size, address);
  if (result != 0)
    return SPCCL_FAIL(spcclInvalidArgument, "%s (%p) is not device memory of this process: %s",
                      what, pointer, describeCuError("cuMemGetAddressRange", result).c_str());
  const uint64_t offset = address - base;
  if (bytes > size - offset)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s: %zu bytes at %p leave its allocation (%zu bytes at offset %llu)", what,
                      bytes, pointer, size, static_cast<unsigned long long>(offset));
  result = ipc->ipcGetMemHandle(&out->handle, base);
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: %s", what,
                      describeCuError("cuIpcGetMemHandle", result).c_str());
  out->offset = offset;
  out->bytes = bytes;
  return spcclSuccess;
}

PeerDeviceMemory::~PeerDeviceMemory() { close(); }

PeerDeviceMemory::PeerDeviceMemory(PeerDeviceMemory&& other) noexcept
    : base_(std::exchange(other.base_, 0)) {}

PeerDeviceMemory& PeerDeviceMemory::operator=(PeerDeviceMemory&& other) noexcept {
  if (this != &other) {
    close();
    base_ = std::exchange(other.base_, 0);
  }
  return *this;
}

void PeerDeviceMemory::close() {
  if (base_ == 0) return;
  cudaIpcDriver()->ipcCloseMemHandle(base_);
  base_ = 0;
}

spcclResult_t PeerDeviceMemory::open(const CudaIpcHandle& handle, const char* peer) {
  close();
  const CudaIpcDriver* ipc = cudaIpcDriver();
  if (ipc == nullptr)
    return SPCCL_FAIL(spcclSystemError,
                      "device memory of %s: CUDA IPC needs the CUDA driver loaded, with "
                      "cuIpcOpenMemHandle",
                      peer);
  const CuResult result = ipc->ipcOpenMemHandle(&base_, handle, kLazyEnablePeerAccess);
  if (result != 0) {
    base_ = 0;
    return SPCCL_FAIL(spcclSystemError, "opening device memory of %s: %s", peer,
                      describeCuError("cuIpcOpenMemHandle", result).c_str());
  }
  return spcclSuccess;
}

spcclResult_t copyFromPeer(const PeerDeviceMemory& peer, uint64_t offset, void* target,
                           size_t bytes, CuStream stream) {
  // cuMemcpyAsync: the target may be device or host memory (unified
  // addressing); the source is the peer's device memory mapped here.
  const CuResult result = cudaDriver()->memcpyAsync(reinterpret_cast<CuDevicePtr>(target),
                                                    peer.base() + offset, bytes, stream);
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "copying %zu bytes of a peer's device memory: %s", bytes,
                      describeCuError("cuMemcpyAsync", result).c_str());
  return spcclSuccess;
}

}  // namespace spccl::device
