#include "device/cuda_ipc.h"

#include <atomic>
#include <utility>

#include "base/check.h"

namespace spccl::device {

namespace {

// cuIpcOpenMemHandle_v2 is the name since CUDA 11; the unversioned one is
// the same call in older drivers.
bool resolveIpc(void* library, CudaIpcDriver* d) {
  return resolveDriverSymbol(library, &d->ipcGetMemHandle, "cuIpcGetMemHandle") &&
         resolveDriverSymbol(library, &d->ipcOpenMemHandle, "cuIpcOpenMemHandle_v2",
                             "cuIpcOpenMemHandle") &&
         resolveDriverSymbol(library, &d->ipcCloseMemHandle, "cuIpcCloseMemHandle") &&
         resolveDriverSymbol(library, &d->memGetAddressRange, "cuMemGetAddressRange_v2") &&
         resolveDriverSymbol(library, &d->streamCreate, "cuStreamCreate") &&
         resolveDriverSymbol(library, &d->streamDestroy, "cuStreamDestroy_v2") &&
         resolveDriverSymbol(library, &d->eventCreate, "cuEventCreate") &&
         resolveDriverSymbol(library, &d->eventRecord, "cuEventRecord") &&
         resolveDriverSymbol(library, &d->eventQuery, "cuEventQuery") &&
         resolveDriverSymbol(library, &d->eventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
}

constexpr unsigned int kLazyEnablePeerAccess = 1;  // CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS

}  // namespace

const CudaIpcDriver* cudaIpcDriver() {
  static std::atomic<const CudaIpcDriver*> loaded{nullptr};
  if (cudaDriver() == nullptr) return nullptr;
  return lookUpDriverTable(loaded, resolveIpc);
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
