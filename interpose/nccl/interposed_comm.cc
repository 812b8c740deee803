#include "interposed_comm.h"

#include <map>
#include <shared_mutex>

namespace spccl::nccl {

namespace {

struct Registry {
  std::shared_mutex mutex;
  std::map<const InterposedComm*, std::unique_ptr<InterposedComm>> comms;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: entry points may run during exit
  return *r;
}

}  // namespace

InterposedComm* findComm(ncclComm_t handle) {
  const auto* key = reinterpret_cast<const InterposedComm*>(handle);
  Registry& r = registry();
  std::shared_lock<std::shared_mutex> lock(r.mutex);
  auto it = r.comms.find(key);
  return it != r.comms.end() ? it->second.get() : nullptr;
}

InterposedComm* registerComm(std::unique_ptr<InterposedComm> comm) {
  InterposedComm* raw = comm.get();
  Registry& r = registry();
  std::unique_lock<std::shared_mutex> lock(r.mutex);
  r.comms[raw] = std::move(comm);
  return raw;
}

std::unique_ptr<InterposedComm> unregisterComm(InterposedComm* comm) {
  Registry& r = registry();
  std::unique_lock<std::shared_mutex> lock(r.mutex);
  auto it = r.comms.find(comm);
  if (it == r.comms.end()) return nullptr;
  std::unique_ptr<InterposedComm> owned = std::move(it->second);
  r.comms.erase(it);
  return owned;
}

}  // namespace spccl::nccl
