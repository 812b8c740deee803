// spcclCommDump: the flight recorder on demand (core/flight_dump.h).
#include "api/api_guard.h"
#include "base/check.h"
#include "core/comm.h"
#include "core/flight_dump.h"
#include "spccl.h"

using namespace spccl;

extern "C" {

spcclResult_t spcclCommDump(spcclComm_t comm, const char* path) {
  return guardCommApi("spcclCommDump", comm, [&]() -> spcclResult_t {
    if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "spcclCommDump: comm is NULL");
    return finishCall(comm, dumpFlightRecorder(comm, path, "spcclCommDump"));
  });
}

}  // extern "C"
