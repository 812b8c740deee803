// migrate_perf's collectives, on its host vectors or, with --device, on
// device copies of them (common/device_memory.h): each call's operands are
// uploaded before it and its results downloaded after it, around a call on
// the binary's one stream, all inside the timed iteration. The layer's GEMMs
// stay on the host, so --device times the migration calls of device
// buffers (docs/gpu.md, "Migration calls of device buffers") plus those
// copies, not a layer on a GPU. Every call returns the spccl result.
#pragma once

#include <spccl.h>

#include <array>
#include <cstddef>
#include <vector>

#include "common/device_memory.h"

namespace spccl::perf {

class MigrationCalls {
 public:
  // device: the session's (PerfSession(true) made it current before the
  // communicator, so the device path can join); nullptr: host buffers.
  MigrationCalls(spcclComm_t comm, int rank, DeviceMemory* device);
  ~MigrationCalls();
  MigrationCalls(const MigrationCalls&) = delete;
  MigrationCalls& operator=(const MigrationCalls&) = delete;

  spcclResult_t broadcast(std::vector<float>& buff, int straggler);
  // spcclImigrateBroadcast: the buffer must stay untouched until finish.
  spcclResult_t startBroadcast(std::vector<float>& buff, int straggler, spcclRequest_t* request);
  spcclResult_t finishBroadcast(std::vector<float>& buff, int straggler, spcclRequest_t request);
  // spcclMigrateReduce in place, the sum at dest.
  spcclResult_t reduce(std::vector<float>& buff, int dest);
  spcclResult_t allReduce(const std::vector<float>& send, std::vector<float>& recv);
  // spcclMigrateAllReduce, sum, the migrated part at offset 0.
  spcclResult_t mergedAllReduce(const std::vector<float>& send, std::vector<float>& recv,
                                const std::vector<float>& migrated, size_t migratedCount);
  // Blocks of `count`; root's send (scatter) / recv (gather) holds nranks of them.
  spcclResult_t scatter(const std::vector<float>& send, std::vector<float>& recv, size_t count,
                        int root);
  spcclResult_t gather(const std::vector<float>& send, std::vector<float>& recv, size_t count,
                       int root);

 private:
  enum Slot { kFirst, kSecond, kMigrated, kSlots };
  // Device slot `slot`, grown to hold `elements` (kept between calls, so
  // the peers' IPC mappings are reused), with `from` uploaded if non-null.
  float* slot(Slot slot, size_t elements, const std::vector<float>* from = nullptr);
  // The call's stream drained (the next upload may reuse its slots), then
  // on success `elements` of `slot` into `to` where `into` (else nothing).
  spcclResult_t finish(spcclResult_t result, Slot slot, std::vector<float>& to, size_t elements,
                       bool into);

  spcclComm_t comm_;
  int rank_;
  DeviceMemory* device_;
  std::array<float*, kSlots> slots_{};
  std::array<size_t, kSlots> capacity_{};
};

}  // namespace spccl::perf
