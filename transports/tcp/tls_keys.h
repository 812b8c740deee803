// The TLS 1.3 external pre-shared key of SPCCL_TLS=psk: one per
// communicator, derived from the job secret, so that every rank of a job
// holds it and nobody without the secret does (docs/security.md,
// "Encryption in transit").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "spccl.h"

namespace spccl::transport {

inline constexpr size_t kTlsPskBytes = 32;
using TlsPsk = std::array<unsigned char, kTlsPskBytes>;

// The HKDF label; a new derivation gets a new version.
inline constexpr char kTlsPskLabel[] = "spccl tls psk v1";

// HKDF-SHA256 (RFC 5869): IKM = the secret, no salt, info = label |
// communicator id (8 bytes, little-endian). Fails on an empty secret.
spcclResult_t deriveTlsPsk(const unsigned char* secret, size_t secretBytes, uint64_t commId,
                           TlsPsk* out);

// The PSK identity the client names: public, it only says which
// communicator's key to use ("spccl-psk-v1:" and the id in hex).
std::string tlsPskIdentity(uint64_t commId);

}  // namespace spccl::transport
