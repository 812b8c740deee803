// An ncclComm_t of this library: the spccl communicator that serves it
// and, in forward mode, the real NCCL communicator beside it. Handles are
// registered, so that an ncclComm_t that is not one of them (a real NCCL
// communicator reaching an entry point from inside the real NCCL, NULL, a
// stale pointer) is recognised without being read. A call reaches a
// communicator only through a lease (comm_lease.h), which keeps it alive
// until the call has returned.
#pragma once

#include <nccl.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "call_report.h"
#include "comm_lease.h"
#include "errors.h"
#include "premul_sum.h"
#include "spccl.h"

namespace spccl::nccl {

// ncclCommRegister / ncclCommWindowRegister in replace mode: spccl reads
// host memory directly, so there is nothing to register; the handle only
// has to be known until it is deregistered.
struct Registration {
  void* buffer = nullptr;
  size_t size = 0;
};

struct InterposedComm {
  spcclComm_t spccl = nullptr;
  ncclComm_t real = nullptr;  // forward mode
  int rank = 0;
  int nranks = 1;
  int cudaDevice = -1;
  uint64_t id = 0;   // spccl's communicator id: the same on every rank (the report's key)
  std::string name;  // ncclConfig_t::commName, when given

  std::atomic<bool> revoked{false};          // ncclCommRevoke was called on this rank
  std::atomic<bool> finalized{false};        // ncclCommFinalize was called
  std::atomic<int> asyncError{ncclSuccess};  // sticky: a peer failed or went away

  std::mutex mutex;                      // guards what follows
  char lastError[kLastErrorBytes] = "";  // plain chars: errors.cc
  bool lastErrorFromSpccl = false;
  std::map<const void*, std::unique_ptr<Registration>> registrations;  // by handle

  PreMulSumOps preMulSumOps;  // replace mode
  CallReport report;
  InFlightCalls calls;  // the leases out (comm_lease.h)
};

// A lease on the registered communicator behind handle; empty for
// anything else, and for one that is being destroyed.
CommLease leaseComm(ncclComm_t handle);
inline ncclComm_t handleOf(const InterposedComm* comm) {
  return reinterpret_cast<ncclComm_t>(const_cast<InterposedComm*>(comm));
}

// Shares ownership and makes the handle known to leaseComm.
ncclComm_t registerComm(std::shared_ptr<InterposedComm> comm);
// Forgets the handle and hands the communicator back (nullptr if unknown:
// never registered, or already taken by a destroy on another thread).
std::shared_ptr<InterposedComm> unregisterComm(ncclComm_t handle);

}  // namespace spccl::nccl
