// Where a buffer lives, and the few CUDA driver calls the interposer makes
// itself (stream synchronisation, copies, the current context, device
// allocations).
//
// The CUDA driver is never a link dependency (the library must load where
// there is no NVIDIA driver): src/device/cuda_driver.h finds it at run time
// (RTLD_NOLOAD), and while it is absent every buffer is host memory and no
// stream has work to wait for.
#pragma once

#include <cuda.h>
#include <nccl.h>

#include <cstddef>
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

// The calling thread's current CUDA context (a CUcontext); nullptr without
// the driver or a context. makeContextCurrent(ctx) makes it current on the
// calling thread (nothing for nullptr): the interposer's own threads (a
// group's end runs each communicator's calls on one) act for the thread
// that issued the calls.
void* currentCudaContext();
void makeCudaContextCurrent(void* context);

// bytes from src to dst in the order of stream: cuMemcpyAsync where the
// driver is loaded and a buffer is device memory or stream is not NULL
// (unified addressing: any pair of host and device pointers), memmove
// otherwise. Returns false with *error when the driver refuses.
bool copyOnStream(void* dst, const void* src, size_t bytes, cudaStream_t stream,
                  std::string* error);

// Device memory of the current context (cuMemAlloc), for ncclMemAlloc where
// a CUDA context is current. false with *error when there is none or the
// driver refuses.
bool allocateDeviceMemory(void** ptr, size_t bytes, std::string* error);
bool freeDeviceMemory(void* ptr, std::string* error);

}  // namespace spccl::nccl
