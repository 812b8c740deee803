// Results and messages: spccl's results in NCCL's numbers, the strings of
// ncclGetErrorString when spccl serves the calls, and the last-error
// messages of ncclGetLastError (per communicator and per thread).
#pragma once

#include <nccl.h>

#include <cstddef>

#include "spccl.h"

namespace spccl::nccl {

struct InterposedComm;

// The longest last-error message kept (with its NUL), per thread and per
// communicator; longer ones are cut.
constexpr size_t kLastErrorBytes = 1024;

// By meaning: spccl's values are NCCL's minus one from SystemError on (NCCL
// has ncclUnhandledCudaError at 1). spcclTimeout becomes ncclTimeout where
// nccl.h has it, else ncclRemoteError (a peer that did not answer in time).
ncclResult_t toNcclResult(spcclResult_t result);

// ncclGetErrorString when no real NCCL answers it.
const char* spcclErrorString(ncclResult_t result);

// A failure found by the interposer itself: the message becomes this
// thread's last error (and comm's, when given) and is logged at WARN
// (where the log can be set up). Allocates nothing itself, so that an
// out-of-memory failure can be reported too. Returns code.
ncclResult_t fail(InterposedComm* comm, ncclResult_t code, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// After a spccl call on comm returned result: a failure's message (spccl's
// last error of comm) becomes the thread's and comm's last error. Returns
// the result in NCCL's numbers.
ncclResult_t finishSpccl(InterposedComm* comm, spcclResult_t result);

// Whether this thread's latest failure came from spccl or the interposer
// (rather than from the real NCCL), and its message.
bool threadFailedInSpccl();
const char* threadLastError();
// A call forwarded to the real NCCL failed: its own last error speaks now.
void noteRealFailure();

}  // namespace spccl::nccl
