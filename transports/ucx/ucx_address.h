// The answer a ucx receiver sends on the side channel (ucx_comm.h):
// [AddressHeader][its UCP worker address]. Apart from the UCX calls so that
// the sender's check of it is testable without UCX (tests/fuzz).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace spccl::ucx {

constexpr uint32_t kAddressMagic = 0x53505558;  // "SPUX"
// Far above a worker address with every transport (hundreds of bytes).
constexpr uint32_t kMaxAddressBytes = 1u << 16;

struct AddressHeader {
  uint32_t magic;
  uint32_t addressLength;
  uint64_t tag;
};

// The header at the start of `received` (at least sizeof(AddressHeader)
// bytes): *header, and the bytes of the whole answer, or 0 when it is not a
// spccl ucx address (wrong magic, an empty or oversize address).
inline size_t addressAnswerBytes(const unsigned char* received, AddressHeader* header) {
  std::memcpy(header, received, sizeof(*header));
  if (header->magic != kAddressMagic || header->addressLength == 0 ||
      header->addressLength > kMaxAddressBytes)
    return 0;
  return sizeof(*header) + header->addressLength;
}

}  // namespace spccl::ucx
