// How the sparse algorithms move encoded sets of (position, value) pairs:
// the one place that chooses a message's encoding, names it in the frame
// flags, bounds a receive buffer by what the sender can hold, and posts a
// round of messages to and from several peers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "coll/small_allgather.h"
#include "runtime/coll_context.h"
#include "sparse/encoding.h"
#include "sparse/message_buffer.h"
#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_set.h"
#include "spccl.h"

namespace spccl::sparse {

// Sorts pairs by position (bucketing leaves a bucket in any order, and the
// encodings want ascending positions). Positions must be unique.
void sortByPosition(uint64_t* positions, unsigned char* values, size_t nnz, size_t valueBytes);

// The cheapest allowed encoding of the set, chosen from its own count
// (docs/algorithms.md 2.6 (2)), appended to *out. Returns the encoding, which the
// sender puts in the frame flags.
Encoding encodeSet(const uint64_t* positions, const void* values, size_t nnz, uint64_t universe,
                   size_t valueBytes, unsigned allowed, std::vector<unsigned char>* out);

// The same written at the front of a reused *buffer (encodeCheapestInto):
// *bytes is the message's size, which may be less than buffer->size().
Encoding encodeSetInto(const uint64_t* positions, const void* values, size_t nnz, uint64_t universe,
                       size_t valueBytes, unsigned allowed, std::vector<unsigned char>* buffer,
                       size_t* bytes);

// The largest message a sender of at most maxNnz pairs over `universe`
// positions can produce with an allowed encoding: the receive capacity.
size_t messageCapacity(uint64_t maxNnz, uint64_t universe, size_t valueBytes, unsigned allowed);

// Fails with spcclRemoteError unless the frame's flags name an allowed
// encoding.
spcclResult_t checkEncodingFlags(uint8_t flags, unsigned allowed, int peer);

// Decodes a received message; flags (the frame's) must name an allowed
// encoding, else the peer broke the protocol (spcclRemoteError).
spcclResult_t decodeSet(const unsigned char* data, size_t bytes, uint8_t flags, uint64_t universe,
                        size_t valueBytes, unsigned allowed, int peer, SparseSet* out);

struct Outgoing {
  int peer = -1;
  const unsigned char* data = nullptr;
  size_t bytes = 0;
  uint8_t flags = 0;
};
struct Incoming {
  int peer = -1;
  size_t capacity = 0;
  MessageBuffer data;  // size() is what arrived
  uint8_t flags = 0;
};

// Posts every receive, then every send, and waits for all of them (the
// communicator's deadline). Adds the payload bytes to the report.
spcclResult_t exchangeMessages(CollContext& ctx, std::span<const Outgoing> sends,
                               std::span<Incoming> receives, SparseRunReport* report);

// in.rankNnz if the caller agreed it, else exchanged here into *storage.
spcclResult_t rankNonZeros(CollContext& ctx, const SparseInput& in, std::vector<uint64_t>* storage,
                           const uint64_t** table);

}  // namespace spccl::sparse
