#include "device/retiring_peer_memory.h"

#include <utility>

namespace spccl::device {

namespace {
constexpr unsigned int kDisableTiming = 2;  // CU_EVENT_DISABLE_TIMING: a marker only
}  // namespace

void RetiringPeerMemory::destroyEvent(CuEvent event) {
  if (event != nullptr) cudaIpcDriver()->eventDestroy(event);
}

void RetiringPeerMemory::retire(PeerDeviceMemory memory, CuStream stream) {
  if (stream == nullptr) return;  // `memory` closes here: nothing of spccl's can read it
  const CudaIpcDriver* ipc = cudaIpcDriver();
  CuEvent event = nullptr;
  if (ipc->eventCreate(&event, kDisableTiming) == 0 && ipc->eventRecord(event, stream) == 0) {
    retiring_.push_back({std::move(memory), event});
    return;
  }
  destroyEvent(event);
  // No event: the stream's work, then `memory` closes here. A failed wait
  // (a faulted context) leaves nothing that could still run on it.
  (void)cudaDriver()->streamSynchronize(stream);
}

void RetiringPeerMemory::closeFinished() {
  // Anything but NOT_READY ends the wait: done, or an error after which
  // the stream runs nothing more.
  constexpr CuResult kNotReady = 600;
  std::vector<Retiring> waiting;
  for (Retiring& r : retiring_) {
    if (cudaIpcDriver()->eventQuery(r.event) == kNotReady) {
      waiting.push_back(std::move(r));
      continue;
    }
    destroyEvent(r.event);  // r.memory closes with the old list
  }
  retiring_ = std::move(waiting);
}

void RetiringPeerMemory::closeAll(CuStream stream) {
  if (retiring_.empty()) return;
  if (stream != nullptr) (void)cudaDriver()->streamSynchronize(stream);
  for (Retiring& r : retiring_) destroyEvent(r.event);
  retiring_.clear();
}

}  // namespace spccl::device
