// The staged path as the reference of the device-path tests
// (test_device_migrate.cc, test_device_scatter_gather.cc): a second
// communicator of the same ranks over tcp, which never joins the device
// path, so its calls run as before (on host buffers, the CPU schedules).
#pragma once

#include <unistd.h>

#include "../common/fork_ranks.h"
#include "spccl.h"

namespace spccl::testing {

// Collective over `comm` (rank 0 makes the id and broadcasts it).
inline spcclComm_t stagedComm(spcclComm_t comm, int rank, int n) {
  spcclUniqueId id;
  if (rank == 0 && spcclGetUniqueId(&id) != spcclSuccess) _exit(kChildInitFailed);
  if (spcclBroadcast(&id, &id, sizeof(id), spcclUint8, 0, comm, nullptr) != spcclSuccess)
    _exit(kChildInitFailed);
  spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
  config.profileLinks = 0;
  config.timeoutMs = 20000;
  config.transport = "tcp";
  spcclComm_t staged = nullptr;
  if (spcclCommInitRankConfig(&staged, n, id, rank, &config) != spcclSuccess)
    _exit(kChildInitFailed);
  return staged;
}

}  // namespace spccl::testing
