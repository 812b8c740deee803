// mergeReceivedSet and mergeReceivedSetIntoDense (received_merge.h).
#include "sparse/received_merge.h"

#include "base/check.h"
#include "sparse/encoding_codecs.h"
#include "sparse/set_merge.h"
#include "sparse/sparse_messages.h"

namespace spccl::sparse {
namespace {

// The gap-coded merges take positions below 2^63 (so that their unchecked
// one- and two-byte gaps cannot wrap); larger universes are decoded.
constexpr uint64_t kLargestGapCodedUniverse = uint64_t{1} << 63;

// The message as gap-coded pairs when it is a Packed message whose header
// and size hold up; false for other encodings, and for a bad header or
// size, which decodeSet then reports.
bool asGapCoded(const ReceivedMessage& m, size_t valueBytes, kernels::GapCodedPairs* coded) {
  // (The message's own first byte, as decode reads it; the frame's flags
  // were checked on their own.)
  if (m.universe > kLargestGapCodedUniverse || m.bytes < kMessageHeaderBytes || m.data == nullptr ||
      m.data[0] != static_cast<unsigned char>(Encoding::Packed))
    return false;
  Encoding encoding{};
  MessageBody body{};
  // (Cannot fail after the checks above but for nnz or the universe, which
  // decodeSet reports again.)
  if (readMessageHeader(m.data, m.bytes, m.universe, valueBytes, &encoding, &body) != spcclSuccess)
    return false;
  return packedParts(body, coded);
}

spcclResult_t decodeReceived(const ReceivedMessage& m, size_t valueBytes, SparseSet* out) {
  return decodeSet(m.data, m.bytes, m.flags, m.universe, valueBytes, m.allowed, m.peer, out);
}

// A message the gap-coded merge rejected: decoding it names the fault as
// decodeSet does for every other path.
spcclResult_t rejected(const ReceivedMessage& m, size_t valueBytes, SparseSet* scratch) {
  SPCCL_CHECK(decodeReceived(m, valueBytes, scratch));
  return SPCCL_FAIL(spcclInternalError,
                    "message from rank %d: the merge rejected a Packed message that decodes",
                    m.peer);
}

}  // namespace

spcclResult_t mergeReceivedSet(spcclDataType_t type, const kernels::SortedPairs& mine,
                               const ReceivedMessage& theirs, bool theirsLower, SparseSet* scratch,
                               SparseSet* out) {
  const size_t valueBytes = spcclTypeSize(type);
  SPCCL_CHECK(checkEncodingFlags(theirs.flags, theirs.allowed, theirs.peer));
  kernels::GapCodedPairs coded;
  if (!asGapCoded(theirs, valueBytes, &coded)) {
    SPCCL_CHECK(decodeReceived(theirs, valueBytes, scratch));
    const kernels::SortedPairs decoded = pairsOf(*scratch);
    mergeSets(type, valueBytes, theirsLower ? decoded : mine, theirsLower ? mine : decoded, out);
    return spcclSuccess;
  }
  const size_t bound = mine.count + coded.count;
  out->positions.resize(bound);
  out->values.resize(bound * valueBytes);
  const size_t merged = kernels::mergeSumGapCoded(type, mine, coded, theirsLower, theirs.universe,
                                                  out->positions.data(), out->values.data());
  if (merged == kernels::kMalformedGapCode) return rejected(theirs, valueBytes, scratch);
  out->positions.resize(merged);
  out->values.resize(merged * valueBytes);
  return spcclSuccess;
}

spcclResult_t mergeReceivedSetIntoDense(spcclDataType_t type, const kernels::SortedPairs& mine,
                                        const ReceivedMessage& theirs, bool theirsLower,
                                        SparseSet* scratch, void* dense, size_t* nonZeros) {
  const size_t valueBytes = spcclTypeSize(type);
  const auto count = static_cast<size_t>(theirs.universe);
  SPCCL_CHECK(checkEncodingFlags(theirs.flags, theirs.allowed, theirs.peer));
  kernels::GapCodedPairs coded;
  if (!asGapCoded(theirs, valueBytes, &coded)) {
    SPCCL_CHECK(decodeReceived(theirs, valueBytes, scratch));
    const kernels::SortedPairs decoded = pairsOf(*scratch);
    *nonZeros = kernels::mergeSumIntoDense(type, theirsLower ? decoded : mine,
                                           theirsLower ? mine : decoded, dense, count);
    return spcclSuccess;
  }
  const size_t written =
      kernels::mergeSumGapCodedIntoDense(type, mine, coded, theirsLower, dense, count);
  if (written == kernels::kMalformedGapCode) return rejected(theirs, valueBytes, scratch);
  *nonZeros = written;
  return spcclSuccess;
}

}  // namespace spccl::sparse
