// The process's one UCP context, and one UCP worker per comm. A comm's
// worker lives from its creation until the comm fails or is closed, then
// is destroyed: ucp_worker_destroy is the only way UCX 1.13 lets go of a
// receive already matched to a message whose sender stopped half-way
// (ucp_request_cancel removes only unmatched receives; a matched
// multi-fragment receive waits in the worker's fragment table for the rest
// even after the sending endpoint failed). So once a comm has reported a
// failure or been closed, UCX writes into none of the memory its receives
// were given, and keeps no connection, fd or request of it.
//
// The engine sleeps on Process::epollFd, which holds every worker's
// wake-up fd (ucp_worker_get_efd). (An epoll set that also held the
// side-channel sockets lost wake-ups over UCX's shared-memory transports:
// ops took 4 ms instead of 10 us. So the side channels are swept for EOF
// instead, at most every kSweepMs.) Every plugin entry point holds
// Process::mutex, so the workers run in UCS_THREAD_MODE_SERIALIZED and UCX
// callbacks (which fire inside ucp_worker_progress) see a consistent state.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "spccl.h"

namespace spccl::ucx {

struct Process {
  std::mutex mutex;
  ucp_context_h context = nullptr;
  uint64_t lastTag = 0;  // receive tags, a counter (unique in the process)
  // Requests completed or comms failed: what the engine must look at.
  uint64_t completions = 0;
  int timeoutMs = 60000;
  // Every live worker's wake-up fd, registered with the worker itself as
  // its data: the one fd pollFd gives the engine. With a worker per comm,
  // a comm's own fd missed what its peers' traffic did on the others (a
  // send progressing, a wire-up answered) until the engine's next timeout,
  // up to 100 ms a time.
  int epollFd = -1;
  std::vector<class CommWorker*> workers;
  std::vector<void*> comms;  // established and connecting comms, for the sweep
  int64_t lastSweepMs = 0;
};

// Null until processInit succeeded.
Process* process();
spcclResult_t processInit(int timeoutMs);

// One comm's UCP worker.
class CommWorker {
 public:
  CommWorker() = default;
  CommWorker(const CommWorker&) = delete;
  CommWorker& operator=(const CommWorker&) = delete;
  ~CommWorker() { destroy(); }

  spcclResult_t create();
  // Drops every request UCX still holds (no callback follows), every
  // endpoint and connection of the worker.
  void destroy();
  bool alive() const { return worker_ != nullptr; }
  ucp_worker_h handle() const { return worker_; }
  int wakeupFd() const { return wakeupFd_; }
  const ucp_address_t* address() const { return address_; }
  size_t addressLength() const { return addressLength_; }

  // Runs ucp_worker_progress until it reports nothing more to do (bounded).
  void progress();
  // Before the engine sleeps: arms the wake-up fd. When requests finished
  // since the caller looked (`seen`, a Process::completions value), or
  // events stay pending, the fd is signalled instead, so that the sleep
  // returns at once. Arming again with nothing progressed since costs nothing.
  void arm(uint64_t seen);

 private:
  ucp_worker_h worker_ = nullptr;
  int wakeupFd_ = -1;
  ucp_address_t* address_ = nullptr;
  size_t addressLength_ = 0;
  bool armed_ = false;  // the wake-up fd is armed and nothing was progressed since
  friend void armAll(uint64_t seen);
  friend void progressSignalled();
};

// Progresses the workers whose wake-up fd fired since they were armed.
void progressSignalled();
// Arms every worker progressed since it was last armed (CommWorker::arm).
void armAll(uint64_t seen);

constexpr int64_t kSweepMs = 10;
void addComm(void* comm);
void removeComm(void* comm);
// The registered comms when kSweepMs have passed since the last sweep, else none.
std::vector<void*> commsDueForSweep();

}  // namespace spccl::ucx
