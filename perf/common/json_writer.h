// A minimal streaming JSON writer: enough for the perf results, with
// correct string escaping and non-finite numbers written as null.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spccl::perf {

class JsonWriter {
 public:
  void beginObject();
  void endObject();
  void beginArray();
  void endArray();
  // Inside an object, each value follows a key.
  JsonWriter& key(std::string_view name);
  void value(std::string_view text);
  void value(const char* text) { value(std::string_view(text)); }
  void value(double number);
  void value(int64_t number);
  void value(uint64_t number);
  void value(int number) { value(static_cast<int64_t>(number)); }
  void value(bool flag);
  void value(std::nullptr_t);

  const std::string& text() const { return text_; }

 private:
  void beforeValue();
  void appendString(std::string_view text);

  std::string text_;
  // Per open container: whether it has an element yet.
  std::vector<bool> hasElement_;
  bool afterKey_ = false;
};

}  // namespace spccl::perf
