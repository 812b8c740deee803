// The frame header that precedes every message between ranks. It names
// the communicator, the collective sequence number and signature (type,
// count, datatype, op, root), and the message's step, so that a rank that
// called a different collective than its peers gets a clear error instead
// of corrupt data. Same-architecture peers are assumed (host byte order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "spccl.h"

namespace spccl {

enum class CollType : uint8_t {
  None = 0,
  AllReduce,
  Broadcast,
  Reduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  AllToAllv,
  Barrier,
  SendRecv,  // point to point, outside the collective sequence
  Internal,  // spccl's own traffic (split, link profiling, agreement)
  SparseAllReduce,
  CompressedAllReduce,
  Migration,
  kCount
};
const char* collTypeName(CollType type);

// What every rank must agree on for one collective call.
// Migration calls (src/migrate) share one CollType and tell their kinds
// apart in the op byte: op = kind * kMigrationKindStride + reduction op.
constexpr uint8_t kMigrationKindStride = 16;  // > spcclNumOps

struct CollSignature {
  CollType type = CollType::None;
  uint8_t datatype = 0;
  uint8_t op = 0;
  int32_t root = -1;
  uint64_t count = 0;
  // "AllReduce(count=10, float32, sum)"
  std::string describe() const;
  bool operator==(const CollSignature&) const = default;
};

// The device-resident path's agreement (coll/device_exchange.h) travels
// as an Internal call whose root tells the collectives apart: -1 - type,
// -2 for the all-reduce; spccl's other Internal calls use -1. Here so
// that describe() can name it in a collective mismatch.
constexpr int32_t deviceAgreementRoot(CollType type) { return -1 - static_cast<int32_t>(type); }

// Close: the sender destroyed its communicator cleanly; EOF without it
// means the sender died. Withdraw: the sender rejected the arguments of its
// collective call `seq` and takes no part in it (Engine::withdraw); like an
// Abort, it carries the spcclResult_t and the sender's error text.
enum class FrameKind : uint16_t { Data = 1, Abort = 2, Hello = 3, Close = 4, Withdraw = 5 };

constexpr uint32_t kFrameMagic = 0x46435053u;  // "SPCF"
constexpr uint16_t kFrameVersion = 1;
// Largest text carried after an Abort or Withdraw header.
constexpr size_t kMaxAbortText = 512;

struct FrameHeader {
  uint32_t magic = kFrameMagic;
  uint16_t version = kFrameVersion;
  uint16_t kind = static_cast<uint16_t>(FrameKind::Data);
  uint64_t commId = 0;
  uint64_t seq = 0;      // collective sequence number (per peer for SendRecv)
  uint32_t step = 0;     // n-th message from this sender to this receiver in the collective;
                         // Hello: the lane the connection is (runtime/engine.h)
  uint8_t collType = 0;  // CollType
  uint8_t datatype = 0;
  uint8_t op = 0;
  uint8_t flags = 0;  // algorithm-defined (e.g. the encoding of a sparse message)
  int32_t root = -1;
  int32_t srcRank = -1;
  uint64_t count = 0;
  uint64_t length = 0;  // payload bytes (Data); text bytes (Abort, Withdraw); secret (Hello)
  uint32_t result = 0;  // Abort, Withdraw: the sender's spcclResult_t
  uint32_t reserved = 0;

  CollSignature signature() const;
  void setSignature(const CollSignature& sig);
};
static_assert(sizeof(FrameHeader) == 64, "frame header is 64 bytes on the wire");

// What a receiver expects of the next frame from one peer.
struct FrameExpectation {
  uint64_t commId = 0;
  uint64_t seq = 0;
  uint32_t step = 0;
  int32_t srcRank = -1;
  CollSignature signature;
  size_t capacity = 0;  // largest payload the posted receive accepts
};

// Checks a received header (receivedBytes as delivered by the transport)
// for framing errors: truncation, wrong magic or version, unknown kind.
// On failure returns spcclRemoteError with a message naming `peerName`.
spcclResult_t checkFraming(const FrameHeader& header, size_t receivedBytes,
                           const std::string& peerName);
// Checks a well-framed Data header against what this rank expects.
// Mismatched collective, count, type, op or root -> spcclInvalidUsage with
// a message that says which rank differs in what; a payload larger than
// the capacity -> spcclInvalidUsage (oversize).
spcclResult_t checkExpectation(const FrameHeader& header, const FrameExpectation& expected,
                               int myRank, const std::string& peerName);

}  // namespace spccl
