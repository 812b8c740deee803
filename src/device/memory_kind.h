// Where a buffer lives, asked of the CUDA driver per buffer: the kind
// decides whether the CPU may touch it or spccl must stage it through
// pinned host memory (staging.h).
#pragma once

#include "device/cuda_driver.h"

namespace spccl::device {

enum class MemoryKind {
  Host,        // pageable memory the driver does not know (malloc, new, mmap)
  PinnedHost,  // page-locked host memory (cudaMallocHost, cudaHostRegister)
  Managed,     // unified memory (cudaMallocManaged): the CPU may read and write it
  Device,      // device memory (cudaMalloc, cuMemCreate): the CPU cannot touch it
};

const char* memoryKindName(MemoryKind kind);

struct BufferLocation {
  MemoryKind kind = MemoryKind::Host;
  int device = -1;              // Device, Managed, PinnedHost where known; else -1
  CuContext context = nullptr;  // the allocation's context where it has one
};

// Host for nullptr, for any pointer while the driver is not loaded, and
// for memory the driver does not know.
BufferLocation locateBuffer(const void* pointer);

inline bool cpuCanAccess(MemoryKind kind) { return kind != MemoryKind::Device; }

}  // namespace spccl::device
