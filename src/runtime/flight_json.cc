#include "runtime/flight_json.h"

#include <unistd.h>

#include <cerrno>

namespace spccl {

void FlightJsonWriter::put(char c) {
  if (used_ == capacity_) flush();
  if (failed_) return;
  buffer_[used_++] = c;
}

bool FlightJsonWriter::flush() {
  size_t done = 0;
  while (!failed_ && done < used_) {
    ssize_t n = ::write(fd_, buffer_ + done, used_ - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed_ = true;
      break;
    }
    done += static_cast<size_t>(n);
  }
  used_ = 0;
  return !failed_;
}

void FlightJsonWriter::raw(const char* text) {
  for (; *text != '\0'; ++text) put(*text);
}

void FlightJsonWriter::string(const char* text) {
  if (text == nullptr) {
    raw("null");
    return;
  }
  static const char kHex[] = "0123456789abcdef";
  put('"');
  for (; *text != '\0'; ++text) {
    const auto c = static_cast<unsigned char>(*text);
    if (c == '"' || c == '\\') {
      put('\\');
      put(static_cast<char>(c));
    } else if (c == '\n') {
      raw("\\n");
    } else if (c < 0x20) {
      raw("\\u00");
      put(kHex[c >> 4]);
      put(kHex[c & 15]);
    } else {
      put(static_cast<char>(c));
    }
  }
  put('"');
}

void FlightJsonWriter::unsignedNumber(uint64_t value) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (n > 0) put(digits[--n]);
}

void FlightJsonWriter::signedNumber(int64_t value) {
  if (value < 0) {
    put('-');
    unsignedNumber(0 - static_cast<uint64_t>(value));
  } else {
    unsignedNumber(static_cast<uint64_t>(value));
  }
}

void FlightJsonWriter::key(const char* name, bool first) {
  if (!first) put(',');
  string(name);
  put(':');
}

void FlightJsonWriter::hex64(uint64_t value) {
  static const char kHex[] = "0123456789abcdef";
  raw("\"0x");
  for (int shift = 60; shift >= 0; shift -= 4) put(kHex[(value >> shift) & 15]);
  put('"');
}

}  // namespace spccl
