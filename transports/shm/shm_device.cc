#include "transports/shm/shm_device.h"

#include <cstring>

#include "base/check.h"
#include "device/memory_kind.h"

namespace spccl::transport {

namespace {

constexpr unsigned int kNonBlockingStream = 1;  // CU_STREAM_NON_BLOCKING

}  // namespace

bool isDeviceMemory(const void* data) {
  return device::locateBuffer(data).kind == device::MemoryKind::Device;
}

spcclResult_t describeDevicePayload(const void* data, size_t bytes, const std::string& peer,
                                    shm::DeviceDescriptor* out) {
  const device::BufferLocation location = device::locateBuffer(data);
  device::ScopedCudaContext current(location.context);
  device::ExportedDeviceRange range{};
  const std::string what = "cuda_ipc: a message to " + peer;
  SPCCL_CHECK(device::exportDeviceRange(data, bytes, what.c_str(), &range));
  std::memcpy(out->ipcHandle, range.handle.bytes, sizeof(out->ipcHandle));
  out->offset = range.offset;
  return spcclSuccess;
}

DeviceReceiver::~DeviceReceiver() {
  device::ScopedCudaContext current(context_);
  opened_.clear();  // closed in our context
  if (stream_ != nullptr) device::cudaIpcDriver()->streamDestroy(stream_);
}

spcclResult_t DeviceReceiver::copy(const shm::DeviceDescriptor& descriptor, void* target,
                                   size_t bytes) {
  if (bytes == 0) return spcclSuccess;
  const device::BufferLocation location = device::locateBuffer(target);
  if (location.context == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "cuda_ipc: %s sent %zu bytes of device memory, but the receive buffer %p is "
                      "%s, of no CUDA context: receive into device, pinned or managed memory",
                      peer_.c_str(), bytes, target, device::memoryKindName(location.kind));
  if (context_ == nullptr) context_ = location.context;
  device::ScopedCudaContext current(context_);
  const device::CudaIpcDriver* ipc = device::cudaIpcDriver();
  if (stream_ == nullptr) {
    const device::CuResult created = ipc->streamCreate(&stream_, kNonBlockingStream);
    if (created != 0) {
      stream_ = nullptr;
      return SPCCL_FAIL(spcclSystemError, "cuda_ipc: receiving from %s: %s", peer_.c_str(),
                        device::describeCuError("cuStreamCreate", created).c_str());
    }
  }
  HandleBytes key;
  std::memcpy(key.data(), descriptor.ipcHandle, key.size());
  auto it = opened_.find(key);
  if (it == opened_.end()) {
    if (opened_.size() >= kMaxOpened) opened_.clear();
    device::CudaIpcHandle handle{};
    std::memcpy(handle.bytes, key.data(), key.size());
    device::PeerDeviceMemory memory;
    SPCCL_CHECK(memory.open(handle, peer_.c_str()));
    it = opened_.emplace(key, std::move(memory)).first;
  }
  SPCCL_CHECK(device::copyFromPeer(it->second, descriptor.offset, target, bytes, stream_));
  const device::CuResult synced = device::cudaDriver()->streamSynchronize(stream_);
  if (synced != 0)
    return SPCCL_FAIL(spcclSystemError, "cuda_ipc: copying %zu bytes from %s: %s", bytes,
                      peer_.c_str(),
                      device::describeCuError("cuStreamSynchronize", synced).c_str());
  return spcclSuccess;
}

}  // namespace spccl::transport
