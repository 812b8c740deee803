#include "json_reader.h"

#include <cstdlib>
#include <string>

namespace spccl::info {

namespace {

class Parser {
 public:
  explicit Parser(std::string_view input) : input_(input) {}

  bool parseDocument(JsonValue* out, std::string* error) {
    bool ok = value(out, 0);
    skipSpace();
    if (ok && pos_ != input_.size()) ok = fail("trailing characters");
    if (!ok) *error = error_ + " at offset " + std::to_string(pos_);
    return ok;
  }

 private:
  static constexpr int kMaxDepth = 64;

  bool fail(const char* what) {
    if (error_.empty()) error_ = what;
    return false;
  }
  void skipSpace() {
    while (pos_ < input_.size() && (input_[pos_] == ' ' || input_[pos_] == '\n' ||
                                    input_[pos_] == '\r' || input_[pos_] == '\t'))
      ++pos_;
  }
  bool literal(std::string_view word) {
    if (input_.substr(pos_, word.size()) != word) return fail("unknown literal");
    pos_ += word.size();
    return true;
  }
  bool value(JsonValue* out, int depth) {
    if (depth > kMaxDepth) return fail("nested too deeply");
    skipSpace();
    if (pos_ >= input_.size()) return fail("unexpected end");
    const char c = input_[pos_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      out->kind = JsonValue::Kind::String;
      return string(&out->text);
    }
    if (c == 't' || c == 'f') {
      out->kind = JsonValue::Kind::Bool;
      out->boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      out->kind = JsonValue::Kind::Null;
      return literal("null");
    }
    return number(out);
  }
  bool number(JsonValue* out) {
    const size_t start = pos_;
    while (pos_ < input_.size() &&
           std::string_view("+-0123456789.eE").find(input_[pos_]) != std::string_view::npos)
      ++pos_;
    if (pos_ == start) return fail("unexpected character");
    const std::string text(input_.substr(start, pos_ - start));
    char* end = nullptr;
    out->kind = JsonValue::Kind::Number;
    out->number = std::strtod(text.c_str(), &end);
    if (end == nullptr || *end != '\0') return fail("bad number");
    return true;
  }
  static void appendUtf8(unsigned code, std::string* out) {
    if (code < 0x80) {
      out->push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (code >> 6)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xe0 | (code >> 12)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3f)));
    }
  }
  bool string(std::string* out) {
    ++pos_;  // the opening quote
    out->clear();
    while (pos_ < input_.size()) {
      const char c = input_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= input_.size()) break;
      const char e = input_[pos_++];
      switch (e) {
        case 'n':
          out->push_back('\n');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'u': {
          if (pos_ + 4 > input_.size()) return fail("short \\u escape");
          const std::string hex(input_.substr(pos_, 4));
          pos_ += 4;
          appendUtf8(static_cast<unsigned>(std::strtoul(hex.c_str(), nullptr, 16)), out);
          break;
        }
        default:
          out->push_back(e);  // \" \\ \/
      }
    }
    return fail("unterminated string");
  }
  bool array(JsonValue* out, int depth) {
    ++pos_;
    out->kind = JsonValue::Kind::Array;
    skipSpace();
    if (pos_ < input_.size() && input_[pos_] == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      out->items.emplace_back();
      if (!value(&out->items.back(), depth + 1)) return false;
      skipSpace();
      if (pos_ < input_.size() && input_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < input_.size() && input_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return fail("expected , or ]");
    }
  }
  bool object(JsonValue* out, int depth) {
    ++pos_;
    out->kind = JsonValue::Kind::Object;
    skipSpace();
    if (pos_ < input_.size() && input_[pos_] == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      skipSpace();
      if (pos_ >= input_.size() || input_[pos_] != '"') return fail("expected a key");
      out->keys.emplace_back();
      out->values.emplace_back();
      if (!string(&out->keys.back())) return false;
      skipSpace();
      if (pos_ >= input_.size() || input_[pos_] != ':') return fail("expected :");
      ++pos_;
      if (!value(&out->values.back(), depth + 1)) return false;
      skipSpace();
      if (pos_ < input_.size() && input_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < input_.size() && input_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return fail("expected , or }");
    }
  }

  std::string_view input_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) return &values[i];
  return nullptr;
}

double JsonValue::numberAt(std::string_view key, double fallback) const {
  const JsonValue* v = find(key);
  return v != nullptr && v->kind == Kind::Number ? v->number : fallback;
}

std::string JsonValue::textAt(std::string_view key, const std::string& fallback) const {
  const JsonValue* v = find(key);
  return v != nullptr && v->kind == Kind::String ? v->text : fallback;
}

bool parseJson(std::string_view input, JsonValue* out, std::string* error) {
  *out = JsonValue{};
  return Parser(input).parseDocument(out, error);
}

}  // namespace spccl::info
