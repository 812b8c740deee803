#include "sparse/sparse_messages.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>

#include "base/check.h"
#include "base/log.h"

namespace spccl::sparse {

Encoding encodeSet(const uint64_t* positions, const void* values, size_t nnz, uint64_t universe,
                   size_t valueBytes, unsigned allowed, std::vector<unsigned char>* out) {
  size_t bytes = 0;
  const Encoding encoding =
      encodeCheapest(positions, values, nnz, universe, valueBytes, allowed, out, &bytes);
  SPCCL_TRACE(kLogSparse, "sparse message: %zu pairs over %llu positions as %s, %zu bytes", nnz,
              static_cast<unsigned long long>(universe), encodingName(encoding), bytes);
  return encoding;
}

Encoding encodeSetInto(const uint64_t* positions, const void* values, size_t nnz, uint64_t universe,
                       size_t valueBytes, unsigned allowed, std::vector<unsigned char>* buffer,
                       size_t* bytes) {
  const Encoding encoding =
      encodeCheapestInto(positions, values, nnz, universe, valueBytes, allowed, buffer, bytes);
  SPCCL_TRACE(kLogSparse, "sparse message: %zu pairs over %llu positions as %s, %zu bytes", nnz,
              static_cast<unsigned long long>(universe), encodingName(encoding), *bytes);
  return encoding;
}

// Senders always pick the cheapest allowed encoding for their actual
// pairs, and every encoding's size grows with nnz (Packed's bound included),
// so the least of the allowed encodings' sizes at maxNnz bounds any message.
// (Taking the largest would make every receive as big as the dense tensor.)
size_t messageCapacity(uint64_t maxNnz, uint64_t universe, size_t valueBytes, unsigned allowed) {
  const size_t nnz = static_cast<size_t>(std::min(maxNnz, universe));
  if ((allowed & kAllEncodings) == 0)
    return encodedBytes(Encoding::Dense, nnz, universe, valueBytes);
  size_t capacity = SIZE_MAX;
  for (Encoding e : {Encoding::Coo, Encoding::Bitmap, Encoding::Packed, Encoding::Dense})
    if (allowed & (1u << static_cast<unsigned>(e)))
      capacity = std::min(capacity, encodedBytes(e, nnz, universe, valueBytes));
  return capacity;
}

spcclResult_t checkEncodingFlags(uint8_t flags, unsigned allowed, int peer) {
  if (flags < static_cast<uint8_t>(Encoding::Coo) ||
      flags > static_cast<uint8_t>(Encoding::Dense) || !(allowed & (1u << flags)))
    return SPCCL_FAIL(spcclRemoteError,
                      "sparse message from rank %d names encoding %u, which this call does not "
                      "allow (mask 0x%x)",
                      peer, flags, allowed);
  return spcclSuccess;
}

spcclResult_t decodeSet(const unsigned char* data, size_t bytes, uint8_t flags, uint64_t universe,
                        size_t valueBytes, unsigned allowed, int peer, SparseSet* out) {
  SPCCL_CHECK(checkEncodingFlags(flags, allowed, peer));
  const spcclResult_t res =
      decode(data, bytes, universe, valueBytes, &out->positions, &out->values);
  // The decoder knows bytes, not who sent them.
  if (res != spcclSuccess)
    return SPCCL_FAIL(res, "message from rank %d: %s", peer, threadLastError().c_str());
  return spcclSuccess;
}

void MessageBuffer::allocate(size_t capacity) {
  if (capacity > capacity_) {
    storage_.reset(new unsigned char[capacity]);  // default-initialised: not zeroed
    capacity_ = capacity;
  }
  size_ = 0;
}

spcclResult_t exchangeMessages(CollContext& ctx, std::span<const Outgoing> sends,
                               std::span<Incoming> receives, SparseRunReport* report) {
  std::vector<PeerRequest> recvRequests(receives.size());
  std::vector<PeerRequest> sendRequests(sends.size());
  for (size_t i = 0; i < receives.size(); ++i) {
    receives[i].data.allocate(receives[i].capacity);
    SPCCL_CHECK(ctx.irecv(receives[i].peer, receives[i].data.data(), receives[i].capacity,
                          &recvRequests[i]));
  }
  for (size_t i = 0; i < sends.size(); ++i) {
    SPCCL_CHECK(
        ctx.isend(sends[i].peer, sends[i].data, sends[i].bytes, &sendRequests[i], sends[i].flags));
    if (report) report->bytesSent += sends[i].bytes;
  }
  for (size_t i = 0; i < receives.size(); ++i) {
    size_t received = 0;
    SPCCL_CHECK(ctx.wait(&recvRequests[i], &received, &receives[i].flags));
    receives[i].data.setSize(received);
    if (report) report->bytesReceived += received;
  }
  return ctx.waitAll(sendRequests);
}

spcclResult_t rankNonZeros(CollContext& ctx, const SparseInput& in, std::vector<uint64_t>* storage,
                           const uint64_t** table) {
  if (in.rankNnz != nullptr) {
    *table = in.rankNnz;
    return spcclSuccess;
  }
  storage->assign(static_cast<size_t>(ctx.nranks()), 0);
  uint64_t mine = in.nnz;
  SPCCL_CHECK(allGatherSmall(ctx, &mine, sizeof(mine), storage->data()));
  *table = storage->data();
  return spcclSuccess;
}

}  // namespace spccl::sparse
