// Error text from plugins. A plugin keeps its error messages in its own
// copy of the core's per-thread last error (libspccl exports only the C
// API), so the engine's messages would end in an empty cause ("sending to
// rank 1 failed: "). A plugin that also exports
//   extern "C" const char* spcclNetPluginLastError_v1(void);
// (optional, outside the versioned table) gets its table wrapped: when one
// of its calls fails, the wrapper copies that text into libspccl's last
// error, where the engine reads it.
#pragma once

#include "spccl_net.h"

namespace spccl {

constexpr const char* kPluginLastErrorSymbol = "spcclNetPluginLastError_v1";
using PluginLastErrorFn = const char* (*)();

// The wrapped table, or `table` itself when no wrapper slot is left.
const spcclNet_v2_t* withPluginErrorText(const spcclNet_v2_t* table, PluginLastErrorFn lastError);

}  // namespace spccl
