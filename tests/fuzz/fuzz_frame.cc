// The frame decoder (src/runtime/frame.h): every message a rank receives
// from a peer starts with a FrameHeader that checkFraming and
// checkExpectation judge before the engine trusts a byte of it.
// Input: [expectation: commId u64, seq u64, step u32, srcRank i32, type u8,
// datatype u8, op u8, root i32, count u64, capacity u32][received bytes].
#include <string>

#include "fuzz_support.h"
#include "runtime/frame.h"

using namespace spccl;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  FrameExpectation expected;
  expected.commId = in.take<uint64_t>();
  expected.seq = in.take<uint64_t>();
  expected.step = in.take<uint32_t>();
  expected.srcRank = in.take<int32_t>();
  expected.signature.type =
      static_cast<CollType>(in.take<uint8_t>() % static_cast<uint8_t>(CollType::kCount));
  expected.signature.datatype = in.take<uint8_t>();
  expected.signature.op = in.take<uint8_t>();
  expected.signature.root = in.take<int32_t>();
  expected.signature.count = in.take<uint64_t>();
  expected.capacity = in.take<uint32_t>();
  const int myRank = 0;
  const std::string peer = "rank 1 (fuzz)";

  // What the transport delivered: the engine copies the header out of its
  // inbox (sizeof(FrameHeader) + kMaxAbortText bytes) and checks the size.
  const std::vector<unsigned char> received = in.rest();
  FrameHeader header;
  std::memset(&header, 0, sizeof(header));
  if (!received.empty())
    std::memcpy(&header, received.data(), std::min(received.size(), sizeof(header)));
  // Describing a peer's signature (mismatch messages) must work on any bytes.
  const std::string theirs = header.signature().describe();
  SPCCL_FUZZ_CHECK(!theirs.empty());
  if (checkFraming(header, received.size(), peer) != spcclSuccess) return 0;

  switch (static_cast<FrameKind>(header.kind)) {
    case FrameKind::Abort:
    case FrameKind::Withdraw: {
      // Engine::abortedBy / withdrawnBy read header.length bytes of text.
      SPCCL_FUZZ_CHECK(header.length <= kMaxAbortText);
      SPCCL_FUZZ_CHECK(received.size() == sizeof(FrameHeader) + header.length);
      std::string text(reinterpret_cast<const char*>(received.data()) + sizeof(FrameHeader),
                       header.length);
      SPCCL_FUZZ_CHECK(text.size() == header.length);
      break;
    }
    case FrameKind::Data:
      SPCCL_FUZZ_CHECK(received.size() == sizeof(FrameHeader));
      if (checkExpectation(header, expected, myRank, peer) == spcclSuccess) {
        // Nothing past the posted receive's capacity is ever accepted.
        SPCCL_FUZZ_CHECK(header.length <= expected.capacity);
        SPCCL_FUZZ_CHECK(header.signature() == expected.signature);
        SPCCL_FUZZ_CHECK(header.commId == expected.commId && header.seq == expected.seq &&
                         header.step == expected.step && header.srcRank == expected.srcRank);
      }
      break;
    case FrameKind::Hello:
    case FrameKind::Close:
      SPCCL_FUZZ_CHECK(received.size() == sizeof(FrameHeader));
      break;
    default:
      SPCCL_FUZZ_CHECK(false && "checkFraming accepted an unknown kind");
  }
  return 0;
}
