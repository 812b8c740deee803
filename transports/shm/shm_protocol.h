// Wire format of the shm control socket.
//   connect:        ShmHello (sender -> receiver), once
//   each message:   [u64 length][u8 mode] then
//                     mode Inline: length bytes of payload
//                     mode Remote: [u64 sender address]; the receiver copies
//                       the payload with process_vm_readv and answers one byte,
//                       kAck, or kNak when the copy is not permitted, after
//                       which the sender streams the payload as with Inline.
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

enum class Mode : uint8_t { Inline = 1, Remote = 2 };

constexpr size_t kPrefixBytes = sizeof(uint64_t) + sizeof(uint8_t);
constexpr size_t kRemoteHeaderBytes = kPrefixBytes + sizeof(uint64_t);

constexpr char kAck = 'A';
constexpr char kNak = 'N';

}  // namespace spccl::transport::shm
