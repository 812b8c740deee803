// Where a buffer lives and what a stream means, while spccl serves host
// memory only. The GPU work replaces this file.
//
// The CUDA driver is never a link dependency (the library must load where
// there is no NVIDIA driver): a program that holds device memory or a
// stream has loaded libcuda.so.1 already, so the driver is looked up with
// RTLD_NOLOAD, and while it is absent every buffer is host memory and no
// stream has work to wait for.
#pragma once

#include <cuda.h>
#include <nccl.h>

#include <string>

namespace spccl::nccl {

enum class MemoryKind {
  Host,    // pageable, pinned or managed: the CPU can read it
  Device,  // device memory the CPU cannot read
};

MemoryKind memoryKindOf(const void* buffer);

// Waits until the work queued on stream before this call is done (a host
// buffer that a kernel fills), so that spccl, which runs at once, reads
// what the program meant. Nothing to do without the driver or for a NULL
// stream. Returns false with *error when the driver refuses.
bool finishStreamWork(cudaStream_t stream, std::string* error);

// The device of the calling thread's CUDA context; -1 without one.
int currentCudaDevice();

}  // namespace spccl::nccl
