#include "runtime/frame_checksum.h"

#include <array>
#include <cstring>

#include "base/check.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace spccl {

namespace {

constexpr uint32_t kCastagnoliReflected = 0x82f63b78u;

std::array<uint32_t, 256> makeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) ? kCastagnoliReflected : 0u);
    table[i] = c;
  }
  return table;
}

uint32_t crc32cTable(uint32_t crc, const unsigned char* p, size_t n) {
  static const std::array<uint32_t, 256> table = makeTable();
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc32cSse42(uint32_t crc, const unsigned char* p,
                                                       size_t n) {
  uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = _mm_crc32_u8(c32, *p);
  return c32;
}

bool hasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t crc32c(uint32_t crc, const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
#if defined(__x86_64__)
  if (hasSse42()) return ~crc32cSse42(crc, p, bytes);
#endif
  return ~crc32cTable(crc, p, bytes);
}

spcclResult_t parseWireChecksum(const std::string& text, bool* on) {
  if (text == "off" || text == "crc32c") {
    *on = text == "crc32c";
    return spcclSuccess;
  }
  return SPCCL_FAIL(spcclInvalidArgument, "SPCCL_WIRE_CHECKSUM=%s: expected off or crc32c",
                    text.c_str());
}

uint32_t frameChecksum(const FrameHeader& header, const void* payload, size_t bytes) {
  FrameHeader copy = header;
  copy.reserved = 0;
  uint32_t crc = crc32c(0, &copy, sizeof(copy));
  return bytes == 0 ? crc : crc32c(crc, payload, bytes);
}

}  // namespace spccl
