// An ncclComm_t of this library: the spccl communicator that serves it
// and, in forward mode, the real NCCL communicator beside it. Handles are
// registered, so that an ncclComm_t that is not one of them (a real NCCL
// communicator reaching an entry point from inside the real NCCL, NULL, a
// stale pointer) is recognised without being read.
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

  std::atomic<bool> revoked{false};
  std::atomic<int> asyncError{ncclSuccess};  // sticky: a peer failed or went away

  std::mutex mutex;  // guards what follows
  std::string lastError;
  bool lastErrorFromSpccl = false;
  std::map<const void*, std::unique_ptr<Registration>> registrations;  // by handle

  PreMulSumOps preMulSumOps;  // replace mode
  CallReport report;
};

// The registered communicator behind handle; nullptr for anything else.
InterposedComm* findComm(ncclComm_t handle);
inline ncclComm_t handleOf(InterposedComm* comm) { return reinterpret_cast<ncclComm_t>(comm); }

// Takes ownership and makes the handle known to findComm.
InterposedComm* registerComm(std::unique_ptr<InterposedComm> comm);
// Forgets the handle and hands the communicator back (nullptr if unknown).
std::unique_ptr<InterposedComm> unregisterComm(InterposedComm* comm);

}  // namespace spccl::nccl
