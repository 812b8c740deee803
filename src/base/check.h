// Errors: every failure carries a message with its context (argument,
// rank, peer, sequence number). The message is kept per thread and copied
// into the communicator at the API boundary (spcclGetLastError(comm)).
#pragma once

#include <string>

#include "spccl.h"

namespace spccl {

// Formats the message, stores it as this thread's last error, logs it at
// WARN with the call site, and returns code.
spcclResult_t failWith(spcclResult_t code, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

// A copy: the storage is the thread's and changes with its next failure.
std::string threadLastError();
// The same text in place, valid until this thread's next failure or clear
// (spcclGetLastError(NULL) hands it to the caller).
const char* threadLastErrorText();

// Replaces this thread's last error message without logging.
void setThreadLastError(const std::string& message);

// While alive, failures on this thread log at INFO instead of WARN and
// leave the thread's last error as it was: for best-effort work whose
// failures are expected (telling peers goodbye or that we abort).
class QuietFailures {
 public:
  QuietFailures();
  ~QuietFailures();
  QuietFailures(const QuietFailures&) = delete;
  QuietFailures& operator=(const QuietFailures&) = delete;

 private:
  bool previous_;
  std::string savedError_;
};
void clearThreadLastError();

}  // namespace spccl

// Fail with a formatted message: return SPCCL_FAIL(spcclInvalidArgument, "count ...");
#define SPCCL_FAIL(code, ...) ::spccl::failWith(code, __FILE__, __LINE__, __VA_ARGS__)

// Propagate a failure upwards; the first failure already stored its message.
#define SPCCL_CHECK(call)                                                                        \
  do {                                                                                           \
    spcclResult_t spccl_check_res_ = (call);                                                     \
    if (spccl_check_res_ != spcclSuccess) {                                                      \
      SPCCL_TRACE(::spccl::kLogAll, "%s failed: %d", #call, static_cast<int>(spccl_check_res_)); \
      return spccl_check_res_;                                                                   \
    }                                                                                            \
  } while (0)

// For system calls: on -1 fail with spcclSystemError and strerror(errno).
#define SPCCL_SYSCHECK(call, what)                                                                 \
  do {                                                                                             \
    if ((call) == -1) return SPCCL_FAIL(spcclSystemError, "%s failed: %s", what, strerror(errno)); \
  } while (0)

#include <cerrno>
#include <cstring>

#include "base/log.h"
