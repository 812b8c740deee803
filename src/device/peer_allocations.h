// What a communicator keeps between device-resident calls
// (coll/device_all_reduce.h): the peers' allocations opened through CUDA
// IPC, by peer and handle (a rank reuses its buffers, so handles repeat
// and each is opened once, as the cuda_ipc transport's DeviceReceiver
// does), a non-blocking stream of its own for the kernels and copies, and
// the scratch its peers read an in-place all-to-all's send data from
// (peer_readable_scratch.h).
// Everything is made and closed in the CUDA context of the first call.
#pragma once

#include <array>
#include <map>
#include <utility>

#include "device/cuda_ipc.h"
#include "device/peer_access.h"
#include "device/peer_readable_scratch.h"
#include "spccl.h"

namespace spccl::device {

class PeerAllocations {
 public:
  PeerAllocations() = default;
  ~PeerAllocations();
  PeerAllocations(const PeerAllocations&) = delete;
  PeerAllocations& operator=(const PeerAllocations&) = delete;

  // The calling thread's current context becomes (or must be) this
  // object's; spcclInvalidUsage when a later call comes from another.
  spcclResult_t bindContext(const char* call);
  // The base, in this process, of peer `rank`'s allocation `handle`.
  spcclResult_t open(int rank, const CudaIpcHandle& handle, CuDevicePtr* base);
  // The stream for the kernels and copies (made on first use).
  spcclResult_t stream(CuStream* out);
  // The PCI location of the bound context's device (0: unknown or unbound).
  DeviceLocation deviceLocation() const { return location_; }
  // Used in the bound context only; freed with this object.
  PeerReadableScratch& scratch() { return scratch_; }

 private:
  // Past this many opened allocations all are closed (a job that keeps
  // allocating new buffers would otherwise map all of its peers' memory).
  static constexpr size_t kMaxOpened = 256;
  using Key = std::pair<int, std::array<unsigned char, sizeof(CudaIpcHandle)>>;
  std::map<Key, PeerDeviceMemory> opened_;
  CuContext context_ = nullptr;
  DeviceLocation location_ = 0;
  CuStream stream_ = nullptr;
  PeerReadableScratch scratch_;
};

}  // namespace spccl::device
