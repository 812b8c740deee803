// The process's one UCP context and worker, shared by every ucx comm. The
// engine sleeps on the worker's wake-up fd (ucp_worker_get_efd) for every
// established comm. (Wrapping that fd in an epoll set of our own, together
// with the side-channel sockets, lost wake-ups over UCX's shared-memory
// transports: ops took 4 ms instead of 10 us. So the side channels are
// swept for EOF instead, at most every kSweepMs.) Every plugin entry point
// holds Worker::mutex, so the worker runs in UCS_THREAD_MODE_SERIALIZED and
// UCX callbacks (which fire inside ucp_worker_progress) see a consistent
// state.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "spccl.h"

namespace spccl::ucx {

struct Worker {
  std::mutex mutex;
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  int wakeupFd = -1;  // ucp_worker_get_efd
  ucp_address_t* address = nullptr;
  size_t addressLength = 0;
  uint64_t lastTag = 0;  // receive tags are unique per worker: a counter
  // Requests completed or comms failed: what the engine must look at.
  uint64_t completions = 0;
  // The wake-up fd is armed and nothing was progressed since.
  bool armed = false;
  int timeoutMs = 60000;
  std::vector<void*> comms;  // established and connecting comms, for the sweep
  int64_t lastSweepMs = 0;
};

// Null until workerInit succeeded.
Worker* worker();
spcclResult_t workerInit(int timeoutMs);

// Runs ucp_worker_progress until it reports nothing more to do (bounded).
void progressWorker();
// Before the engine sleeps: arms the wake-up fd. When requests finished
// since the caller looked (`seen`, a Worker::completions value), or events
// stay pending, the fd is signalled instead, so that the sleep returns at
// once. Arming again with nothing progressed since costs nothing.
void armWorker(uint64_t seen);

constexpr int64_t kSweepMs = 10;
void addComm(void* comm);
void removeComm(void* comm);
// The registered comms when kSweepMs have passed since the last sweep, else none.
std::vector<void*> commsDueForSweep();

}  // namespace spccl::ucx
