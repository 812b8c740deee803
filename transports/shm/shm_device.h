// The device side of the cuda_ipc transport (shm_net.h): the shm
// transport's socket protocol with a third message mode, Device
// (shm_protocol.h), for payloads in CUDA device memory. The sender
// exports the allocation holding the payload (a CUDA IPC handle, nothing
// copied); the receiver opens it and copies with the GPU, peer to peer,
// into its own buffer.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <string>

#include "device/cuda_ipc.h"
#include "spccl.h"
#include "transports/shm/shm_protocol.h"

namespace spccl::transport {

// Whether `data` is CUDA device memory of this process (a cuda_ipc sender
// then sends it as a Device message).
bool isDeviceMemory(const void* data);

// The descriptor of `bytes` of device memory at `data`. `peer` names the
// receiver in the error.
spcclResult_t describeDevicePayload(const void* data, size_t bytes, const std::string& peer,
                                    shm::DeviceDescriptor* out);

// A receive comm's view of its sender's device memory: the allocations
// opened so far (a sender reuses its buffers, so handles repeat), and a
// non-blocking stream of its own for the copies (never the legacy stream,
// which would wait for the user's streams, where a held call may wait for
// this very copy).
class DeviceReceiver {
 public:
  explicit DeviceReceiver(std::string peer) : peer_(std::move(peer)) {}
  ~DeviceReceiver();
  DeviceReceiver(const DeviceReceiver&) = delete;
  DeviceReceiver& operator=(const DeviceReceiver&) = delete;

  // Copies `bytes` of the sender's memory that `descriptor` names into
  // `target` (device memory, or host memory the driver knows: pinned or
  // managed), and waits until they are there.
  spcclResult_t copy(const shm::DeviceDescriptor& descriptor, void* target, size_t bytes);

 private:
  using HandleBytes = std::array<unsigned char, sizeof(shm::DeviceDescriptor::ipcHandle)>;
  // At most this many of the sender's allocations stay open; past it all
  // are closed (a sender that keeps allocating would map its whole memory).
  static constexpr size_t kMaxOpened = 64;

  std::string peer_;
  std::map<HandleBytes, device::PeerDeviceMemory> opened_;
  device::CuContext context_ = nullptr;
  device::CuStream stream_ = nullptr;
};

}  // namespace spccl::transport
