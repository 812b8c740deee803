// CUDA IPC: device memory of one process opened by another on the same
// host (cuIpcGetMemHandle / cuIpcOpenMemHandle), and copies between device
// pointers, for a same-host transport that moves device buffers peer to
// peer instead of through pinned host memory (docs/gpu.md, "cuda_ipc").
//
// Looked up like the rest of the driver (cuda_driver.h): at run time, in a
// libcuda.so.1 the process has loaded, so nothing here links CUDA. Kept
// apart from CudaDriver so that staging works with a driver that lacks
// these entry points.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device/cuda_driver.h"
#include "spccl.h"

namespace spccl::device {

// CUipcMemHandle: 64 opaque bytes, passed by value.
struct CudaIpcHandle {
  unsigned char bytes[64];
};

using CuEvent = void*;  // CUevent

struct CudaIpcDriver {
  CuResult (*ipcGetMemHandle)(CudaIpcHandle* handle, CuDevicePtr pointer);
  CuResult (*ipcOpenMemHandle)(CuDevicePtr* pointer, CudaIpcHandle handle, unsigned int flags);
  CuResult (*ipcCloseMemHandle)(CuDevicePtr pointer);
  CuResult (*memGetAddressRange)(CuDevicePtr* base, size_t* bytes, CuDevicePtr pointer);
  // A stream of spccl's own for peer copies (flags 1: CU_STREAM_NON_BLOCKING).
  CuResult (*streamCreate)(CuStream* stream, unsigned int flags);
  CuResult (*streamDestroy)(CuStream stream);
  // Events on that stream: when the work that may read a peer's
  // allocation has finished, so that it can be closed
  // (retiring_peer_memory.h). eventQuery: 0 done, 600 (NOT_READY) not yet.
  CuResult (*eventCreate)(CuEvent* event, unsigned int flags);
  CuResult (*eventRecord)(CuEvent event, CuStream stream);
  CuResult (*eventQuery)(CuEvent event);
  CuResult (*eventDestroy)(CuEvent event);
};

// The entry points once the driver is loaded with all of them; nullptr
// before, or with a driver that has no IPC.
const CudaIpcDriver* cudaIpcDriver();

// What a peer needs to reach `bytes` of device memory at a pointer: the
// handle of the allocation holding it and the pointer's offset there.
struct ExportedDeviceRange {
  CudaIpcHandle handle;
  uint64_t offset;
  uint64_t bytes;
};
// spcclInvalidArgument when pointer is not device memory of this process
// or [pointer, +bytes) leaves its allocation; spcclSystemError when the
// driver refuses. `what` names the buffer in the error.
spcclResult_t exportDeviceRange(const void* pointer, size_t bytes, const char* what,
                                ExportedDeviceRange* out);

// A peer's allocation opened in this process; closed when destroyed.
// Opening costs a driver call that maps the memory: a transport keeps one
// per peer allocation (handles repeat while the peer reuses its buffers).
class PeerDeviceMemory {
 public:
  PeerDeviceMemory() = default;
  ~PeerDeviceMemory();
  PeerDeviceMemory(PeerDeviceMemory&& other) noexcept;
  PeerDeviceMemory& operator=(PeerDeviceMemory&& other) noexcept;
  PeerDeviceMemory(const PeerDeviceMemory&) = delete;
  PeerDeviceMemory& operator=(const PeerDeviceMemory&) = delete;

  // `peer` names the other process in the error ("rank 1", "pid 4242").
  spcclResult_t open(const CudaIpcHandle& handle, const char* peer);
  CuDevicePtr base() const { return base_; }

 private:
  void close();
  CuDevicePtr base_ = 0;
};

// Copies `bytes` from a peer's exported range (opened as `peer`) at
// `offset` to `target` (device memory, or host memory the driver reaches
// with unified addressing), in `stream`'s order.
spcclResult_t copyFromPeer(const PeerDeviceMemory& peer, uint64_t offset, void* target,
                           size_t bytes, CuStream stream);

}  // namespace spccl::device
