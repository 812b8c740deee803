#include "coll/relay_plan.h"

#include <initializer_list>

namespace spccl {

namespace {

bool overlaps(const void* a, size_t aBytes, const void* b, size_t bBytes) {
  if (a == nullptr || b == nullptr) return false;
  const char* x = static_cast<const char*>(a);
  const char* y = static_cast<const char*>(b);
  return x < y + bBytes && y < x + aBytes;
}

}  // namespace

bool arrivalsConflict(const RelayArrival& next, const RelayArrival& current, size_t elementSize) {
  const size_t nextBytes = next.count * elementSize;
  const size_t bytes = current.count * elementSize;
  for (const void* used : {static_cast<const void*>(current.landing), current.first, current.second,
                           static_cast<const void*>(current.reduceInto), current.forward})
    if (overlaps(next.landing, nextBytes, used, bytes)) return true;
  return false;
}

}  // namespace spccl
