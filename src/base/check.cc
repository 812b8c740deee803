#include "base/check.h"

#include <cstdarg>
#include <cstdio>

namespace spccl {

static thread_local std::string tlsLastError;
static thread_local bool tlsQuiet = false;

QuietFailures::QuietFailures() : previous_(tlsQuiet), savedError_(tlsLastError) { tlsQuiet = true; }
QuietFailures::~QuietFailures() {
  tlsQuiet = previous_;
  tlsLastError = savedError_;
}

void setThreadLastError(const std::string& message) { tlsLastError = message; }

spcclResult_t failWith(spcclResult_t code, const char* file, int line, const char* fmt, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  tlsLastError = buffer;
  LogLevel level = tlsQuiet ? LogLevel::Info : LogLevel::Warn;
  if (logEnabled(level, kLogAll))
    logMessage(level, kLogAll, file, line, "%s (%s)", buffer, spcclGetErrorString(code));
  return code;
}

const std::string& threadLastError() { return tlsLastError; }
void clearThreadLastError() { tlsLastError.clear(); }

}  // namespace spccl
