// What every entry point of the C API runs its body through:
// - No C++ exception crosses the C boundary (base/c_boundary.h): each
//   becomes an error that names the call.
// - A communicator a call is using stays alive until the call has left:
//   spcclCommAbort from another thread (a watchdog's) waits for it
//   (core/comm.h, destroyComm), after asking it to stop.
#pragma once

#include "base/c_boundary.h"
#include "base/check.h"
#include "spccl.h"

namespace spccl {

// A C++ exception the call met (c_boundary.h), as its error naming call.
spcclResult_t failCaught(const char* call, bool outOfMemory, const char* what);

// comm's calls in flight, +1 for the guard's life.
class CommCallScope {
 public:
  explicit CommCallScope(spcclComm_t comm);
  ~CommCallScope();
  CommCallScope(const CommCallScope&) = delete;
  CommCallScope& operator=(const CommCallScope&) = delete;

 private:
  spcclComm_t comm_;
};

template <typename Body>
spcclResult_t guardApi(const char* call, Body&& body) noexcept {
  return catchAtCBoundary(body, [call](bool outOfMemory, const char* what) {
    return failCaught(call, outOfMemory, what);
  });
}

// A call that only reads what the communicator knew from its creating
// call (rank, size, device) or reports its state: it runs while a
// non-blocking creation is still under way (core/comm_init.h).
template <typename Body>
spcclResult_t guardCommQuery(const char* call, spcclComm_t comm, Body&& body) noexcept {
  return guardApi(call, [&]() -> spcclResult_t {
    CommCallScope inFlight(comm);
    return body();
  });
}

// Waits for a non-blocking creation of comm to end (its deadline bounds
// the wait) and fails with its error if it failed; spcclSuccess otherwise.
spcclResult_t commReadyFor(spcclComm_t comm, const char* call);

// Every other call on a communicator: as guardCommQuery, once the
// communicator's creation ended (a non-blocking one may still run).
template <typename Body>
spcclResult_t guardCommApi(const char* call, spcclComm_t comm, Body&& body) noexcept {
  return guardApi(call, [&]() -> spcclResult_t {
    CommCallScope inFlight(comm);
    SPCCL_CHECK(commReadyFor(comm, call));
    return body();
  });
}

}  // namespace spccl
