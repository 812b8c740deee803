#include "transports/tcp/tls_keys.h"

#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>

#include "base/check.h"

namespace spccl::transport {

namespace {
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* ctx) const { EVP_PKEY_CTX_free(ctx); }
};
}  // namespace

spcclResult_t deriveTlsPsk(const unsigned char* secret, size_t secretBytes, uint64_t commId,
                           TlsPsk* out) {
  if (secret == nullptr || secretBytes == 0)
    return SPCCL_FAIL(spcclInvalidUsage,
                      "SPCCL_TLS=psk needs a job secret to derive the key from (SPCCL_AUTH=off "
                      "runs without one)");
  unsigned char info[sizeof(kTlsPskLabel) - 1 + sizeof(uint64_t)];
  std::memcpy(info, kTlsPskLabel, sizeof(kTlsPskLabel) - 1);
  for (size_t i = 0; i < sizeof(uint64_t); ++i)
    info[sizeof(kTlsPskLabel) - 1 + i] = static_cast<unsigned char>(commId >> (8 * i));
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr));
  size_t length = out->size();
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) <= 0 ||
      EVP_PKEY_CTX_set_hkdf_md(ctx.get(), EVP_sha256()) <= 0 ||
      EVP_PKEY_CTX_set1_hkdf_key(ctx.get(), secret, static_cast<int>(secretBytes)) <= 0 ||
      EVP_PKEY_CTX_add1_hkdf_info(ctx.get(), info, static_cast<int>(sizeof(info))) <= 0 ||
      EVP_PKEY_derive(ctx.get(), out->data(), &length) <= 0 || length != out->size())
    return SPCCL_FAIL(spcclSystemError, "HKDF-SHA256 of the TLS key failed (OpenSSL)");
  return spcclSuccess;
}

std::string tlsPskIdentity(uint64_t commId) {
  char text[40];
  std::snprintf(text, sizeof(text), "spccl-psk-v1:%016" PRIx64, commId);
  return text;
}

}  // namespace spccl::transport
