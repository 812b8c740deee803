#include "core/check.h"

#include <cstdarg>
#include <cstdio>

namespace spccl {

static thread_local std::string tlsLastError;

spcclResult_t failWith(spcclResult_t code, const char* file, int line, const char* fmt, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  tlsLastError = buffer;
  if (logEnabled(LogLevel::Warn, kLogAll))
    logMessage(LogLevel::Warn, kLogAll, file, line, "%s (%s)", buffer, spcclGetErrorString(code));
  return code;
}

const std::string& threadLastError() { return tlsLastError; }
void clearThreadLastError() { tlsLastError.clear(); }

}  // namespace spccl
