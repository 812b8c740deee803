// Command-line values of the library's enums, read from its name functions
// (spcclSparseAlgorithmName, spcclCodecName, ...): the flags accept
// exactly the names the library logs, and a new enumerator needs no edit
// here.
#pragma once

#include <cstring>
#include <string>

namespace spccl::perf {

// The enumerator in [0, count) whose name is `text`; false when none is.
template <typename Enum>
bool parseEnumName(const char* (*nameOf)(Enum), int count, const char* text, Enum* value) {
  for (int v = 0; v < count; ++v) {
    if (std::strcmp(text, nameOf(static_cast<Enum>(v))) == 0) {
      *value = static_cast<Enum>(v);
      return true;
    }
  }
  return false;
}

// The names of [0, count), joined by `separator` ("auto/bp/hc/...").
template <typename Enum>
std::string enumNames(const char* (*nameOf)(Enum), int count, const char* separator) {
  std::string names;
  for (int v = 0; v < count; ++v) {
    if (v > 0) names += separator;
    names += nameOf(static_cast<Enum>(v));
  }
  return names;
}

// A usage line for -h: "\t[-a,--algorithm <auto/bp/hc/...>]\n".
template <typename Enum>
std::string usageLine(const char* flags, const char* (*nameOf)(Enum), int count,
                      const char* separator) {
  return std::string("\t[") + flags + " <" + enumNames(nameOf, count, separator) + ">]\n";
}

}  // namespace spccl::perf
