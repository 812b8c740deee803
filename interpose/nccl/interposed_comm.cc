#include "interposed_comm.h"

#include <map>
#include <shared_mutex>

namespace spccl::nccl {

namespace {

struct Registry {
  std::shared_mutex mutex;
  std::map<const InterposedComm*, std::shared_ptr<InterposedComm>> comms;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: entry points may run during exit
  return *r;
}

}  // namespace

CommLease leaseComm(ncclComm_t handle) {
  const auto* key = reinterpret_cast<const InterposedComm*>(handle);
  Registry& r = registry();
  std::shared_ptr<InterposedComm> comm;
  {
    std::shared_lock<std::shared_mutex> lock(r.mutex);
    auto it = r.comms.find(key);
    if (it == r.comms.end()) return CommLease();
    comm = it->second;
  }
  // Closed in between (a destroy took it): empty, as if unknown.
  return CommLease(std::move(comm));
}

ncclComm_t registerComm(std::shared_ptr<InterposedComm> comm) {
  const InterposedComm* raw = comm.get();
  Registry& r = registry();
  std::unique_lock<std::shared_mutex> lock(r.mutex);
  r.comms[raw] = std::move(comm);
  return handleOf(raw);
}

std::shared_ptr<InterposedComm> unregisterComm(ncclComm_t handle) {
  const auto* key = reinterpret_cast<const InterposedComm*>(handle);
  Registry& r = registry();
  std::unique_lock<std::shared_mutex> lock(r.mutex);
  auto it = r.comms.find(key);
  if (it == r.comms.end()) return nullptr;
  std::shared_ptr<InterposedComm> owned = std::move(it->second);
  r.comms.erase(it);
  return owned;
}

}  // namespace spccl::nccl
