// SPCCL_WIRE_CHECKSUM (runtime/frame_checksum.h): CRC32C against the
// published check values, and a frame checksum that every header field and
// payload byte changes, except the field that carries it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/check.h"
#include "runtime/frame_checksum.h"

using namespace spccl;

// RFC 3720, appendix B.4 (iSCSI's CRC32C), and the "123456789" check value.
TEST(FrameChecksum, Crc32cMatchesPublishedValues) {
  EXPECT_EQ(crc32c(0, "123456789", 9), 0xe3069283u);
  const std::vector<unsigned char> zeros(32, 0x00), ones(32, 0xff);
  EXPECT_EQ(crc32c(0, zeros.data(), zeros.size()), 0x8a9136aau);
  EXPECT_EQ(crc32c(0, ones.data(), ones.size()), 0x62a8ab43u);
  std::vector<unsigned char> ascending(32);
  for (size_t i = 0; i < ascending.size(); ++i) ascending[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(crc32c(0, ascending.data(), ascending.size()), 0x46dd794eu);
}

TEST(FrameChecksum, Crc32cContinues) {
  const std::string text = "a frame header, then its payload of any length";
  for (size_t cut = 0; cut <= text.size(); ++cut)
    EXPECT_EQ(crc32c(crc32c(0, text.data(), cut), text.data() + cut, text.size() - cut),
              crc32c(0, text.data(), text.size()))
        << cut;
}

TEST(FrameChecksum, CoversEveryByteButItsOwnField) {
  FrameHeader header;
  header.commId = 42;
  header.seq = 7;
  header.length = 100;
  std::vector<unsigned char> payload(100, 3);
  const uint32_t base = frameChecksum(header, payload.data(), payload.size());
  for (size_t byte = 0; byte < sizeof(FrameHeader); ++byte) {
    FrameHeader changed = header;
    reinterpret_cast<unsigned char*>(&changed)[byte] ^= 1;
    const bool ownField = byte >= offsetof(FrameHeader, reserved) &&
                          byte < offsetof(FrameHeader, reserved) + sizeof(header.reserved);
    EXPECT_EQ(frameChecksum(changed, payload.data(), payload.size()) == base, ownField) << byte;
  }
  for (size_t byte = 0; byte < payload.size(); ++byte) {
    payload[byte] ^= 0x80;
    EXPECT_NE(frameChecksum(header, payload.data(), payload.size()), base) << byte;
    payload[byte] ^= 0x80;
  }
  EXPECT_NE(frameChecksum(header, payload.data(), payload.size() - 1), base);
}

TEST(FrameChecksum, KnobTakesOffOrCrc32c) {
  bool on = true;
  ASSERT_EQ(parseWireChecksum("off", &on), spcclSuccess);
  EXPECT_FALSE(on);
  ASSERT_EQ(parseWireChecksum("crc32c", &on), spcclSuccess);
  EXPECT_TRUE(on);
  clearThreadLastError();
  EXPECT_EQ(parseWireChecksum("crc", &on), spcclInvalidArgument);
  EXPECT_NE(threadLastError().find("SPCCL_WIRE_CHECKSUM=crc"), std::string::npos);
}
