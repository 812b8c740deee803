#include "base/libcrypto.h"

#include <openssl/crypto.h>

#include "base/check.h"

namespace spccl {

spcclResult_t libcryptoReady() {
  // (A function-local static: set up once, by whichever thread comes first.)
  static const bool ready =
      OPENSSL_init_crypto(0, nullptr) == 1 && OSSL_LIB_CTX_get0_global_default() != nullptr;
  if (!ready)
    return SPCCL_FAIL(spcclSystemError,
                      "libcrypto (OpenSSL) could not set itself up (out of memory?): this "
                      "process cannot authenticate or encrypt a connection");
  return spcclSuccess;
}

}  // namespace spccl
