#include "transports/ucx/ucx_config_defaults.h"

#include <sstream>

namespace spccl::ucx {

bool tlsIsTcpOnly(const char* tls) {
  if (tls == nullptr || tls[0] == '\0' || tls[0] == '^') return false;
  std::stringstream list(tls);
  std::string entry;
  bool tcp = false;
  while (std::getline(list, entry, ',')) {
    if (entry == "tcp")
      tcp = true;
    else if (entry != "self")
      return false;
  }
  return tcp;
}

std::vector<ConfigChange> configChanges(const char* (*lookup)(const char* name)) {
  std::vector<ConfigChange> changes;
  const char* threshold = lookup("UCX_RNDV_THRESH");
  if ((threshold == nullptr || threshold[0] == '\0') && tlsIsTcpOnly(lookup("UCX_TLS")))
    changes.push_back({"RNDV_THRESH", "inf",
                       "UCX_TLS is TCP only: eager for every size, since rendezvous over TCP "
                       "copies all the same and adds a round trip per message (set "
                       "UCX_RNDV_THRESH to choose otherwise)"});
  return changes;
}

}  // namespace spccl::ucx
