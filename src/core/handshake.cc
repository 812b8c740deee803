#include "core/handshake.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/check.h"
#include "base/knobs.h"
#include "base/libcrypto.h"

namespace spccl {

namespace {

constexpr char kLabel[8] = {'s', 'p', 'c', 'c', 'l', '-', 'h', 's'};

// The fixed-size part of every transcript, little-endian as the hosts are.
struct TranscriptHead {
  char label[8];
  uint32_t version;
  uint32_t role;
  uint64_t commId;
  int32_t srcRank;
  int32_t dstRank;
  uint32_t lane;
  uint32_t reserved;
};

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

spcclResult_t handshakeMac(const JobSecret& secret, const HandshakeContext& context,
                           const Nonce& nonceA, const Nonce& nonceB, const void* payload,
                           size_t payloadBytes, Mac* out) {
  SPCCL_CHECK(libcryptoReady());
  TranscriptHead head{};
  std::memcpy(head.label, kLabel, sizeof(kLabel));
  head.version = kHandshakeVersion;
  head.role = static_cast<uint32_t>(context.role);
  head.commId = context.commId;
  head.srcRank = context.srcRank;
  head.dstRank = context.dstRank;
  head.lane = context.lane;
  std::vector<unsigned char> transcript(sizeof(head) + 2 * kNonceBytes + payloadBytes);
  unsigned char* at = transcript.data();
  std::memcpy(at, &head, sizeof(head));
  std::memcpy(at += sizeof(head), nonceA.data(), kNonceBytes);
  std::memcpy(at += kNonceBytes, nonceB.data(), kNonceBytes);
  if (payloadBytes > 0) std::memcpy(at + kNonceBytes, payload, payloadBytes);
  static const unsigned char kNoKey = 0;
  const unsigned char* key = secret.size > 0 ? secret.bytes.data() : &kNoKey;
  unsigned int length = 0;
  // HMAC() is libcrypto's one-shot form (not deprecated in OpenSSL 3).
  bool ok = HMAC(EVP_sha256(), key, static_cast<int>(secret.size), transcript.data(),
                 transcript.size(), out->data(), &length) != nullptr &&
            length == kMacBytes;
  if (!ok) return SPCCL_FAIL(spcclSystemError, "HMAC-SHA256 (libcrypto) failed");
  return spcclSuccess;
}

bool macEqual(const Mac& a, const Mac& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

spcclResult_t randomBytes(void* out, size_t size) {
  unsigned char* bytes = static_cast<unsigned char*>(out);
  size_t done = 0;
  while (done < size) {
    ssize_t got = getrandom(bytes + done, size - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return SPCCL_FAIL(spcclSystemError, "getrandom failed: %s", std::strerror(errno));
    done += static_cast<size_t>(got);
  }
  return spcclSuccess;
}

spcclResult_t freshNonce(Nonce* out) { return randomBytes(out->data(), out->size()); }

spcclResult_t parseJobSecret(const std::string& text, const std::string& origin, JobSecret* out) {
  std::string digits = text;
  while (!digits.empty() && std::isspace(static_cast<unsigned char>(digits.back())))
    digits.pop_back();
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
    digits = digits.substr(2);
  bool hex = !digits.empty() && digits.size() % 2 == 0;
  for (char c : digits) hex = hex && hexValue(c) >= 0;
  if (!hex || digits.size() < 2 * kSecretMinBytes || digits.size() > 2 * kSecretMaxBytes)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "%s is not a job secret: expected %zu to %zu hex digits (128 to 256 bits), "
                      "got %zu characters",
                      origin.c_str(), 2 * kSecretMinBytes, 2 * kSecretMaxBytes, digits.size());
  JobSecret secret;
  secret.size = static_cast<uint32_t>(digits.size() / 2);
  for (size_t i = 0; i < secret.size; ++i)
    secret.bytes[i] =
        static_cast<unsigned char>(hexValue(digits[2 * i]) * 16 + hexValue(digits[2 * i + 1]));
  *out = secret;
  return spcclSuccess;
}

std::string formatJobSecret(const JobSecret& secret) {
  static const char kDigits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < secret.size; ++i) {
    text += kDigits[secret.bytes[i] >> 4];
    text += kDigits[secret.bytes[i] & 15];
  }
  return text;
}

spcclResult_t readJobSecretFile(const std::string& path, JobSecret* out) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return SPCCL_FAIL(spcclInvalidArgument, "SPCCL_JOB_SECRET_FILE=%s: %s", path.c_str(),
                      std::strerror(errno));
  if ((st.st_mode & 077) != 0)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "SPCCL_JOB_SECRET_FILE=%s has mode %04o: others may read or write it; "
                      "make it 0600 (chmod 600)",
                      path.c_str(), static_cast<unsigned>(st.st_mode & 0777));
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  if (!file)
    return SPCCL_FAIL(spcclInvalidArgument, "SPCCL_JOB_SECRET_FILE=%s cannot be read",
                      path.c_str());
  return parseJobSecret(text.str(), "SPCCL_JOB_SECRET_FILE=" + path, out);
}

spcclResult_t commIdFromSecret(const JobSecret& secret, uint64_t* out) {
  SPCCL_CHECK(libcryptoReady());
  static const char kCommIdLabel[] = "spccl-comm-id";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1 &&
                  EVP_DigestUpdate(ctx, kCommIdLabel, sizeof(kCommIdLabel)) == 1 &&
                  EVP_DigestUpdate(ctx, secret.bytes.data(), secret.size) == 1 &&
                  EVP_DigestFinal_ex(ctx, digest, &length) == 1 && length >= sizeof(*out);
  EVP_MD_CTX_free(ctx);
  if (!ok) return SPCCL_FAIL(spcclSystemError, "SHA-256 (libcrypto) of the job secret failed");
  std::memcpy(out, digest, sizeof(*out));
  return spcclSuccess;
}

spcclResult_t deriveJobSecret(const JobSecret& parent, uint64_t commId, JobSecret* out) {
  HandshakeContext context;
  context.role = HandshakeRole::SplitSecret;
  context.commId = commId;
  Mac mac{};
  SPCCL_CHECK(handshakeMac(parent, context, Nonce{}, Nonce{}, nullptr, 0, &mac));
  static_assert(kMacBytes == kSecretMaxBytes);
  std::memcpy(out->bytes.data(), mac.data(), mac.size());
  out->size = kSecretMaxBytes;
  return spcclSuccess;
}

bool authDisabled() { return knobString("SPCCL_AUTH") == "off"; }

}  // namespace spccl
