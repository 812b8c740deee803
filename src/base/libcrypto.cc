#include "base/libcrypto.h"

#include <openssl/crypto.h>

#include "base/check.h"

namespace spccl {

spcclResult_t libcryptoReady() {
  // (A function-local static: set up once, by whichever thread comes first.)
  // Without OpenSSL's clean-up at exit: a rendezvous root's thread
  // (detached, core/bootstrap.cc) may be inside an HMAC while the process
  // exits, and would crash on what the clean-up freed (the NCCL
  // interposer's allocation sweep found it). The process's memory goes
  // with it anyway.
  static const bool ready = OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) == 1 &&
                            OSSL_LIB_CTX_get0_global_default() != nullptr;
  if (!ready)
    return SPCCL_FAIL(spcclSystemError,
                      "libcrypto (OpenSSL) could not set itself up (out of memory?): this "
                      "process cannot authenticate or encrypt a connection");
  return spcclSuccess;
}

}  // namespace spccl
