// SPCCL_WIRE_CHECKSUM=crc32c: each data frame's header carries, in its
// `reserved` field, the CRC32C (Castagnoli) of the header (that field as 0)
// and the payload, so a frame altered between the sender's engine and the
// receiver's (a wire, a NIC, a transport bug) fails the call naming the
// peer instead of returning wrong data. It detects corruption, not a
// forger: any rank can compute it (docs/security.md, "Integrity"). A job
// setting: every rank checks what every rank sends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/frame.h"

namespace spccl {

// CRC32C of `bytes`, continuing from `crc` (0 to start). SSE4.2's crc32
// instruction where the CPU has it, else a table (the same values).
uint32_t crc32c(uint32_t crc, const void* data, size_t bytes);

// SPCCL_WIRE_CHECKSUM's value: "off" or "crc32c"; anything else is
// spcclInvalidArgument naming the knob.
spcclResult_t parseWireChecksum(const std::string& text, bool* on);

// The checksum of one data frame: header (reserved taken as 0), then payload.
uint32_t frameChecksum(const FrameHeader& header, const void* payload, size_t bytes);

}  // namespace spccl
