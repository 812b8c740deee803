// libcrypto's (OpenSSL's) one-time global set-up, done and checked before
// spccl's first other use of it (the handshake's HMAC and SHA-256, the TLS
// sessions). OpenSSL 3.0 does it lazily at the first use, and where an
// allocation fails inside it, later uses dereference the lock it could not
// make (a segfault in EVP_MD_fetch; tests/faults/alloc_failure.sh found
// it). Done here, its failure is seen once, and the process then makes no
// libcrypto call (which would crash) but fails each call that needs one.
#pragma once

#include "spccl.h"

namespace spccl {

// spcclSuccess once libcrypto is set up; else spcclSystemError, every time.
spcclResult_t libcryptoReady();

}  // namespace spccl
