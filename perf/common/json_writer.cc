#include "common/json_writer.h"

#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace spccl::perf {

void JsonWriter::beforeValue() {
  if (afterKey_) {
    afterKey_ = false;
    return;
  }
  if (!hasElement_.empty()) {
    if (hasElement_.back()) text_ += ',';
    hasElement_.back() = true;
  }
}

void JsonWriter::beginObject() {
  beforeValue();
  text_ += '{';
  hasElement_.push_back(false);
}

void JsonWriter::endObject() {
  hasElement_.pop_back();
  text_ += '}';
}

void JsonWriter::beginArray() {
  beforeValue();
  text_ += '[';
  hasElement_.push_back(false);
}

void JsonWriter::endArray() {
  hasElement_.pop_back();
  text_ += ']';
}

JsonWriter& JsonWriter::key(std::string_view name) {
  beforeValue();
  appendString(name);
  text_ += ':';
  afterKey_ = true;
  return *this;
}

void JsonWriter::value(std::string_view text) {
  beforeValue();
  appendString(text);
}

void JsonWriter::value(double number) {
  beforeValue();
  if (!std::isfinite(number)) {
    text_ += "null";
    return;
  }
  // Shortest text that reads back as the same double.
  char buffer[32];
  const std::to_chars_result written = std::to_chars(buffer, buffer + sizeof(buffer), number);
  text_.append(buffer, written.ptr);
}

void JsonWriter::value(int64_t number) {
  beforeValue();
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%" PRId64, number);
  text_ += buffer;
}

void JsonWriter::value(uint64_t number) {
  beforeValue();
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%" PRIu64, number);
  text_ += buffer;
}

void JsonWriter::value(bool flag) {
  beforeValue();
  text_ += flag ? "true" : "false";
}

void JsonWriter::value(std::nullptr_t) {
  beforeValue();
  text_ += "null";
}

void JsonWriter::appendString(std::string_view text) {
  text_ += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        text_ += "\\\"";
        break;
      case '\\':
        text_ += "\\\\";
        break;
      case '\n':
        text_ += "\\n";
        break;
      case '\t':
        text_ += "\\t";
        break;
      case '\r':
        text_ += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
          text_ += escaped;
        } else {
          text_ += c;
        }
    }
  }
  text_ += '"';
}

}  // namespace spccl::perf
