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
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

#include "device/cuda_ipc.h"
#include "device/peer_access.h"
#include "device/peer_readable_scratch.h"
#include "device/retiring_peer_memory.h"
#include "spccl.h"

namespace spccl::device {

class PeerAllocations {
 public:
  // maxOpened: the bound on mapped allocations; 0 reads
  // SPCCL_DEVICE_MAX_OPENED_PEER_BUFFERS.
  explicit PeerAllocations(size_t maxOpened = 0);
  ~PeerAllocations();
  PeerAllocations(const PeerAllocations&) = delete;
  PeerAllocations& operator=(const PeerAllocations&) = delete;

  // The calling thread's current context becomes (or must be) this
  // object's; spcclInvalidUsage when a later call comes from another.
  spcclResult_t bindContext(const char* call);
  // The base, in this process, of peer `rank`'s allocation `handle`. Mapped
  // at least until the end of the call (OneCall) that opened it, and after
  // that until the work queued on stream() by then has finished.
  spcclResult_t open(int rank, const CudaIpcHandle& handle, CuDevicePtr* base);
  // The stream for the kernels and copies (made on first use).
  spcclResult_t stream(CuStream* out);
  // The PCI location of the bound context's device (0: unknown or unbound).
  DeviceLocation deviceLocation() const { return location_; }
  // Used in the bound context only; freed with this object.
  PeerReadableScratch& scratch() { return scratch_; }

  // One device-resident call, in the bound context: nothing it opens is
  // evicted before its end, where the least recently used mappings beyond
  // the bound are retired.
  class OneCall {
   public:
    explicit OneCall(PeerAllocations& peers);
    ~OneCall();
    OneCall(const OneCall&) = delete;
    OneCall& operator=(const OneCall&) = delete;

   private:
    PeerAllocations& peers_;
  };

  // Mapped and kept, and evicted but still mapped for queued work.
  size_t opened() const { return opened_.size(); }
  size_t retiring() const { return retiring_.pending(); }

 private:
  using Key = std::pair<int, std::array<unsigned char, sizeof(CudaIpcHandle)>>;
  struct Opened {
    PeerDeviceMemory memory;
    uint64_t lastUse = 0;  // a tick of uses_: the least recent is evicted first
    uint64_t call = 0;     // the call (calls_) that last used it
  };
  // Retires the least recently used mapping no running call uses; false
  // where the running call uses all of them.
  bool evictOne();
  // Down to maxOpened_ where the running call allows.
  void evictBeyondBound();

  // Past this many opened allocations the least recently used are closed
  // (a job that keeps allocating new buffers would otherwise map all of
  // its peers' memory). A call that reads more keeps them all to its end,
  // and evicted ones stay mapped (retiring_) until the work queued before
  // their eviction has run: for a while more than maxOpened_ are mapped.
  size_t maxOpened_;
  std::map<Key, Opened> opened_;
  RetiringPeerMemory retiring_;
  uint64_t uses_ = 0;
  uint64_t calls_ = 0;  // OneCall's serial
  bool callRunning_ = false;
  CuContext context_ = nullptr;
  DeviceLocation location_ = 0;
  CuStream stream_ = nullptr;
  PeerReadableScratch scratch_;
};

}  // namespace spccl::device
