// Message framing: truncated, oversize and foreign frames are rejected, and
// a mismatched collective is reported with the rank and what differs.
#include <gtest/gtest.h>

#include "base/check.h"
#include "runtime/frame.h"

using namespace spccl;

namespace {

FrameHeader dataHeader() {
  FrameHeader h;
  h.commId = 42;
  h.seq = 7;
  h.step = 3;
  h.srcRank = 2;
  h.setSignature(CollSignature{CollType::AllReduce, spcclFloat32, spcclSum, -1, 1000});
  h.length = 4000;
  return h;
}

FrameExpectation expectationFor(const FrameHeader& h) {
  FrameExpectation e;
  e.commId = h.commId;
  e.seq = h.seq;
  e.step = h.step;
  e.srcRank = h.srcRank;
  e.signature = h.signature();
  e.capacity = h.length;
  return e;
}

TEST(Frame, WellFormedHeaderPasses) {
  FrameHeader h = dataHeader();
  EXPECT_EQ(checkFraming(h, sizeof(h), "peer"), spcclSuccess);
  EXPECT_EQ(checkExpectation(h, expectationFor(h), 1, "peer"), spcclSuccess);
}

TEST(Frame, TruncatedHeaderIsRejected) {
  FrameHeader h = dataHeader();
  EXPECT_EQ(checkFraming(h, sizeof(h) - 1, "rank 2 (x:1)"), spcclRemoteError);
  EXPECT_NE(threadLastError().find("truncated"), std::string::npos);
  EXPECT_NE(threadLastError().find("rank 2 (x:1)"), std::string::npos);
}

TEST(Frame, OversizeHeaderIsRejected) {
  FrameHeader h = dataHeader();
  EXPECT_EQ(checkFraming(h, sizeof(h) + 8, "peer"), spcclRemoteError);
  EXPECT_NE(threadLastError().find("oversize"), std::string::npos);
}

TEST(Frame, WrongMagicAndVersionAreRejected) {
  FrameHeader h = dataHeader();
  h.magic = 0x12345678;
  EXPECT_EQ(checkFraming(h, sizeof(h), "peer"), spcclRemoteError);
  EXPECT_NE(threadLastError().find("magic"), std::string::npos);
  h = dataHeader();
  h.version = 99;
  EXPECT_EQ(checkFraming(h, sizeof(h), "peer"), spcclRemoteError);
  h = dataHeader();
  h.kind = 77;
  EXPECT_EQ(checkFraming(h, sizeof(h), "peer"), spcclRemoteError);
}

TEST(Frame, AbortFrameCarriesBoundedText) {
  FrameHeader h = dataHeader();
  h.kind = static_cast<uint16_t>(FrameKind::Abort);
  h.length = 10;
  EXPECT_EQ(checkFraming(h, sizeof(h) + 10, "peer"), spcclSuccess);
  EXPECT_EQ(checkFraming(h, sizeof(h) + 9, "peer"), spcclRemoteError);
  h.length = kMaxAbortText + 1;
  EXPECT_EQ(checkFraming(h, sizeof(h) + h.length, "peer"), spcclRemoteError);
}

TEST(Frame, MismatchNamesRankAndField) {
  struct Case {
    const char* field;
    void (*change)(FrameHeader&);
  } cases[] = {
      {"count", [](FrameHeader& h) { h.count = 999; }},
      {"datatype", [](FrameHeader& h) { h.datatype = spcclInt32; }},
      {"op", [](FrameHeader& h) { h.op = spcclMax; }},
      {"root", [](FrameHeader& h) { h.root = 3; }},
  };
  for (const Case& c : cases) {
    FrameHeader h = dataHeader();
    FrameExpectation e = expectationFor(h);
    c.change(h);
    EXPECT_EQ(checkExpectation(h, e, 1, "peer"), spcclInvalidUsage) << c.field;
    const std::string& msg = threadLastError();
    EXPECT_NE(msg.find(std::string("mismatch in ") + c.field), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank 2 called"), std::string::npos) << msg;
  }
}

TEST(Frame, DifferentCollectiveOrSequenceIsReported) {
  FrameHeader h = dataHeader();
  FrameExpectation e = expectationFor(h);
  h.collType = static_cast<uint8_t>(CollType::Broadcast);
  EXPECT_EQ(checkExpectation(h, e, 1, "peer"), spcclInvalidUsage);
  EXPECT_NE(threadLastError().find("Broadcast"), std::string::npos);
  h = dataHeader();
  h.seq = 8;
  EXPECT_EQ(checkExpectation(h, e, 1, "peer"), spcclInvalidUsage);
  EXPECT_NE(threadLastError().find("#8"), std::string::npos);
}

// The device-resident path's agreement (an Internal call whose root says
// which collective, deviceAgreementRoot) reads as what it is; spccl's
// other Internal calls (root -1) as before.
TEST(Frame, DeviceAgreementIsDescribedByItsCollective) {
  const CollSignature agreement{CollType::Internal, spcclFloat32, spcclSum,
                                deviceAgreementRoot(CollType::ReduceScatter), 24};
  EXPECT_EQ(agreement.describe(), "ReduceScatter device-path agreement(count=24, float, sum)");
  EXPECT_EQ(deviceAgreementRoot(CollType::AllReduce), -2);
  const CollSignature internal{CollType::Internal, spcclUint8, spcclSum, -1, 16};
  EXPECT_EQ(internal.describe(), "Internal(count=16, uint8, sum, root=-1)");
}

TEST(Frame, PayloadLargerThanReceiveBufferIsRejected) {
  FrameHeader h = dataHeader();
  FrameExpectation e = expectationFor(h);
  e.capacity = 100;
  EXPECT_EQ(checkExpectation(h, e, 1, "peer"), spcclInvalidUsage);
  EXPECT_NE(threadLastError().find("oversize"), std::string::npos);
}

}  // namespace
