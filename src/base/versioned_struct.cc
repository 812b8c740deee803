#include "base/versioned_struct.h"

#include <string>

#include "base/check.h"

namespace spccl {

spcclResult_t checkVersionedSize(size_t size, size_t needed, bool showNeeded,
                                 const VersionedStructNames& names) {
  if (size >= needed) return spcclSuccess;
  const std::string neededText = showNeeded ? " (" + std::to_string(needed) + ")" : "";
  return SPCCL_FAIL(spcclInvalidArgument, "%s: %s %zu is too small%s; initialise %s with %s",
                    names.call, names.sizeName, size, neededText.c_str(), names.subject,
                    names.initializer);
}

spcclResult_t checkVersionedMagic(unsigned int magic, unsigned int expected,
                                  const VersionedStructNames& names) {
  if (magic == expected) return spcclSuccess;
  return SPCCL_FAIL(spcclInvalidArgument, "%s: %s 0x%08x is wrong; initialise %s with %s",
                    names.call, names.magicName, magic, names.subject, names.initializer);
}

}  // namespace spccl
