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

// Device memory (cudaMalloc, cuMemCreate), which the CPU cannot touch;
// false for nullptr.
inline bool isDeviceMemory(const void* pointer) {
  return pointer != nullptr && locateBuffer(pointer).kind == MemoryKind::Device;
}

// Device memory of device ordinal `device`: a kernel of that device's
// context may touch it without peer access (spccl enables none), which
// memory of another device needs.
bool isDeviceMemoryOf(const void* pointer, int device);

// Device memory, but not of `device`: a device path must not pass it to a
// kernel of `device`'s context.
inline bool onAnotherDevice(const void* pointer, int device) {
  const BufferLocation location = locateBuffer(pointer);
  return location.kind == MemoryKind::Device && location.device != device;
}

inline bool cpuCanAccess(MemoryKind kind) { return kind != MemoryKind::Device; }

}  // namespace spccl::device
