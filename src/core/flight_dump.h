// Where a communicator's flight recorder (runtime/flight_recorder.h) is
// written when the API asks: spcclCommDump and spcclCommAbort.
#pragma once

#include "spccl.h"

namespace spccl {

// Writes comm's dump to path (created or truncated), or with path nullptr
// to the log's file (SPCCL_DEBUG_FILE, else stderr). trigger names why
// ("spcclCommDump", "spcclCommAbort"). spcclInvalidUsage when the recorder
// is off; spcclSystemError naming the path when it cannot be written.
spcclResult_t dumpFlightRecorder(spcclComm_t comm, const char* path, const char* trigger);

}  // namespace spccl
