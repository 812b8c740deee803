// Observability for tests: which data path the receive side of this
// process took, and a switch that makes it behave as if process_vm_readv
// were forbidden (as under a strict Yama ptrace_scope or seccomp policy)
// so the streaming fallback can be exercised on any machine.
#pragma once

#include <cstdint>

namespace spccl::transport {

struct ShmReceiveStats {
  uint64_t inlineMessages = 0;    // carried through the socket
  uint64_t remoteReads = 0;       // copied with process_vm_readv
  uint64_t streamedFallback = 0;  // streamed after the remote read was refused
  uint64_t deviceCopies = 0;      // cuda_ipc: copied from the sender's device memory
};

ShmReceiveStats shmReceiveStats();
void shmRefuseRemoteReadsForTesting(bool refuse);

}  // namespace spccl::transport
