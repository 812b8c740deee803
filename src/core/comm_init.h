// Non-blocking communicator creation (NCCL 2.27's contract): with
// blocking = 0 the creating call hands out the communicator at once and
// returns spcclInProgress; the rendezvous, the connections and link
// profiling (setUpComm) run on a background thread, and
// spcclCommGetAsyncError reports spcclInProgress until they end, then
// their result. Any other call on the communicator first waits for the
// creation (awaitCommInit, with a deadline) and fails with its error if it
// failed. spcclCommAbort and spcclCommDestroy stop a creation still running
// within tens of milliseconds (cancelCommInit) and join its thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/bootstrap.h"
#include "spccl.h"

struct spcclComm;

namespace spccl {

struct CommInit {
  std::mutex mutex;
  std::condition_variable cv;
  spcclResult_t result = spcclInProgress;  // under mutex
  std::string error;                       // result's message, under mutex
  // Set by cancelCommInit: the rendezvous and connection waits end at
  // their next slice (base/clock.h, Deadline), the engine at its next
  // wake-up.
  std::atomic<bool> cancel{false};
  std::thread thread;
};

// Hands comm out through *out and sets it up on a background thread;
// returns spcclInProgress (or an error, with *out untouched, when the
// thread cannot start).
spcclResult_t startCommInit(std::unique_ptr<spcclComm> comm, const UniqueIdContents& id,
                            spcclComm_t* out);

// spcclInProgress while comm's creation runs, then its result; spcclSuccess
// for a communicator created blocking. A failure becomes comm's last error.
spcclResult_t commInitState(spcclComm_t comm);

// For a call (`call`) that needs comm set up: waits until the creation
// ended, at most a bound derived from comm's timeout, and returns its
// result; a failure names the call and the creation's reason.
spcclResult_t awaitCommInit(spcclComm_t comm, const char* call);

// Stops comm's creation if it still runs and joins its thread. Returns
// within a few tens of ms whatever the creation was waiting for.
void cancelCommInit(spcclComm& comm);

}  // namespace spccl
