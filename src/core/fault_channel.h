// The fault channel: small authenticated messages between the fault
// services of one communicator's ranks (core/fault_service.h), each on a
// connection of its own. It needs nothing from the engine, so it works on
// a communicator that is broken or revoked, and a dead rank costs a refused
// connection, a stopped one a deadline, never a hang.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/socket.h"
#include "core/handshake.h"
#include "spccl.h"

namespace spccl {

enum class FaultKind : uint16_t {
  Revoke = 1,    // one way: the communicator is revoked
  Query = 2,     // agreement `instance`: what is your state? (a reply follows)
  Reply = 3,     // the answer to a Query
  Decide = 4,    // one way: the decision of agreement `instance`
  ShrinkId = 5,  // one way: the unique id of shrink `instance` (payload)
  Accept = 6  // agreement `instance`: accept this value from coordinator `ballot` (a reply follows)
};

// Where a rank stands in one agreement (core/agreement.h).
enum class AgreeStage : uint32_t { NotYet = 0, Proposed = 1, Accepted = 2, Decided = 3 };

struct FaultHeader {
  uint32_t magic = 0x54465053u;  // "SPFT"
  uint16_t version = 1;
  uint16_t kind = 0;
  uint64_t commId = 0;
  int32_t src = -1;
  int32_t dst = -1;
  uint64_t instance = 0;  // the agreement's or the shrink's number on this communicator
  int32_t ballot = -1;    // the coordinator that asks or decides (agreement.h); -1: none
  int32_t flag = 0;
  uint32_t stage = 0;     // AgreeStage, in a Reply
  int32_t promised = -1;  // in a Reply: the highest coordinator the sender answered
  uint64_t digest = 0;    // ShrinkId: which ranks were excluded (shrink.h)
  uint32_t payloadBytes = 0;
  uint32_t reserved = 0;
  Nonce nonce{};    // the sender's, fresh per message
  Nonce replyTo{};  // a Reply: the Query's nonce, so that no old reply verifies
  Mac mac{};        // HMAC over the header (mac zeroed) and the payload
};

struct FaultMessage {
  FaultHeader header;
  std::vector<unsigned char> payload;  // a failed-rank bitmap (one byte a rank) or a unique id
};

// The communicator's identity as the channel needs it.
struct FaultChannelKeys {
  uint64_t commId = 0;
  int rank = -1;
  JobSecret secret;
};

// Fills in commId, src, nonce and mac.
spcclResult_t sealFaultMessage(const FaultChannelKeys& keys, FaultMessage* message);

// Connects once (no retry: a refused connection means the rank is gone)
// and sends; then, if reply is not NULL, waits for the answer. Errors name
// `peerName`: spcclRemoteError when the peer is gone, spcclTimeout when it
// did not answer by the deadline.
spcclResult_t sendFaultMessage(const FaultChannelKeys& keys, const net::SockAddr& to,
                               const std::string& peerName, FaultMessage message,
                               const Deadline& deadline, FaultMessage* reply);

// The checks of a header alone (magic, version, communicator, addressee,
// payload size), before its payload is read.
spcclResult_t checkFaultHeader(const FaultChannelKeys& keys, const FaultHeader& header);
// The MAC of a complete message.
spcclResult_t checkFaultSeal(const FaultChannelKeys& keys, const FaultMessage& message);

// Reads one message from an accepted connection and checks its seal: the
// communicator, the addressee (`keys.rank`) and the MAC.
spcclResult_t receiveFaultMessage(const FaultChannelKeys& keys, int fd, const Deadline& deadline,
                                  FaultMessage* out);

// The largest payload accepted (a bitmap of this many ranks).
inline constexpr uint32_t kMaxFaultPayload = 1u << 20;

}  // namespace spccl
