// Reads and writes one element of any spccl data type as a double, so the
// checking code is written once instead of once per type. Every value the
// perf inputs use is a small integer, exact in every type (bfloat16 holds
// integers up to 256 exactly, half up to 2048).
#pragma once

#include <cstddef>

#include "spccl.h"

namespace spccl::perf {

struct ElementCodec {
  double (*load)(const void* buffer, size_t index);
  // Integers wrap modulo their width and floats round to nearest, as a
  // reduction computed in that type would.
  void (*store)(void* buffer, size_t index, double value);
  // Unit roundoff of the type; 0 for integers.
  double epsilon;
};

// nullptr for an invalid type.
const ElementCodec* elementCodecFor(spcclDataType_t type);

// Value stored in the type and read back: what an exact result looks like
// once it has been written to a buffer of that type.
double representable(const ElementCodec& codec, double value);

}  // namespace spccl::perf
