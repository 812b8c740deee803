#include "runtime/frame.h"

#include <cinttypes>
#include <cstdio>

#include "base/check.h"

namespace spccl {

const char* collTypeName(CollType type) {
  switch (type) {
    case CollType::None:
      return "None";
    case CollType::AllReduce:
      return "AllReduce";
    case CollType::Broadcast:
      return "Broadcast";
    case CollType::Reduce:
      return "Reduce";
    case CollType::AllGather:
      return "AllGather";
    case CollType::ReduceScatter:
      return "ReduceScatter";
    case CollType::AllToAll:
      return "AllToAll";
    case CollType::AllToAllv:
      return "AllToAllv";
    case CollType::Barrier:
      return "Barrier";
    case CollType::SendRecv:
      return "Send/Recv";
    case CollType::Internal:
      return "Internal";
    case CollType::SparseAllReduce:
      return "SparseAllReduce";
    case CollType::CompressedAllReduce:
      return "CompressedAllReduce";
    case CollType::Migration:
      return "Migration";
    default:
      return "Unknown";
  }
}

std::string CollSignature::describe() const {
  char text[160];
  const char* typeName = spcclTypeName(static_cast<spcclDataType_t>(datatype));
  if (type == CollType::Migration) {
    std::snprintf(text, sizeof(text), "Migration(kind=%d, count=%" PRIu64 ", %s, %s, root=%d)",
                  op / kMigrationKindStride, count, typeName,
                  spcclOpName(static_cast<spcclRedOp_t>(op % kMigrationKindStride)), root);
    return text;
  }
  // "AllReduce device-path agreement(count=24, float, sum)", not
  // "Internal(..., root=-2)": what a staged peer's frames met.
  const int32_t agreed = -1 - root;
  if (type == CollType::Internal && root <= deviceAgreementRoot(CollType::AllReduce) &&
      agreed < static_cast<int32_t>(CollType::kCount)) {
    std::snprintf(text, sizeof(text), "%s device-path agreement(count=%" PRIu64 ", %s, %s)",
                  collTypeName(static_cast<CollType>(agreed)), count, typeName,
                  spcclOpName(static_cast<spcclRedOp_t>(op)));
    return text;
  }
  std::snprintf(text, sizeof(text), "%s(count=%" PRIu64 ", %s, %s, root=%d)", collTypeName(type),
                count, typeName, spcclOpName(static_cast<spcclRedOp_t>(op)), root);
  return text;
}

CollSignature FrameHeader::signature() const {
  CollSignature sig;
  sig.type = static_cast<CollType>(collType);
  sig.datatype = datatype;
  sig.op = op;
  sig.root = root;
  sig.count = count;
  return sig;
}

void FrameHeader::setSignature(const CollSignature& sig) {
  collType = static_cast<uint8_t>(sig.type);
  datatype = sig.datatype;
  op = sig.op;
  root = sig.root;
  count = sig.count;
}

spcclResult_t checkFraming(const FrameHeader& header, size_t receivedBytes,
                           const std::string& peerName) {
  if (receivedBytes < sizeof(FrameHeader))
    return SPCCL_FAIL(spcclRemoteError, "truncated frame from %s: %zu bytes, header needs %zu",
                      peerName.c_str(), receivedBytes, sizeof(FrameHeader));
  if (header.magic != kFrameMagic)
    return SPCCL_FAIL(spcclRemoteError, "bad frame magic 0x%08x from %s (not an spccl peer?)",
                      header.magic, peerName.c_str());
  if (header.version != kFrameVersion)
    return SPCCL_FAIL(spcclRemoteError, "frame version %u from %s, this rank speaks %u",
                      header.version, peerName.c_str(), kFrameVersion);
  switch (static_cast<FrameKind>(header.kind)) {
    case FrameKind::Data:
    case FrameKind::Hello:
    case FrameKind::Close:
      if (receivedBytes != sizeof(FrameHeader))
        return SPCCL_FAIL(spcclRemoteError, "oversize frame header from %s: %zu bytes",
                          peerName.c_str(), receivedBytes);
      return spcclSuccess;
    case FrameKind::Abort:
    case FrameKind::Withdraw:
      if (header.length > kMaxAbortText || receivedBytes != sizeof(FrameHeader) + header.length)
        return SPCCL_FAIL(
            spcclRemoteError, "malformed %s frame from %s",
            header.kind == static_cast<uint16_t>(FrameKind::Abort) ? "abort" : "withdraw",
            peerName.c_str());
      return spcclSuccess;
  }
  return SPCCL_FAIL(spcclRemoteError, "unknown frame kind %u from %s", header.kind,
                    peerName.c_str());
}

spcclResult_t checkExpectation(const FrameHeader& header, const FrameExpectation& expected,
                               int myRank, const std::string& peerName) {
  const CollSignature theirs = header.signature();
  if (header.commId != expected.commId)
    return SPCCL_FAIL(spcclInternalError,
                      "frame from %s belongs to communicator %" PRIx64 ", expected %" PRIx64,
                      peerName.c_str(), header.commId, expected.commId);
  if (header.srcRank != expected.srcRank)
    return SPCCL_FAIL(spcclRemoteError, "frame on the connection of rank %d claims rank %d (%s)",
                      expected.srcRank, header.srcRank, peerName.c_str());
  if (theirs.type != expected.signature.type || header.seq != expected.seq)
    return SPCCL_FAIL(spcclInvalidUsage,
                      "collective mismatch: rank %d is at call #%" PRIu64
                      " %s but rank %d is at "
                      "call #%" PRIu64 " %s",
                      header.srcRank, header.seq, theirs.describe().c_str(), myRank, expected.seq,
                      expected.signature.describe().c_str());
  if (!(theirs == expected.signature)) {
    const char* what = theirs.count != expected.signature.count         ? "count"
                       : theirs.datatype != expected.signature.datatype ? "datatype"
                       : theirs.op != expected.signature.op             ? "op"
                                                                        : "root";
    return SPCCL_FAIL(spcclInvalidUsage,
                      "collective mismatch in %s at call #%" PRIu64
                      ": rank %d called %s but rank "
                      "%d called %s",
                      what, header.seq, header.srcRank, theirs.describe().c_str(), myRank,
                      expected.signature.describe().c_str());
  }
  if (header.step != expected.step)
    return SPCCL_FAIL(spcclInternalError,
                      "message %u from %s arrived where message %u was expected "
                      "(call #%" PRIu64 ")",
                      header.step, peerName.c_str(), expected.step, header.seq);
  if (header.length > expected.capacity)
    return SPCCL_FAIL(spcclInvalidUsage,
                      "oversize message from %s in %s: %" PRIu64 " bytes, receive buffer holds %zu",
                      peerName.c_str(), theirs.describe().c_str(), header.length,
                      expected.capacity);
  return spcclSuccess;
}

}  // namespace spccl
