// The unique id (src/core/bootstrap.h): 128 bytes the application carries
// from rank 0 to the others (MPI, a file, the NCCL interposer's channel);
// spcclCommInitRank decodes whatever it is handed. Input: the id's bytes.
#include <string>

#include "base/socket.h"
#include "core/bootstrap.h"
#include "fuzz_support.h"

using namespace spccl;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const spcclUniqueId id = in.take<spcclUniqueId>();
  UniqueIdContents contents;
  if (decodeUniqueId(id, &contents) != spcclSuccess) return 0;
  SPCCL_FUZZ_CHECK(contents.magic == kUniqueIdMagic && contents.version == kUniqueIdVersion);
  SPCCL_FUZZ_CHECK(contents.secret.size <= kSecretMaxBytes);
  // What createComm does with the root before connecting: name it.
  const std::string root = net::toString(contents.root);
  SPCCL_FUZZ_CHECK(!root.empty());
  (void)net::hostString(contents.root);
  SPCCL_FUZZ_CHECK(net::sockAddrLen(contents.root) <= sizeof(net::SockAddr));
  // The secret's text form round-trips (spccl_info, spcclrun).
  if (contents.secret.size >= kSecretMinBytes) {
    JobSecret again;
    SPCCL_FUZZ_CHECK(parseJobSecret(formatJobSecret(contents.secret), "id", &again) ==
                     spcclSuccess);
    SPCCL_FUZZ_CHECK(again.size == contents.secret.size &&
                     std::memcmp(again.bytes.data(), contents.secret.bytes.data(), again.size) ==
                         0);
  }
  // decode -> encode gives back the id's bytes that carry the contents.
  const spcclUniqueId encoded = encodeUniqueId(contents);
  SPCCL_FUZZ_CHECK(std::memcmp(encoded.internal, id.internal, sizeof(UniqueIdContents)) == 0);
  UniqueIdContents again;
  SPCCL_FUZZ_CHECK(decodeUniqueId(encoded, &again) == spcclSuccess);
  SPCCL_FUZZ_CHECK(std::memcmp(&again, &contents, sizeof(contents)) == 0);
  return 0;
}
