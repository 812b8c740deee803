#include "base/check.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace spccl {

namespace {

// A thread's last error, in storage that needs no allocation and no
// destructor: a thread_local std::string registers a destructor with glibc
// at its first use, and glibc aborts the process when that registration
// runs out of memory (tests/faults/alloc_failure.sh found it).
struct LastError {
  char text[4096];
  size_t length;
};
thread_local LastError tlsLastError;
thread_local bool tlsQuiet = false;

void storeLastError(const char* text, size_t length) {
  length = std::min(length, sizeof(tlsLastError.text) - 1);
  std::memcpy(tlsLastError.text, text, length);
  tlsLastError.text[length] = '\0';
  tlsLastError.length = length;
}

}  // namespace

QuietFailures::QuietFailures() : previous_(tlsQuiet), savedError_(threadLastError()) {
  tlsQuiet = true;
}
QuietFailures::~QuietFailures() {
  tlsQuiet = previous_;
  storeLastError(savedError_.data(), savedError_.size());
}

void setThreadLastError(const std::string& message) {
  storeLastError(message.data(), message.size());
}

spcclResult_t failWith(spcclResult_t code, const char* file, int line, const char* fmt, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  storeLastError(buffer, std::strlen(buffer));
  LogLevel level = tlsQuiet ? LogLevel::Info : LogLevel::Warn;
  if (logEnabled(level, kLogAll))
    logMessage(level, kLogAll, file, line, "%s (%s)", buffer, spcclGetErrorString(code));
  return code;
}

std::string threadLastError() { return std::string(tlsLastError.text, tlsLastError.length); }
const char* threadLastErrorText() {
  tlsLastError.text[tlsLastError.length] = '\0';
  return tlsLastError.text;
}
void clearThreadLastError() { tlsLastError.length = 0; }

}  // namespace spccl
