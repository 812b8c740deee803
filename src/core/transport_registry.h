// Finds transports by name: tcp, shm and cuda_ipc are built in, anything else is a
// plugin "libspccl-net-<name>.so" exporting spcclNetPlugin_v2 (or _v1,
// adapted to one device: core/net_v1_adapter.h). Each is
// initialised once per process. A transport whose init fails (a plugin
// without its device) is an error that carries the plugin's reason; it is
// never replaced by another transport.
#pragma once

#include <string>

#include "spccl_net.h"

namespace spccl {

spcclResult_t getTransport(const std::string& name, const spcclNet_v2_t** out);

}  // namespace spccl
