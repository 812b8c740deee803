// The handshake messages (src/core/handshake.h, bootstrap.h, comm.h): the
// first bytes an unauthenticated peer sends. A data connection's LaneHello
// (acceptsHello), the rendezvous root's check of a ClientHello
// (helloAcceptable), and the job secret's text (parseJobSecret: from
// SPCCL_JOB_SECRET, a secret file or spcclrun).
// Input: [selector u8][fields of that message's harness].
#include <string>
#include <vector>

#include "core/bootstrap.h"
#include "core/comm.h"
#include "core/handshake.h"
#include "fuzz_support.h"

using namespace spccl;

namespace {

constexpr uint32_t kControlStep = 0xffffffffu;  // comm.cc: the control connection's hello

// [rank u8][nranks u8][lanes u8][taken u32 bitmask][sign u8][secret 32][laneNonce 32][hello]
void laneHello(fuzz::Input& in) {
  spcclComm comm;
  comm.nranks = 2 + in.take<uint8_t>() % 7;
  comm.rank = in.take<uint8_t>() % comm.nranks;
  comm.commId = 0x1234567890abcdefull;
  const size_t lanes = 1 + in.take<uint8_t>() % 8;
  const uint32_t taken = in.take<uint32_t>();
  const bool sign = in.take<uint8_t>() & 1;
  comm.secret.size = kSecretMaxBytes;
  for (auto& b : comm.secret.bytes) b = in.take<uint8_t>();
  comm.ranks.assign(comm.nranks, RankInfo{});
  for (auto& b : comm.ranks[comm.rank].laneNonce) b = in.take<uint8_t>();
  std::vector<PeerConnection> peers(comm.nranks);
  static int openComm;  // any non-null pointer marks a lane as accepted
  for (PeerConnection& p : peers) {
    p.lanes.resize(lanes);
    for (size_t l = 0; l < lanes; ++l)
      if (taken & (1u << l)) p.lanes[l].recvComm = &openComm;
    if (taken & 0x80000000u) p.control.recvComm = &openComm;
  }

  std::vector<unsigned char> bytes = in.rest();
  LaneHello hello;
  std::memset(&hello, 0, sizeof(hello));
  if (!bytes.empty()) std::memcpy(&hello, bytes.data(), std::min(bytes.size(), sizeof(hello)));
  const FrameHeader& h = hello.header;
  const bool fieldsValid = bytes.size() == sizeof(hello) && h.magic == kFrameMagic &&
                           h.kind == static_cast<uint16_t>(FrameKind::Hello) &&
                           h.commId == comm.commId && h.srcRank >= 0 && h.srcRank < comm.nranks &&
                           h.srcRank != comm.rank && (h.step == kControlStep || h.step < lanes);
  if (sign && fieldsValid) {
    // What an honest peer holding the secret sends (comm.cc: connectLanes).
    HandshakeContext context;
    context.role = HandshakeRole::DataConnect;
    context.commId = comm.commId;
    context.srcRank = h.srcRank;
    context.dstRank = comm.rank;
    context.lane = h.step;
    Nonce laneNonce;
    std::memcpy(laneNonce.data(), comm.ranks[comm.rank].laneNonce, laneNonce.size());
    SPCCL_FUZZ_CHECK(handshakeMac(comm.secret, context, laneNonce, hello.nonce, &h, sizeof(h),
                                  &hello.mac) == spcclSuccess);
    std::memcpy(bytes.data(), &hello, sizeof(hello));
  }
  const bool accepted = acceptsHello(comm, peers, bytes.data(), bytes.size());
  if (!fieldsValid) {
    SPCCL_FUZZ_CHECK(!accepted);
    return;
  }
  const Lane& lane =
      h.step == kControlStep ? peers[h.srcRank].control : peers[h.srcRank].lanes[h.step];
  if (sign) SPCCL_FUZZ_CHECK(accepted == (lane.recvComm == nullptr));
  // Unsigned: only a MAC guessed from the input could pass (2^-256).
}

// [commId u64][ClientHello bytes]
void clientHello(fuzz::Input& in) {
  const uint64_t commId = in.take<uint64_t>();
  const ClientHello hello = in.take<ClientHello>();
  if (helloAcceptable(hello, commId)) {
    SPCCL_FUZZ_CHECK(hello.rank >= 0 && hello.rank < hello.nranks);
    SPCCL_FUZZ_CHECK(hello.commId == commId && hello.infoBytes == sizeof(RankInfo));
  }
}

// [text]: parse, format, parse again: the same secret.
void jobSecret(fuzz::Input& in) {
  const std::vector<unsigned char> bytes = in.rest();
  const std::string text(bytes.begin(), bytes.end());
  JobSecret secret;
  if (parseJobSecret(text, "SPCCL_JOB_SECRET", &secret) != spcclSuccess) return;
  SPCCL_FUZZ_CHECK(secret.size >= kSecretMinBytes && secret.size <= kSecretMaxBytes);
  const std::string hex = formatJobSecret(secret);
  SPCCL_FUZZ_CHECK(hex.size() == 2 * secret.size);
  JobSecret again;
  SPCCL_FUZZ_CHECK(parseJobSecret(hex, "formatted", &again) == spcclSuccess);
  SPCCL_FUZZ_CHECK(again.size == secret.size &&
                   std::memcmp(again.bytes.data(), secret.bytes.data(), secret.size) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  switch (in.take<uint8_t>() % 3) {
    case 0:
      laneHello(in);
      break;
    case 1:
      clientHello(in);
      break;
    default:
      jobSecret(in);
      break;
  }
  return 0;
}
