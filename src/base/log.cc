#include "base/log.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "base/knobs.h"

namespace spccl {

namespace {

struct LogState {
  std::mutex mutex;
  bool configured = false;
  LogLevel level = LogLevel::Warn;
  unsigned subsys = kLogAll;
  FILE* file = stderr;
  char host[64] = "?";
};

LogState& state() {
  static LogState* s = new LogState();  // never destroyed: logging works during exit
  return *s;
}

std::atomic<int> gLevel{-1};  // -1: not configured yet
std::atomic<int> gFileDescriptor{2};

struct SubsysName {
  const char* name;
  unsigned bit;
};
const SubsysName kSubsysNames[] = {{"INIT", kLogInit},       {"BOOTSTRAP", kLogBootstrap},
                                   {"NET", kLogNet},         {"COLL", kLogColl},
                                   {"ENV", kLogEnv},         {"TUNE", kLogTune},
                                   {"SPARSE", kLogSparse},   {"COMPRESS", kLogCompress},
                                   {"MIGRATE", kLogMigrate}, {"ALL", kLogAll}};

unsigned parseSubsys(const std::string& spec) {
  bool exclude = !spec.empty() && spec[0] == '^';
  std::string list = exclude ? spec.substr(1) : spec;
  unsigned mask = 0;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string item =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    for (const SubsysName& s : kSubsysNames)
      if (strcasecmp(item.c_str(), s.name) == 0) mask |= s.bit;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return exclude ? ~mask : mask;
}

std::string expandFileName(const std::string& pattern, const char* host) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[++i];
      if (c == 'h')
        out += host;
      else if (c == 'p')
        out += std::to_string(getpid());
      else {
        out += '%';
        out += c;
      }
    } else {
      out += pattern[i];
    }
  }
  return out;
}

void configureLocked(LogState& s) {
  gethostname(s.host, sizeof(s.host) - 1);
  s.host[sizeof(s.host) - 1] = '\0';
  std::string level = knobString("SPCCL_DEBUG");
  if (strcasecmp(level.c_str(), "NONE") == 0)
    s.level = LogLevel::None;
  else if (strcasecmp(level.c_str(), "INFO") == 0)
    s.level = LogLevel::Info;
  else if (strcasecmp(level.c_str(), "TRACE") == 0)
    s.level = LogLevel::Trace;
  else
    s.level = LogLevel::Warn;
  s.subsys = parseSubsys(knobString("SPCCL_DEBUG_SUBSYS"));
  if (s.file != stderr && s.file != nullptr) std::fclose(s.file);
  s.file = stderr;
  std::string path = knobString("SPCCL_DEBUG_FILE");
  if (!path.empty()) {
    std::string expanded = expandFileName(path, s.host);
    FILE* f = std::fopen(expanded.c_str(), "a");
    if (f != nullptr) s.file = f;
  }
  s.configured = true;
  gFileDescriptor.store(fileno(s.file));
  gLevel.store(static_cast<int>(s.level));
}

}  // namespace

void logReconfigure() {
  LogState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  configureLocked(s);
}

int logFileDescriptor() {
  if (gLevel.load(std::memory_order_acquire) < 0) logReconfigure();
  return gFileDescriptor.load(std::memory_order_acquire);
}

bool logEnabled(LogLevel level, unsigned subsys) {
  int current = gLevel.load(std::memory_order_relaxed);
  if (current < 0) {
    logReconfigure();
    current = gLevel.load();
  }
  if (static_cast<int>(level) > current) return false;
  if (level == LogLevel::Warn) return true;
  return (state().subsys & subsys) != 0;
}

void logMessageV(LogLevel level, unsigned /*subsys*/, const char* file, int line, const char* fmt,
                 va_list args) {
  static const char* const kNames[] = {"NONE", "WARN", "INFO", "TRACE"};
  char body[2048];
  std::vsnprintf(body, sizeof(body), fmt, args);
  const char* base = std::strrchr(file, '/');
  base = base ? base + 1 : file;
  LogState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.configured) configureLocked(s);
  std::fprintf(s.file, "%s:%d:%ld spccl %s %s:%d %s\n", s.host, static_cast<int>(getpid()),
               static_cast<long>(syscall(SYS_gettid)), kNames[static_cast<int>(level)], base, line,
               body);
  std::fflush(s.file);
}

void logMessage(LogLevel level, unsigned subsys, const char* file, int line, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  logMessageV(level, subsys, file, line, fmt, args);
  va_end(args);
}

}  // namespace spccl
