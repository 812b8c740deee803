#include "core/flight_dump.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/check.h"
#include "base/log.h"
#include "core/comm.h"
#include "runtime/flight_recorder.h"

namespace spccl {

spcclResult_t dumpFlightRecorder(spcclComm_t comm, const char* path, const char* trigger) {
  FlightRecorder* recorder = comm->engine ? comm->engine->flightRecorder() : nullptr;
  if (recorder == nullptr)
    return SPCCL_FAIL(spcclInvalidUsage,
                      "%s: rank %d of comm 0x%016llx keeps no flight record "
                      "(SPCCL_FLIGHT_RECORDER=0 when it was created)",
                      trigger, comm->rank, static_cast<unsigned long long>(comm->commId));
  if (path == nullptr) {
    if (!recorder->dump(logFileDescriptor(), trigger, nullptr))
      return SPCCL_FAIL(spcclSystemError,
                        "%s: writing to the log (SPCCL_DEBUG_FILE or stderr) "
                        "failed: %s",
                        trigger, std::strerror(errno));
    return spcclSuccess;
  }
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return SPCCL_FAIL(spcclSystemError, "%s: path '%s' cannot be opened for writing: %s", trigger,
                      path, std::strerror(errno));
  const bool written = recorder->dump(fd, trigger, nullptr);
  const int writeErrno = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed)
    return SPCCL_FAIL(spcclSystemError, "%s: writing path '%s' failed: %s", trigger, path,
                      std::strerror(written ? errno : writeErrno));
  return spcclSuccess;
}

}  // namespace spccl
