#include "core/setup_departures.h"

#include <poll.h>

#include <algorithm>
#include <cstring>

#include "base/check.h"
#include "base/clock.h"
#include "runtime/frame.h"

namespace spccl {

namespace {

// A departing peer wrote its reason before it closed: it is in this rank's
// socket buffer already, or arrives within a round trip.
constexpr int64_t kReasonWaitMs = 50;
// How long a failing rank gives its reasons to leave (kernel buffers take
// them at once unless a link is down).
constexpr int64_t kReasonFlushMs = 100;
constexpr unsigned kControlLane = ~0u;

// tcp and shm keep one stream socket per connection for its whole life,
// and a peer sends nothing that ends it before the engine closes it: a
// hang-up on it during setup is the peer leaving. Other transports' poll
// fds (ucx's setup side channel, for one) may close normally.
bool socketPerConnection(const spcclNet_v2_t* net) {
  return std::strcmp(net->name, "tcp") == 0 || std::strcmp(net->name, "shm") == 0;
}

}  // namespace

std::string departureReason(const PeerConnection& conn, uint64_t commId) {
  if (conn.net == nullptr || conn.control.recvComm == nullptr) return "";
  alignas(8) unsigned char buffer[sizeof(FrameHeader) + kMaxAbortText];
  void* request = nullptr;
  if (conn.net->irecv(conn.control.recvComm, buffer, sizeof(buffer), nullptr, &request) !=
      spcclSuccess)
    return "";
  Deadline wait(kReasonWaitMs);
  int done = 0;
  size_t size = 0;
  while (conn.net->test(request, &done, &size) == spcclSuccess && !done && !wait.expired()) {
    int fd = -1;
    short events = 0;
    if (conn.net->pollFd(conn.control.recvComm, &fd, &events) == spcclSuccess && fd >= 0) {
      pollfd pfd{fd, POLLIN, 0};
      ::poll(&pfd, 1, 5);
    }
  }
  // Not done: the request stays posted; closing the comm releases it.
  if (!done || size < sizeof(FrameHeader)) return "";
  FrameHeader header;
  std::memcpy(&header, buffer, sizeof(header));
  if (header.magic != kFrameMagic || header.version != kFrameVersion ||
      header.kind != static_cast<uint16_t>(FrameKind::Abort) || header.commId != commId ||
      header.length > kMaxAbortText || size != sizeof(FrameHeader) + header.length)
    return "";
  return std::string(reinterpret_cast<const char*>(buffer) + sizeof(header), header.length);
}

void tellPeersWhy(int myRank, uint64_t commId, spcclResult_t code, const std::string& why,
                  const std::vector<SetupConnection>& connections) {
  std::string text = "rank " + std::to_string(myRank) + " left connection setup: " + why;
  if (text.size() > kMaxAbortText) text.resize(kMaxAbortText);
  std::vector<unsigned char> frame(sizeof(FrameHeader) + text.size());
  FrameHeader header;
  header.kind = static_cast<uint16_t>(FrameKind::Abort);
  header.commId = commId;
  header.srcRank = myRank;
  header.length = text.size();
  header.result = static_cast<uint32_t>(code);
  std::memcpy(frame.data(), &header, sizeof(header));
  std::memcpy(frame.data() + sizeof(header), text.data(), text.size());
  struct Sent {
    const spcclNet_v2_t* net;
    void* request;
  };
  std::vector<Sent> sent;
  for (const SetupConnection& c : connections) {
    if (!c.send || c.lane != kControlLane || c.comm == nullptr) continue;
    void* request = nullptr;
    if (c.net->isend(c.comm, frame.data(), frame.size(), nullptr, &request) == spcclSuccess)
      sent.push_back({c.net, request});
  }
  Deadline flush(kReasonFlushMs);
  while (!sent.empty() && !flush.expired()) {
    std::erase_if(sent, [](const Sent& s) {
      int done = 0;
      size_t size = 0;
      return s.net->test(s.request, &done, &size) != spcclSuccess || done;
    });
    if (!sent.empty()) ::poll(nullptr, 0, 1);
  }
}

spcclResult_t checkSetupDepartures(int myRank, uint64_t commId,
                                   const std::vector<PeerConnection>& peers,
                                   const std::vector<SetupConnection>& connections) {
  std::vector<pollfd> fds;
  std::vector<const SetupConnection*> polled;
  for (const SetupConnection& c : connections) {
    if (c.comm == nullptr || !socketPerConnection(c.net)) continue;
    int fd = -1;
    short events = 0;
    if (c.net->pollFd(c.comm, &fd, &events) != spcclSuccess || fd < 0) continue;
    // POLLRDHUP: the peer's FIN or reset, not data (a TLS peer may send
    // records on a connection at any time, a departing one its reason).
    fds.push_back({fd, POLLRDHUP, 0});
    polled.push_back(&c);
  }
  if (fds.empty() || ::poll(fds.data(), fds.size(), 0) <= 0) return spcclSuccess;
  for (size_t i = 0; i < fds.size(); ++i) {
    if ((fds[i].revents & (POLLRDHUP | POLLHUP)) == 0) continue;
    const SetupConnection& c = *polled[i];
    std::string lane =
        c.lane == kControlLane ? "its control connection" : "lane " + std::to_string(c.lane);
    std::string reason = departureReason(peers[c.peer], commId);
    return SPCCL_FAIL(spcclRemoteError, "rank %d: %s closed %s during connection setup: %s", myRank,
                      peers[c.peer].name.c_str(), lane.c_str(),
                      reason.empty() ? "it died, or its own creation failed" : reason.c_str());
  }
  return spcclSuccess;
}

}  // namespace spccl
