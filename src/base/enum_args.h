// Checking an enum argument of the C API. The caller may pass any int (C
// lets it); loading a value outside the enumerators' range through the enum
// type is undefined behaviour in C++, so the value is read through its
// bytes first.
#pragma once

#include <cstring>
#include <type_traits>

namespace spccl {

template <typename Enum>
int rawEnumValue(const Enum& value) {
  static_assert(std::is_enum_v<Enum> && sizeof(Enum) == sizeof(int));
  int raw;
  std::memcpy(&raw, &value, sizeof(raw));
  return raw;
}

// Whether the argument is one of the first `limit` enumerators.
template <typename Enum>
bool validEnum(const Enum& value, int limit) {
  const int raw = rawEnumValue(value);
  return raw >= 0 && raw < limit;
}

}  // namespace spccl
