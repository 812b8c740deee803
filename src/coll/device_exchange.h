// What every device-resident collective shares (docs/gpu.md,
// "Device-resident collectives"), around its own schedule of kernels and
// copies (coll/device_all_reduce.h, coll/device_collectives.h):
// 1. the ranks exchange CUDA IPC handles of the buffers the schedule reads
//    from its peers, and agree that every rank can take the path;
// 2. the schedule runs on the communicator's own stream, between barriers
//    (deviceBarrier) that carry each rank's status, so that a failure on
//    one rank fails the call on every rank at once;
// 3. where some rank cannot take the path (host buffers, no IPC, a buffer
//    it cannot export, buffers on another device than the communicator's
//    at creation, ranks of one process on different devices), every rank
//    falls back in the same call: a rank with device buffers copies them
//    through host memory and the CPU collective runs.
#pragma once

#include <cstddef>
#include <vector>

#include "coll/device_call.h"
#include "device/cuda_driver.h"
#include "device/peer_allocations.h"
#include "runtime/coll_context.h"
#include "spccl.h"

namespace spccl {

// DeviceOffer::device of a rank that touches no memory in the call (an
// all-to-allv rank with no blocks): on no device, and reachable from all.
constexpr uint64_t kIdleDevice = 0;

// What one rank tells the others before the data moves.
struct DeviceOffer {
  int32_t usable = 0;    // this rank can take the device path
  int32_t failure = 0;   // spcclResult_t: this rank cannot run the call at all
  uint64_t process = 0;  // ranks of one process use each other's pointers
  uint64_t device = 0;   // device::DeviceLocation of the buffers (usable only)
  uint64_t sendPointer = 0, recvPointer = 0;
  device::ExportedDeviceRange send{};
  device::ExportedDeviceRange recv{};
};

// Every rank's buffers as this process reaches them, once every rank
// agreed: opened through IPC on first use (and kept by PeerAllocations),
// this process's own pointers as they are.
class DeviceBuffers {
 public:
  DeviceBuffers(const std::vector<DeviceOffer>& offers, device::PeerAllocations& peers)
      : offers_(offers), peers_(peers) {}
  // Rank r's sendbuff; only where r passes one (not a broadcast's non-root).
  spcclResult_t send(int rank, device::CuDevicePtr* out) const;
  // Rank r's recvbuff; a peer's only where the schedule asked for them
  // (DeviceSchedule::peersReadRecv).
  spcclResult_t recv(int rank, device::CuDevicePtr* out) const;
  // The communicator's stream for the kernels and copies (made on first use).
  spcclResult_t stream(device::CuStream* out) const { return peers_.stream(out); }
  // The communicator's device scratch, at least `bytes` as the call
  // reserved it (reserveDeviceScratch); an error naming the call `name`
  // where it is smaller.
  spcclResult_t scratch(size_t bytes, const char* name, device::CuDevicePtr* out) const;

 private:
  const std::vector<DeviceOffer>& offers_;
  device::PeerAllocations& peers_;
};

// One collective's part of the path: what it reads from its peers and its
// kernels and copies, which end with a barrier (deviceBarrier) after
// which the peers' buffers are free again.
struct DeviceSchedule {
  bool peersReadRecv = false;  // reads the peers' receive buffers (the all-reduce's gather)
  spcclResult_t (*run)(CollContext& ctx, const DeviceCall& call,
                       const DeviceBuffers& buffers) = nullptr;
};

// The call on ctx: the agreement, then schedule.run or the fallback.
// *onDevices: whether the ranks took the device path.
spcclResult_t runDeviceResident(CollContext& ctx, const DeviceCall& call,
                                device::PeerAllocations& peers, const DeviceSchedule& schedule,
                                bool* onDevices);

// Every rank's part (`mine`) went well, or the call fails on every rank:
// the failing rank with its own error, the others naming it and `step`.
spcclResult_t deviceBarrier(CollContext& ctx, const DeviceCall& call, const char* step,
                            spcclResult_t mine);

// The device scratch of an in-place all-to-all(v) of device buffers (its
// send data is copied there: copyToScratch in device_exchange.cc) or of an
// in-place reduction whose own input a later launch reads
// (coll/device_in_place_input.h), reserved on the API caller's thread with
// the buffers' context current, since cuMemAlloc may wait for the device
// and the body runs while the call holds a stream. Nothing for other
// calls. A failure leaves the call to fall back.
spcclResult_t reserveDeviceScratch(const DeviceCall& call, int nranks, int rank,
                                   device::PeerAllocations& peers);

// The stream's work done, or the driver's error naming `what`.
spcclResult_t synchronizeDeviceStream(device::CuStream stream, const char* name, const char* what);

// The end of a step that queued copies on `stream`: waits for them even
// where queueing one failed (`queued`), since those queued before it read
// the peers' buffers and write the user's, which after the barrier are the
// peers' and the user's again. The first error: `queued`, else the wait's.
// A null stream (none was had) is not waited for.
spcclResult_t finishQueuedCopies(spcclResult_t queued, device::CuStream stream, const char* name,
                                 const char* what);

// cuMemcpyAsync on stream, or the driver's error naming `what`.
spcclResult_t copyOnStream(device::CuDevicePtr to, device::CuDevicePtr from, size_t bytes,
                           device::CuStream stream, const char* name, const char* what);

}  // namespace spccl
