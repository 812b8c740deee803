#include "core/setup_departures.h"

#include <poll.h>

#include <cstring>

#include "base/check.h"

namespace spccl {

namespace {

// tcp and shm keep one stream socket per connection for its whole life,
// and a peer sends nothing that ends it before the engine closes it: a
// hang-up on it during setup is the peer leaving. Other transports' poll
// fds (ucx's setup side channel, for one) may close normally.
bool socketPerConnection(const spcclNet_v2_t* net) {
  return std::strcmp(net->name, "tcp") == 0 || std::strcmp(net->name, "shm") == 0;
}

}  // namespace

spcclResult_t checkSetupDepartures(int myRank, const std::vector<PeerConnection>& peers,
                                   const std::vector<SetupConnection>& connections) {
  std::vector<pollfd> fds;
  std::vector<const SetupConnection*> polled;
  for (const SetupConnection& c : connections) {
    if (c.comm == nullptr || !socketPerConnection(c.net)) continue;
    int fd = -1;
    short events = 0;
    if (c.net->pollFd(c.comm, &fd, &events) != spcclSuccess || fd < 0) continue;
    // POLLRDHUP: the peer's FIN or reset, not data (a TLS peer may send
    // records on a connection at any time).
    fds.push_back({fd, POLLRDHUP, 0});
    polled.push_back(&c);
  }
  if (fds.empty() || ::poll(fds.data(), fds.size(), 0) <= 0) return spcclSuccess;
  for (size_t i = 0; i < fds.size(); ++i) {
    if ((fds[i].revents & (POLLRDHUP | POLLHUP)) == 0) continue;
    const SetupConnection& c = *polled[i];
    std::string lane = c.lane == ~0u ? "its control connection" : "lane " + std::to_string(c.lane);
    return SPCCL_FAIL(spcclRemoteError,
                      "rank %d: %s closed %s during connection setup: it died, or its own "
                      "creation failed",
                      myRank, peers[c.peer].name.c_str(), lane.c_str());
  }
  return spcclSuccess;
}

}  // namespace spccl
