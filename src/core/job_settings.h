// The settings every rank of a communicator must share: ranks that differ
// build different schedules or cut messages differently, and then hang
// until their deadline or mix up data. Each rank sends its own in the
// rendezvous (RankInfo), and communicator creation fails on every rank,
// naming the knob and two ranks, when they differ.
#pragma once

#include <cstdint>
#include <vector>

#include "spccl.h"

namespace spccl {

struct CommOptions;
struct RankInfo;

struct JobSettings {
  char transport[32] = {};          // SPCCL_TRANSPORT (or spcclConfig_t)
  char algorithm[64] = {};          // SPCCL_ALGO (or spcclConfig_t): every rank's schedule
  uint64_t chunkBytes = 0;          // SPCCL_CHUNK_BYTES: slices of the pipelined schedules
  uint64_t stagingChunkBytes = 0;   // SPCCL_STAGING_CHUNK_BYTES: pieces of large calls
  uint64_t stripeMinBytes = 0;      // SPCCL_NET_STRIPE_MIN_BYTES: the receiver cuts like the sender
  uint64_t sparsePieceBytes = 0;    // SPCCL_SPARSE_PIECE_BYTES: pieces of a sparse stage's message
  uint64_t compressPieceBytes = 0;  // SPCCL_COMPRESS_PIECE_BYTES: pieces of a two-shot owned chunk
  int32_t deviceAllReduce = 1;      // SPCCL_DEVICE_ALLREDUCE: an agreement round per all-reduce
  int32_t checkRoots = 1;           // SPCCL_CHECK_ROOTS: an extra exchange per rooted call
  int32_t profileLinks = 1;   // SPCCL_PROFILE_LINKS (or spcclConfig_t): an exchange at creation
  char tls[8] = {};           // SPCCL_TLS: a TLS client cannot talk to a plain server
  char wireChecksum[8] = {};  // SPCCL_WIRE_CHECKSUM: a receiver checks what senders add
};

// This rank's settings, from the knobs and the resolved config options.
JobSettings localJobSettings(const CommOptions& options);

// spcclInvalidUsage naming the first setting in which a rank differs from
// rank `me`, and both values.
spcclResult_t checkJobSettingsAgree(const std::vector<RankInfo>& ranks, int me);

}  // namespace spccl
