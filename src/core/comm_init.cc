#include "core/comm_init.h"

#include <chrono>
#include <exception>
#include <new>

#include "base/check.h"
#include "core/comm.h"

namespace spccl {

namespace {

void runCommInit(spcclComm& comm, const UniqueIdContents& id, CommInit& init) {
  clearThreadLastError();
  spcclResult_t result = spcclSuccess;
  try {
    result = setUpComm(&comm, id, &init);
  } catch (const std::bad_alloc&) {
    result =
        SPCCL_FAIL(spcclSystemError, "rank %d: communicator creation ran out of memory", comm.rank);
  } catch (const std::exception& e) {
    result = SPCCL_FAIL(spcclInternalError, "rank %d: communicator creation failed: %s", comm.rank,
                        e.what());
  }
  // A cancelled wait reads as a timeout; say what really happened.
  if (result != spcclSuccess && init.cancel.load())
    result = SPCCL_FAIL(spcclRemoteError,
                        "rank %d: the communicator's creation was stopped by spcclCommAbort or "
                        "spcclCommDestroy",
                        comm.rank);
  std::lock_guard<std::mutex> lock(init.mutex);
  init.result = result;
  init.error = result == spcclSuccess ? std::string() : threadLastError();
  init.cv.notify_all();
}

// How long a call waits for a creation still running: the rendezvous, the
// connections and link profiling each have the communicator's timeout.
int64_t initWaitBoundMs(const spcclComm& comm) {
  return 3 * static_cast<int64_t>(comm.options.timeoutMs) + 1000;
}

}  // namespace

spcclResult_t startCommInit(std::unique_ptr<spcclComm> comm, const UniqueIdContents& id,
                            spcclComm_t* out) {
  auto init = std::make_shared<CommInit>();
  comm->init = init;
  spcclComm* raw = comm.get();
  // raw outlives the thread: destroyComm joins it (cancelCommInit) first.
  init->thread = std::thread([raw, id, state = init.get()] { runCommInit(*raw, id, *state); });
  *out = comm.release();
  return spcclInProgress;
}

spcclResult_t commInitState(spcclComm_t comm) {
  if (!comm->init) return spcclSuccess;
  CommInit& init = *comm->init;
  std::lock_guard<std::mutex> lock(init.mutex);
  if (init.result != spcclSuccess && init.result != spcclInProgress) comm->lastError = init.error;
  return init.result;
}

spcclResult_t awaitCommInit(spcclComm_t comm, const char* call) {
  if (comm == nullptr || !comm->init) return spcclSuccess;
  CommInit& init = *comm->init;
  std::unique_lock<std::mutex> lock(init.mutex);
  const int64_t boundMs = initWaitBoundMs(*comm);
  if (!init.cv.wait_for(lock, std::chrono::milliseconds(boundMs),
                        [&init] { return init.result != spcclInProgress; }))
    return SPCCL_FAIL(spcclTimeout,
                      "%s: rank %d's non-blocking communicator creation has not ended after "
                      "%lld ms",
                      call, comm->rank, static_cast<long long>(boundMs));
  if (init.result == spcclSuccess) return spcclSuccess;
  spcclResult_t failed = SPCCL_FAIL(init.result, "%s: the communicator's creation failed: %s", call,
                                    init.error.c_str());
  comm->lastError = threadLastError();
  return failed;
}

void cancelCommInit(spcclComm& comm) {
  CommInit& init = *comm.init;
  {
    std::lock_guard<std::mutex> lock(init.mutex);
    if (init.result == spcclInProgress) {
      init.cancel.store(true);
      // Published by setUpComm under this lock: link profiling is talking.
      if (comm.engine)
        comm.engine->requestAbort(spcclRemoteError,
                                  "the communicator was aborted during its creation");
    }
  }
  if (init.thread.joinable()) init.thread.join();
}

}  // namespace spccl
