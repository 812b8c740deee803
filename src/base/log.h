// Logging: lines "host:pid:tid spccl LEVEL file:line message", controlled by
// SPCCL_DEBUG (WARN|INFO|TRACE), SPCCL_DEBUG_SUBSYS (comma list, ^ to
// exclude) and SPCCL_DEBUG_FILE (%h host, %p pid). Warnings always print.
#pragma once

#include <cstdarg>

namespace spccl {

enum class LogLevel { None = 0, Warn = 1, Info = 2, Trace = 3 };

enum LogSubsys : unsigned {
  kLogInit = 1u << 0,
  kLogBootstrap = 1u << 1,
  kLogNet = 1u << 2,
  kLogColl = 1u << 3,
  kLogEnv = 1u << 4,
  kLogTune = 1u << 5,
  kLogSparse = 1u << 6,
  kLogCompress = 1u << 7,
  kLogMigrate = 1u << 8,
  kLogAll = ~0u,
};

bool logEnabled(LogLevel level, unsigned subsys);
void logMessage(LogLevel level, unsigned subsys, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
void logMessageV(LogLevel level, unsigned subsys, const char* file, int line, const char* fmt,
                 va_list args);
// Re-reads the SPCCL_DEBUG* variables (tests change them at run time).
void logReconfigure();
// The file descriptor the log is written to (SPCCL_DEBUG_FILE, else
// stderr's). After the first call, async-signal-safe (an atomic load).
int logFileDescriptor();

}  // namespace spccl

#define SPCCL_LOG(level, subsys, ...)                                      \
  do {                                                                     \
    if (::spccl::logEnabled(level, subsys))                                \
      ::spccl::logMessage(level, subsys, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define SPCCL_WARN(...) SPCCL_LOG(::spccl::LogLevel::Warn, ::spccl::kLogAll, __VA_ARGS__)
#define SPCCL_INFO(subsys, ...) SPCCL_LOG(::spccl::LogLevel::Info, subsys, __VA_ARGS__)
#define SPCCL_TRACE(subsys, ...) SPCCL_LOG(::spccl::LogLevel::Trace, subsys, __VA_ARGS__)
