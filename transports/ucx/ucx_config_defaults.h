// What the ucx plugin changes in UCX's configuration before ucp_init, and
// when. A UCX_* variable the user set always wins.
//
// Over TCP alone (UCX_TLS names tcp and nothing else but self), UCX's
// rendezvous protocol moves no byte without a copy, yet costs every large
// message an RTS/RTR round trip and the wake-ups that go with it; each
// 1 MiB slice of a ring waits for them. Measured on the 1 Gbit/s netns
// testbed, 64 MiB dense all-reduce (docs/transports.md): n = 2, 1.186 s with
// rendezvous against 0.678 s eager (tcp: 0.643 s); n = 8, 1.16-1.26 s
// against 0.97-1.00 s (tcp: 0.98-0.99 s). With shared memory or RDMA in
// UCX_TLS the rendezvous is zero-copy and stays.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace spccl::ucx {

struct ConfigChange {
  std::string name;  // as ucp_config_modify takes it: without "UCX_"
  std::string value;
  std::string why;  // for the INFO line
};

// True when `tls` (UCX_TLS) lists tcp and otherwise only self: no "^"
// exclusion, no other transport, no alias such as "all".
bool tlsIsTcpOnly(const char* tls);

// The changes for this environment; getenv-like lookup of UCX_* variables.
std::vector<ConfigChange> configChanges(const char* (*lookup)(const char* name));

}  // namespace spccl::ucx
