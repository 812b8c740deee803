// Memory registration cache. Registering memory with the HCA pins it and
// costs tens of microseconds per call, so registrations are kept and
// reused for every buffer they cover (the ABI's isend/irecv get plain
// pointers: the plugin registers on first use). Ranges are widened to whole
// pages; least recently used unreferenced entries are dropped beyond
// `capacity`. The verbs calls come in as functions, so the cache logic is
// tested without a device.
//
// Caveat, as for every user-space MR cache without memory hooks: memory
// freed and mapped again at the same address keeps the old registration
// (old pages). SPCCL_IB_MR_CACHE=0 registers per message instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>

#include "spccl.h"

namespace spccl::ib {

struct Registration {
  uintptr_t base = 0;
  size_t length = 0;
  void* mr = nullptr;  // struct ibv_mr*
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  int refs = 0;
  // Made by regMrDmaBuf: owned by its handle, never in a cache (ib_dmabuf.h).
  bool dmaBuf = false;
};

// Whether [data, data + size) lies inside the registered range (a
// zero-byte buffer counts as one byte, so it needs a registration too).
bool covers(const Registration& registration, const void* data, size_t size);

class MrCache {
 public:
  using RegisterFn = std::function<spcclResult_t(void* base, size_t length, Registration* out)>;
  using DeregisterFn = std::function<void(Registration& registration)>;

  MrCache(RegisterFn reg, DeregisterFn dereg, size_t capacity, size_t pageSize = 4096);
  ~MrCache();
  MrCache(const MrCache&) = delete;
  MrCache& operator=(const MrCache&) = delete;

  // A registration covering [data, data + size), referenced until release().
  // A new one is widened to whole pages of `pageSize` (a power of two; GPU
  // memory needs GPU pages: registrationPageBytes in ib_gdr_support.h), or
  // of the cache's page size. An existing registration that covers the
  // buffer is reused whatever page size made it.
  spcclResult_t acquire(const void* data, size_t size, Registration** out) {
    return acquire(data, size, pageSize_, out);
  }
  spcclResult_t acquire(const void* data, size_t size, size_t pageSize, Registration** out);
  void release(Registration* registration);

  size_t entries() const { return entries_.size(); }
  size_t pageSize() const { return pageSize_; }
  uint64_t misses() const { return misses_; }  // calls of RegisterFn

 private:
  void evictUnused();

  RegisterFn register_;
  DeregisterFn deregister_;
  size_t capacity_;
  size_t pageSize_;
  std::list<Registration> entries_;  // most recently used first
  uint64_t misses_ = 0;
};

}  // namespace spccl::ib
