#include "transports/ib/ib_mr_cache.h"

namespace spccl::ib {

bool covers(const Registration& registration, const void* data, size_t size) {
  uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  uintptr_t end = begin + (size > 0 ? size : 1);
  return registration.base <= begin && end <= registration.base + registration.length;
}

MrCache::MrCache(RegisterFn reg, DeregisterFn dereg, size_t capacity, size_t pageSize)
    : register_(std::move(reg)),
      deregister_(std::move(dereg)),
      capacity_(capacity),
      pageSize_(pageSize) {}

MrCache::~MrCache() {
  for (Registration& r : entries_) deregister_(r);
}

spcclResult_t MrCache::acquire(const void* data, size_t size, size_t pageSize, Registration** out) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (covers(*it, data, size)) {
      entries_.splice(entries_.begin(), entries_, it);  // most recently used
      ++entries_.front().refs;
      *out = &entries_.front();
      return spcclSuccess;
    }
  }
  uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  uintptr_t end = begin + (size > 0 ? size : 1);
  uintptr_t base = begin & ~(uintptr_t{pageSize} - 1);
  uintptr_t limit = (end + pageSize - 1) & ~(uintptr_t{pageSize} - 1);
  Registration fresh;
  fresh.base = base;
  fresh.length = limit - base;
  ++misses_;
  // NOLINTNEXTLINE(performance-no-int-to-ptr): the page-aligned bounds, as an address
  spcclResult_t res = register_(reinterpret_cast<void*>(base), fresh.length, &fresh);
  if (res != spcclSuccess) return res;
  fresh.refs = 1;
  entries_.push_front(fresh);
  *out = &entries_.front();
  evictUnused();
  return spcclSuccess;
}

void MrCache::release(Registration* registration) {
  if (registration != nullptr && registration->refs > 0) --registration->refs;
  evictUnused();
}

void MrCache::evictUnused() {
  for (auto it = entries_.end(); entries_.size() > capacity_ && it != entries_.begin();) {
    --it;
    if (it->refs > 0) continue;
    deregister_(*it);
    it = entries_.erase(it);
  }
}

}  // namespace spccl::ib
