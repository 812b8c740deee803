// A small JSON reader for the tools (spccl_info --dump reads the flight
// recorder's dumps): the whole grammar, numbers as double, no streaming.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace spccl::info {

struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string text;
  std::vector<JsonValue> items;  // Array
  // Object, in order: keys[i] names values[i] (a vector of pairs would
  // hold an incomplete type).
  std::vector<std::string> keys;
  std::vector<JsonValue> values;

  // The member `key` of an object, or nullptr.
  const JsonValue* find(std::string_view key) const;
  // Conveniences for an object's members, with a fallback when absent or
  // of another kind.
  double numberAt(std::string_view key, double fallback = 0) const;
  std::string textAt(std::string_view key, const std::string& fallback = "") const;
};

// Parses `input` (one JSON value, whitespace around it allowed). On
// failure returns false with *error saying where.
bool parseJson(std::string_view input, JsonValue* out, std::string* error);

}  // namespace spccl::info
