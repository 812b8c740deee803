// Tiny collectives spccl runs for itself (link profiling, split,
// agreement on statistics), written directly on the engine so they work
// before and beneath the dense algorithms. Not for user data: O(n) messages.
#pragma once

#include <cstddef>

#include "runtime/engine.h"

namespace spccl {

// all[r * bytes ...] gets rank r's `mine`; all must hold nranks * bytes.
spcclResult_t internalAllGather(Engine& engine, const void* mine, size_t bytes, void* all);

}  // namespace spccl
