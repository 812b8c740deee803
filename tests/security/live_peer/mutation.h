// One mutation of the frames a correct rank sends (live_peer_fuzz.cc): its
// kind, which message it hits and a seed for its details. Applied to a copy
// of the bytes the engine hands the transport, so every other byte of the
// stream is exactly what a correct rank sends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace spccl::livefuzz {

enum class MutationKind {
  None,
  HeaderBitFlip,       // one bit of a 64-byte frame header
  HeaderField,         // one header field set to a neighbouring, zero or extreme value
  HugeLength,          // the header's payload length near 2^64
  HeaderTruncate,      // fewer than 64 bytes of a header
  PayloadBitFlip,      // one bit of a payload
  PayloadTruncate,     // a payload cut short (its header unchanged)
  PayloadExtend,       // a payload with extra bytes
  ConsistentTruncate,  // header length and payload both shortened: well framed, short body
  Duplicate,           // a message sent twice
  Drop,                // a message never sent
  CloseMidFrame,       // the process ends with a message half sent
  RawHugePrefix,       // tcp: a transport length prefix near 2^64 on the socket
  RawGarbage,          // tcp: random bytes on the socket in place of a message
};

// "header_bitflip", ...; None for an unknown name.
MutationKind mutationKindFromName(const std::string& name);
const char* mutationKindName(MutationKind kind);
// Which messages a kind targets: headers only, payloads only, or any.
enum class Target { Header, Payload, Any };
Target mutationTarget(MutationKind kind);

struct Mutation {
  MutationKind kind = MutationKind::None;
  uint64_t index = 0;  // among the messages of its target class, counted from arming
  uint64_t seed = 0;
};

// What to put on the wire in place of one message.
struct Rewrite {
  std::vector<std::vector<unsigned char>> sends;  // zero (drop), one or two messages
  size_t truncateNextPayloadBy = 0;               // ConsistentTruncate: cut the body too
  std::vector<unsigned char> raw;                 // bytes written to the socket itself
  bool exitAfter = false;                         // end the process once sent
  std::string description;                        // "flip bit 3 of seq (header #2)"
};

// The rewrite of `message` (a header when isHeader) under `mutation`.
Rewrite rewriteMessage(const Mutation& mutation, const unsigned char* message, size_t size,
                       bool isHeader);

}  // namespace spccl::livefuzz
