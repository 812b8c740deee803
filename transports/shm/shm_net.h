// The built-in shm transport for peers on the same host: an AF_UNIX stream
// socket in the abstract namespace carries small messages inline and, for
// large ones, a descriptor from which the receiver copies the sender's
// memory directly with process_vm_readv (one copy, no shared segment).
#pragma once

#include "spccl_net.h"

extern "C" const spcclNet_v2_t* spcclNetShm();

// cuda_ipc: the shm transport whose messages may also lie in CUDA device
// memory; those go peer to peer through CUDA IPC (shm_device.h), not
// through the socket or process_vm_readv. SPCCL_TRANSPORT=cuda_ipc, one
// host only.
extern "C" const spcclNet_v2_t* spcclNetCudaIpc();
