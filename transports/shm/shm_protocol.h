// Wire format of the shm control socket.
//   connect:        ShmHello (sender -> receiver), once
//   each message:   [u64 length][u8 mode] then
//                     mode Inline: length bytes of payload
//                     mode Remote: [u64 sender address]; the receiver copies
//                       the payload with process_vm_readv and answers one byte,
//                       kAck, or kNak when the copy is not permitted, after
//                       which the sender streams the payload as with Inline.
//                     mode Device (cuda_ipc only): [DeviceDescriptor]; the
//                       receiver opens the sender's device allocation (CUDA
//                       IPC), copies the payload and answers kAck, or kNak
//                       and fails (the CPU cannot stream device memory).
// Both ends run on the same host, so integers travel in host order.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spccl::transport::shm {

constexpr uint32_t kHelloMagic = 0x5350534d;  // "SPSM"

struct Hello {
  uint32_t magic;
  int32_t pid;  // the receiver trusts SO_PEERCRED; this one is a cross-check
};

enum class Mode : uint8_t { Inline = 1, Remote = 2, Device = 3 };

// Where a Device message's payload lies: an allocation of the sender
// (a CUipcMemHandle) and the offset in it.
struct DeviceDescriptor {
  unsigned char ipcHandle[64];
  uint64_t offset;
};

constexpr size_t kPrefixBytes = sizeof(uint64_t) + sizeof(uint8_t);
constexpr size_t kRemoteHeaderBytes = kPrefixBytes + sizeof(uint64_t);
constexpr size_t kDeviceHeaderBytes = kPrefixBytes + sizeof(DeviceDescriptor);

// The header a message of `mode` carries before any payload.
inline size_t headerBytesOf(Mode mode) {
  return mode == Mode::Device   ? kDeviceHeaderBytes
         : mode == Mode::Remote ? kRemoteHeaderBytes
                                : kPrefixBytes;
}

constexpr char kAck = 'A';
constexpr char kNak = 'N';

}  // namespace spccl::transport::shm
