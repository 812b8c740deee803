// One rank's communicator for the length of a perf run, and the few
// cross-rank reductions the harness itself needs (slowest rank, wrong
// counts). A perf binary has nothing to recover to, so a failed spccl call
// ends the process, after aborting the communicator so that the other
// ranks fail at once instead of waiting for their deadlines.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "spccl.h"

namespace spccl::perf {

class DeviceMemory;

// Exit status of a run that hit a usage or spccl error.
constexpr int kExitError = 2;

class PerfSession {
 public:
  // spcclCommInitFromEnv: rank, size and rendezvous from spcclrun (or the
  // other launchers spccl knows).
  // deviceBuffers (--device): first makes the launcher's rank's CUDA device
  // current, as an NCCL program sets its device before creating its
  // communicator (spccl notes it then: spcclCommCuDevice, and the
  // device-resident all-reduce needs it on every rank).
  explicit PerfSession(bool deviceBuffers = false);
  ~PerfSession();
  PerfSession(const PerfSession&) = delete;
  PerfSession& operator=(const PerfSession&) = delete;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  spcclComm_t comm() const { return comm_; }
  // The device buffers' driver and stream; nullptr without --device.
  DeviceMemory* device() const { return device_.get(); }

  // Returns only on success; `what` names the call for the message.
  void require(spcclResult_t result, const char* what) const;
  [[noreturn]] void fail(const std::string& message) const;

  // Element-wise maximum over all ranks, in place.
  void maxOverRanks(std::vector<double>* values) const;
  double maxOverRanks(double value) const;
  // Element-wise sum over all ranks, in place.
  void sumOverRanks(std::vector<double>* values) const;
  void barrier() const;
  spcclCounters_t counters() const;
  // "#  Rank  0 Pid  1234 on hostname" for every rank, in rank order.
  std::vector<std::string> rankDescriptions() const;

 private:
  std::unique_ptr<DeviceMemory> device_;  // outlives comm_ (destroyed after it)
  spcclComm_t comm_ = nullptr;
  int rank_ = 0;
  int nranks_ = 1;
};

}  // namespace spccl::perf
