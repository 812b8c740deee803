#include "unique_id.h"

#include <cstdint>
#include <cstring>

#include "core/bootstrap.h"

namespace spccl::nccl {

namespace {

constexpr uint32_t kTag = 0x434e5053u;  // "SPNC"
constexpr uint32_t kLayoutVersion = 1;
constexpr size_t kHeaderBytes = 8;  // tag, layout version
// spccl writes its id's contents at the start and zeroes the rest.
constexpr size_t kSpcclBytes = sizeof(UniqueIdContents);
static_assert(kHeaderBytes + kSpcclBytes <= NCCL_UNIQUE_ID_BYTES);
static_assert(SPCCL_UNIQUE_ID_BYTES == NCCL_UNIQUE_ID_BYTES);

}  // namespace

ncclUniqueId packUniqueId(const spcclUniqueId& id) {
  ncclUniqueId packed;
  std::memset(&packed, 0, sizeof(packed));
  std::memcpy(packed.internal, &kTag, sizeof(kTag));
  std::memcpy(packed.internal + sizeof(kTag), &kLayoutVersion, sizeof(kLayoutVersion));
  std::memcpy(packed.internal + kHeaderBytes, id.internal, kSpcclBytes);
  return packed;
}

bool unpackUniqueId(const ncclUniqueId& id, spcclUniqueId* out) {
  uint32_t tag = 0, version = 0;
  std::memcpy(&tag, id.internal, sizeof(tag));
  std::memcpy(&version, id.internal + sizeof(tag), sizeof(version));
  if (tag != kTag || version != kLayoutVersion) return false;
  std::memset(out, 0, sizeof(*out));
  std::memcpy(out->internal, id.internal + kHeaderBytes, kSpcclBytes);
  return true;
}

}  // namespace spccl::nccl
