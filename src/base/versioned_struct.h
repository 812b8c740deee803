// Reading the C API's versioned structs (spcclConfig_t, spcclSparseOptions_t,
// spcclCompression, spcclBalanceCostModel_t). Each begins with size, magic
// and version, as ncclConfig_t does, so that a binary built against an
// older, smaller struct keeps working: a field the caller's size does not
// reach keeps its default, and a struct larger than ours is read up to our
// size.
#pragma once

#include <cstddef>

#include "spccl.h"

namespace spccl {

// How the messages name the struct, word for word:
//   "<call>: <sizeName> 12 is too small; initialise <subject> with <initializer>"
//   "<call>: <magicName> 0x12345678 is wrong; initialise <subject> with <initializer>"
struct VersionedStructNames {
  const char* call;         // the API function ("config" for spcclConfig_t)
  const char* sizeName;     // "options->size"
  const char* magicName;    // "options magic"
  const char* subject;      // "the options"
  const char* initializer;  // "SPCCL_SPARSE_OPTIONS_INITIALIZER"
};

// Fails unless size >= needed; showNeeded puts the needed size, in
// parentheses, after "too small".
spcclResult_t checkVersionedSize(size_t size, size_t needed, bool showNeeded,
                                 const VersionedStructNames& names);
spcclResult_t checkVersionedMagic(unsigned int magic, unsigned int expected,
                                  const VersionedStructNames& names);

template <typename Struct>
class VersionedStruct {
 public:
  VersionedStruct(const Struct& value, const VersionedStructNames& names)
      : value_(value), names_(names) {}

  // An older struct is fine as long as it holds the header (size, magic,
  // version) and the magic is ours.
  spcclResult_t checkHeader(unsigned int expectedMagic) const {
    const spcclResult_t sized = checkVersionedSize(value_.size, kHeaderBytes, false, names_);
    return sized != spcclSuccess ? sized : checkMagic(expectedMagic);
  }

  // For structs read whole: every field must be there.
  spcclResult_t checkWhole(unsigned int expectedMagic) const {
    const spcclResult_t sized = checkVersionedSize(value_.size, sizeof(Struct), true, names_);
    return sized != spcclSuccess ? sized : checkMagic(expectedMagic);
  }

  spcclResult_t checkMagic(unsigned int expectedMagic) const {
    return checkVersionedMagic(value_.magic, expectedMagic, names_);
  }

  // Whether the caller's struct holds all of `field`:
  // options.has(&spcclSparseOptions_t::algorithm).
  template <typename Field>
  bool has(Field Struct::*field) const {
    return offsetOf(field) + sizeof(Field) <= value_.size;
  }

 private:
  static constexpr size_t kHeaderBytes = offsetof(Struct, version) + sizeof(Struct::version);

  // Measured on a struct of our own: the caller's may end before the field.
  template <typename Field>
  static size_t offsetOf(Field Struct::*field) {
    static const Struct probe{};
    return static_cast<size_t>(reinterpret_cast<const char*>(&(probe.*field)) -
                               reinterpret_cast<const char*>(&probe));
  }

  const Struct& value_;
  VersionedStructNames names_;
};

}  // namespace spccl
