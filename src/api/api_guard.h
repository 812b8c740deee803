// What every entry point of the C API runs its body through:
// - No C++ exception crosses the C boundary. The only ones spccl's code
//   can meet are std::bad_alloc (memory ran out) and, from the standard
//   library, std::system_error (a thread that cannot start) or
//   std::length_error; each becomes an error that names the call.
// - A communicator a call is using stays alive until the call has left:
//   spcclCommAbort from another thread (a watchdog's) waits for it
//   (core/comm.h, destroyComm), after asking it to stop.
#pragma once

#include <exception>
#include <new>

#include "base/check.h"
#include "spccl.h"

namespace spccl {

spcclResult_t failOutOfMemory(const char* call);
spcclResult_t failException(const char* call, const std::exception& e);

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
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return failOutOfMemory(call);
  } catch (const std::exception& e) {
    return failException(call, e);
  }
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
