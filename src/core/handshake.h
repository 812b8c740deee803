// Connection authentication: the job secret (128 to 256 bits, never sent),
// where it comes from (SPCCL_JOB_SECRET, SPCCL_JOB_SECRET_FILE, the unique
// id), and HMAC-SHA256 (OpenSSL's libcrypto) over a handshake transcript
// that binds both nonces, the communicator id, both ranks, the protocol
// version and the connection's role. docs/security.md has the messages.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "spccl.h"

namespace spccl {

inline constexpr uint32_t kHandshakeVersion = 2;
inline constexpr size_t kSecretMaxBytes = 32;  // 256 bits: what spcclrun draws
inline constexpr size_t kSecretMinBytes = 16;  // 128 bits: the least accepted
inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kMacBytes = 32;

using Nonce = std::array<unsigned char, kNonceBytes>;
using Mac = std::array<unsigned char, kMacBytes>;

struct JobSecret {
  std::array<unsigned char, kSecretMaxBytes> bytes{};
  uint32_t size = 0;  // 0: none (only with SPCCL_AUTH=off)
  bool empty() const { return size == 0; }
};

// The role of the side that computes a MAC. Each side proves its own role,
// so a peer's proof reflected back never verifies.
enum class HandshakeRole : uint32_t {
  RendezvousRoot = 1,    // the root's answer to a rank's challenge
  RendezvousClient = 2,  // a rank's proof to the root, covering its RankInfo
  RendezvousReply = 3,   // the root's final reply and table to one rank
  DataConnect = 4,       // a lane's or control connection's hello
  SplitSecret = 5,       // deriving a split communicator's secret
  FaultMessage = 6,      // a revoke, agreement or shrink message (core/fault_channel.h)
};

// What a MAC covers besides the nonces and the payload.
struct HandshakeContext {
  HandshakeRole role = HandshakeRole::RendezvousClient;
  uint64_t commId = 0;
  int32_t srcRank = -1;
  int32_t dstRank = -1;  // -1: the rendezvous root
  uint32_t lane = 0;     // a data connection's lane (0xffffffff: control)
};

// HMAC-SHA256(secret, "spccl-hs" | version | role | commId | srcRank |
// dstRank | lane | nonceA | nonceB | payload). Fails only when libcrypto does.
spcclResult_t handshakeMac(const JobSecret& secret, const HandshakeContext& context,
                           const Nonce& nonceA, const Nonce& nonceB, const void* payload,
                           size_t payloadBytes, Mac* out);
// Constant-time comparison.
bool macEqual(const Mac& a, const Mac& b);
// Fresh random bytes (getrandom); fails rather than falling back to a weak source.
spcclResult_t randomBytes(void* out, size_t size);
spcclResult_t freshNonce(Nonce* out);

// 32 to 64 hex digits (128 to 256 bits), optional 0x prefix. `origin`
// names the variable or file in the error (never the value).
spcclResult_t parseJobSecret(const std::string& text, const std::string& origin, JobSecret* out);
// Lower-case hex, no prefix.
std::string formatJobSecret(const JobSecret& secret);
// Reads a secret file: hex text as above. A file that others may read or
// write (mode & 077) is refused.
spcclResult_t readJobSecretFile(const std::string& path, JobSecret* out);
// A 64-bit communicator id that every rank with the same secret computes
// alike: SHA-256("spccl-comm-id" | secret), first 8 bytes. Reveals nothing
// useful about the secret. Fails only where libcrypto cannot set itself
// up (out of memory).
spcclResult_t commIdFromSecret(const JobSecret& secret, uint64_t* out);
// A child communicator's secret: HMAC(parent, SplitSecret | commId), 256
// bits (spcclCommSplit); every member computes it without sending it.
spcclResult_t deriveJobSecret(const JobSecret& parent, uint64_t commId, JobSecret* out);
// SPCCL_AUTH: "on" (default) or "off". Off runs without a secret, logging
// one WARN; a secret given anyway is still used.
bool authDisabled();

}  // namespace spccl
